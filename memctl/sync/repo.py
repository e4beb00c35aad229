"""The local clone of the sync repository, through GitPython: clone, recover after a
crash, fetch, rebase, list and read files by blob (never through the work tree), write
files without following symlinks, commit and push.

Every network command runs with prompts off and a time limit (``sync.git_timeout``),
so cron never hangs on a password prompt or a dead host.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.config.files import DIR_MODE, private_dir
from memctl.config.urls import shown_url
from memctl.errors import StoreError, SyncError
from memctl.sync.layout import MEMORIES
from memctl.sync.lock import outside_umask
from memctl.sync.untrusted import path_problem, shown

if TYPE_CHECKING:
    import git

ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
SSH = "ssh -o BatchMode=yes -o ConnectTimeout=20"
FALLBACK_NAME, FALLBACK_EMAIL = "memctl", "memctl@{host}.invalid"
# A push refused because the remote moved meanwhile (fetch and retry): another push won
# the race ("[rejected] ... (fetch first)", a ref another push held locked). Any other
# refusal ("[remote rejected] ... (branch is currently checked out)", a hook's) says why.
RACES = (
    "[rejected]",
    "non-fast-forward",
    "fetch first",
    "cannot lock ref",
    "failed to lock",
    "failed to update ref",
    "but expected",
)
PATHS_AT_ONCE = 1000  # paths on one git command line (well under the OS's argument limit)
# A killed sync's git child lives on and finishes its write of the index (well under a
# second for thousands of files); an index.lock older than this was left by a dead git.
INDEX_LOCK_SECONDS = 10.0
# The clone's own files whatever the umask (git-config(1), core.sharedRepository "0xxx"):
# a push runs under the user's umask for the remote's sake, and git then writes the
# clone's remote-tracking ref and its log with it (a walk's `memctl doctor` failed "modes")
CLONE_MODE = "0600"
NULL_COMMIT = "0" * 40  # git's id of no object (git-rev-parse(1))


def require_git() -> None:
    """A one-line error when git is not installed (GitPython needs the git program)."""
    program = os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or "git"
    if shutil.which(program) is None:
        raise SyncError("memctl sync needs git, which is not installed (or not on PATH)")


def clone_errors() -> tuple[type[Exception], ...]:
    """What a git operation on the clone may raise: git's own errors (GitPython's), a
    SyncError (no git, no clone), an OSError."""
    try:
        return (_git().exc.GitError, SyncError, OSError)
    except SyncError:  # no git: nothing but these
        return (SyncError, OSError)


def _git() -> Any:
    require_git()
    try:
        import git
    except ImportError as exc:  # GitPython refuses to load without a working git
        raise SyncError(f"memctl sync cannot run git: {exc}".splitlines()[0]) from None
    return git


# What git says when it cannot write for want of space.
DISK_FULL = ("no space left on device", "out of diskspace", "disk quota exceeded")


@contextmanager
def git_errors(root: Path) -> Iterator[None]:
    """A git command that fails inside (any but those its caller handles) as one line: a
    full disk said as such (StoreError), anything else a SyncError naming git's reason."""
    try:
        yield
    except Exception as exc:
        if not isinstance(exc, _git().exc.GitCommandError):
            raise
        line = one_line(exc)
        if any(words in line.lower() for words in DISK_FULL):
            full = f"disk full: no space left on the disk holding {root}: {line}"
            raise StoreError(full) from None
        raise SyncError(f"git failed in {root}: {line}") from None


def _env() -> dict[str, str]:
    return {**ENV, "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", SSH)}


def refusal(porcelain: str) -> str:
    """The reason of a refused ref in ``git push --porcelain``'s output ("!<TAB>from:to<TAB>
    [remote rejected] (why)"), or ''."""
    for line in porcelain.splitlines():
        fields = line.strip().removeprefix("stdout:").strip().strip("'").split("\t")
        if len(fields) == 3 and fields[0] == "!":
            return fields[2]
    return ""


def one_line(error: Exception) -> str:
    """The telling line of a failed git command's output."""
    text = str(getattr(error, "stderr", "") or error)
    lines = [
        ln.strip().removeprefix("stderr:").strip().strip("'").strip()
        for ln in text.splitlines()
        if ln.strip()
    ]
    for line in lines:
        if line.startswith(("fatal:", "error:", "remote:")):
            return line
    return lines[-1] if lines else type(error).__name__


def unreachable(remote: str, timeout: float) -> str | None:
    """Why ``git ls-remote`` cannot read the remote (one line), or None when it can."""
    try:
        git = _git()
        runner = git.Git()
        runner.update_environment(**_env())
        runner.ls_remote("--quiet", "--", remote, kill_after_timeout=timeout)
    except SyncError as exc:
        return str(exc)
    except Exception as exc:  # GitCommandError, a timeout: git's telling line
        return f"cannot reach {shown_url(remote)}: {one_line(exc)}"
    return None


@dataclass(frozen=True)
class Entry:
    """One file of a commit's tree."""

    mode: str
    type: str
    blob: str
    size: int
    path: str  # bytes that are not UTF-8 shown as ``\\xff``
    utf8: bool = True

    @property
    def symlink(self) -> bool:
        return self.mode == "120000"


def normal_remote(remote: str) -> str:
    """A local path as an absolute one (so the config works from any directory)."""
    path = Path(remote).expanduser()
    if "://" not in remote and ":" not in remote.split("/")[0] and path.exists():
        return str(path.resolve())
    return remote


class Clone:
    """memctl's clone of the sync repository, in the data directory."""

    def __init__(self, repo: git.Repo, timeout: float) -> None:
        self.repo = repo
        self.root = Path(repo.working_tree_dir or ".")
        self.timeout = timeout
        self.dropped: list[tuple[str, str]] = []  # paths ``checkable`` left out, and why
        repo.git.update_environment(**_env())

    @classmethod
    def open(cls, path: Path, timeout: float) -> Clone:
        git = _git()
        try:
            return cls(git.Repo(path), timeout)
        except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError):
            raise SyncError(f"{path} is not a git clone; run `memctl sync init REMOTE`") from None

    @classmethod
    def clone(cls, remote: str, path: Path, timeout: float) -> Clone:
        git = _git()
        path = path.absolute()
        private_dir(path.parent)
        partial = path.with_name(path.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        runner = git.Git(str(path.parent))
        runner.update_environment(**_env())
        try:
            runner.clone(  # a local remote's files copied, not linked: their modes are ours
                "--quiet",
                "--no-checkout",
                "--no-hardlinks",
                "--",
                remote,
                str(partial),
                kill_after_timeout=timeout,
            )
        except git.exc.GitCommandError as exc:
            shutil.rmtree(partial, ignore_errors=True)
            raise SyncError(f"cannot clone {shown_url(remote)}: {one_line(exc)}") from None
        os.chmod(partial, DIR_MODE)  # git made it 0777 minus the umask: the memories are private
        partial.rename(path)
        clone = cls.open(path, timeout)
        if clone.has("HEAD"):
            clone.repo.git.reset("--hard", "--quiet", clone.checkable("HEAD"))
        return clone

    def close(self) -> None:
        """Stop git's helper processes (the object reader) now rather than at exit."""
        self.repo.close()

    @property
    def origin_url(self) -> str:
        return str(self.repo.remotes.origin.url) if self.repo.remotes else ""

    @cached_property
    def branch(self) -> str:
        """The branch this clone is on: memctl never switches it, so git is asked once
        (a sync named it about nine times, a git process each)."""
        return str(self.repo.git.symbolic_ref("--short", "HEAD"))

    @property
    def upstream(self) -> str:
        return f"origin/{self.branch}"

    def has(self, ref: str) -> bool:
        return self.resolve(ref) is not None

    def _errors(self) -> type[Exception]:
        return _git().exc.GitCommandError  # type: ignore[no-any-return]

    def recover(self) -> None:
        """Undo whatever a killed sync left: a lock file, a rebase, uncommitted files."""
        git_dir = Path(self.repo.git_dir)
        _wait_for_orphan(git_dir / "index.lock")
        for leftover in ("rebase-merge", "rebase-apply"):
            if (git_dir / leftover).exists():
                try:
                    self.repo.git.rebase("--abort")
                except self._errors():
                    shutil.rmtree(git_dir / leftover, ignore_errors=True)
        if self.has("HEAD"):
            self.repo.git.reset("--hard", "--quiet", "HEAD")
        self.repo.git.clean("-fdq")

    def fetch(self) -> None:
        try:
            self.repo.git.fetch("--quiet", "--prune", "origin", kill_after_timeout=self.timeout)
        except self._errors() as exc:
            raise SyncError(f"cannot reach {self.origin_url}: {one_line(exc)}") from None

    def integrate(self) -> bool:
        """Put this clone's own commits on top of the remote's; False when they could not
        be (a file of ours edited on the remote) and were dropped: the export makes them
        again from the database."""
        if not self.has(self.upstream):
            return True
        head = self.has("HEAD")
        base = self.checkable(self.upstream, "HEAD" if head else None)
        if not head:
            self.repo.git.reset("--hard", "--quiet", base)
            return True
        try:
            self.repo.git.rebase("--quiet", base)
            return True
        except self._errors():
            try:
                self.repo.git.rebase("--abort")
            except self._errors():
                pass
            self.repo.git.reset("--hard", "--quiet", base)
            return False

    def checkable(self, ref: str, since: str | None = None) -> str:
        """``ref``, or, when its tree holds paths git refuses to check out (``..``,
        ``.git``: pushed with git's plumbing, they would fail every pull), a commit on top
        of it without them, which this clone's next push sends. The paths dropped are
        kept in ``dropped`` (shown, why). ``since``: a commit checked out already, so
        that only the paths whose entries differ from it need a look."""
        keep: dict[bytes, bytes] = {}
        self.dropped = []
        if since is not None:
            out = self.repo.git.diff_tree(
                "-r", "-z", "--no-renames", "--name-only", since, ref, stdout_as_string=False
            )
            if not any(path_problem(path) for path in out.split(b"\0") if path):
                return ref
        for path, meta in self.raw_tree(ref).items():
            why = path_problem(path)
            if why:
                self.dropped.append((shown(path), why))
            else:
                keep[path] = meta
        if not self.dropped:
            return ref
        message = f"memctl: drop {len(self.dropped)} path(s) git cannot check out"
        return self.commit_tree(keep, ref, message, "sync")

    def raw_tree(self, ref: str) -> dict[bytes, bytes]:
        """Every file of a commit, ``{path: b"mode type id"}``, paths as git holds them."""
        out = self.repo.git.ls_tree("-r", "-z", "--full-tree", ref, stdout_as_string=False)
        found: dict[bytes, bytes] = {}
        for record in out.split(b"\0"):
            if record:
                meta, _, path = record.partition(b"\t")
                found[path] = meta
        return found

    def commit_tree(self, files: dict[bytes, bytes], parent: str, message: str, host: str) -> str:
        """A commit of exactly ``files`` (as ``raw_tree`` gives them) on top of ``parent``,
        made without the work tree."""
        tree = self._mktree(files)
        return self._plumb(
            "commit-tree", tree, "-p", parent, "-m", message, env=self._identity(host)
        )

    def put_blob(self, text: str) -> bytes:
        """Store a file's text in the object database; its entry for ``commit_tree``."""
        blob = self._plumb("hash-object", "-w", "--stdin", data=text.encode())
        return b"100644 blob " + blob.encode()

    def move_to(self, commit: str) -> None:
        """Make ``commit`` this branch's head, work tree included."""
        self.repo.git.reset("--hard", "--quiet", commit)

    def _mktree(self, entries: dict[bytes, bytes]) -> str:
        """The tree of ``{path: b"mode type id"}``, its subtrees made on the way."""
        here: list[bytes] = []
        below: dict[bytes, dict[bytes, bytes]] = {}
        for path, meta in entries.items():
            head, slash, rest = path.partition(b"/")
            if slash:
                below.setdefault(head, {})[rest] = meta
            else:
                here.append(meta + b"\t" + head)
        for name, inner in below.items():
            here.append(b"040000 tree " + self._mktree(inner).encode() + b"\t" + name)
        return self._plumb("mktree", "-z", data=b"".join(h + b"\0" for h in here))

    def _plumb(self, *args: str, data: bytes = b"", env: dict[str, str] | None = None) -> str:
        program = os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or "git"
        done = subprocess.run(
            [program, *args],
            cwd=self.root,
            input=data,
            capture_output=True,
            env={**os.environ, **_env(), **(env or {})},
            timeout=self.timeout,
            check=False,
        )
        if done.returncode:
            error = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SyncError(f"git {args[0]} failed: {error[-1] if error else done.returncode}")
        return done.stdout.decode().strip()

    def drop_unpushed(self) -> None:
        """Forget this clone's unpushed commits (the database can make them again)."""
        if self.has(self.upstream):
            self.repo.git.reset("--hard", "--quiet", self.upstream)

    def drop_all_memories(self) -> None:
        """With no remote branch (nothing was ever pushed: every commit here waits), go
        back to the first commit when it holds no memory (the layout ``sync init`` wrote),
        else to a new one of its files outside ``memories/``; the next sync writes the
        database's memories on top of it again."""
        if self.has(self.upstream) or not self.has("HEAD"):
            return
        first = self.repo.git.rev_list("--max-parents=0", "HEAD").split()[-1]
        prefix = MEMORIES.encode() + b"/"
        files = self.raw_tree(first)
        kept = {path: meta for path, meta in files.items() if not path.startswith(prefix)}
        if len(kept) < len(files):
            tree = self._mktree(kept)
            message = "memctl: a sync repository"
            first = self._plumb("commit-tree", tree, "-m", message, env=self._identity("sync"))
        self.move_to(first)

    def unpushed_touch(self, paths: list[str]) -> bool:
        """Whether a commit of this clone that the remote lacks (as of the last fetch)
        writes or removes one of ``paths``: with no remote branch, any commit here."""
        if not paths or not self.has("HEAD"):
            return False
        waiting = f"{self.upstream}..HEAD" if self.has(self.upstream) else "HEAD"
        for at in range(0, len(paths), PATHS_AT_ONCE):
            chunk = paths[at : at + PATHS_AT_ONCE]
            if self.repo.git.rev_list("-1", waiting, "--", *chunk):
                return True
        return False

    def forget_unpushed(self) -> None:
        """Drop the unpushed commits and every copy git keeps of them (the reflogs,
        ``ORIG_HEAD``, their objects, loose or packed): text a forget takes out before a
        push carried it leaves this clone and never reaches the remote. The database makes
        the other memories' files again at the next sync (``incoming.gone_own``)."""
        self.drop_unpushed()
        self.drop_all_memories()
        self.repo.git.reflog("expire", "--expire=now", "--all")
        (Path(self.repo.git_dir) / "ORIG_HEAD").unlink(missing_ok=True)
        self.repo.git.gc("--prune=now", "--quiet")

    def pushed(self, path: str) -> bool:
        """Whether the remote's history (as of the last fetch) holds a version of ``path``;
        with no remote branch yet, whether this clone's does."""
        ref = self.upstream if self.has(self.upstream) else "HEAD"
        if not self.has(ref):
            return False
        return bool(self.repo.git.rev_list("-1", ref, "--", path))

    def tree(self, ref: str = "HEAD", paths: list[str] | None = None) -> list[Entry]:
        """Every entry under ``memories/`` of a commit (none for an empty repository), or
        only those of ``paths``."""
        if not self.has(ref):
            return []
        if paths is None:
            chunks = [[MEMORIES]]
        else:
            chunks = [paths[at : at + PATHS_AT_ONCE] for at in range(0, len(paths), PATHS_AT_ONCE)]
        found: list[Entry] = []
        for chunk in chunks:
            out = self.repo.git.ls_tree("-r", "-l", "-z", ref, "--", *chunk, stdout_as_string=False)
            found += _entries(out)
        return found

    def resolve(self, ref: str) -> str | None:
        """The commit id ``ref`` (a branch, ``HEAD``, a commit id) names now (None for none:
        an empty repository, a commit no longer in the clone), read by GitPython from the
        clone's refs and its object reader, as `git rev-parse --verify REF^{commit}` reads
        it: a sync asked seven times or more, a git process each (~4 ms of CPU)."""
        if ref == NULL_COMMIT:  # git's "no object", which GitPython takes for a commit id
            return None
        try:
            return str(self.repo.rev_parse(ref + "^{commit}").hexsha)
        except (ValueError, _git().exc.ODBError):  # no such name or object; not a commit
            return None

    def changes(self, since: str, ref: str) -> tuple[list[Entry], list[str]] | None:
        """The files under ``memories/`` whose entry differs between two commits' trees
        (``git diff-tree``): (those added or changed, the paths removed); None when
        ``since`` is not in the clone any more."""
        if not self.has(since):
            return None
        out = self.repo.git.diff_tree(
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            since,
            ref,
            "--",
            MEMORIES,
            stdout_as_string=False,
        )
        fields = out.split(b"\0")
        changed: list[tuple[bytes, bytes, bytes]] = []  # (mode, blob, path)
        removed = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            _, mode, _, blob, status = meta.decode().lstrip(":").split(" ")
            if status == "D":
                removed.append(shown(path))
            else:
                changed.append((mode.encode(), blob.encode(), path))
        sizes = self._sizes([blob for _, blob, _ in changed])
        entries = [
            Entry(
                mode.decode(),
                "commit" if mode == b"160000" else "blob",
                blob.decode(),
                sizes.get(blob, 0),
                shown(path),
                _utf8(path),
            )
            for mode, blob, path in changed
        ]
        return entries, removed

    def _sizes(self, blobs: list[bytes]) -> dict[bytes, int]:
        """Each object's size in bytes (``git cat-file --batch-check``); 0 when missing."""
        if not blobs:
            return {}
        out = self._plumb("cat-file", "--batch-check", data=b"\n".join(blobs) + b"\n")
        sizes = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                sizes[parts[0].encode()] = int(parts[2])
        return sizes

    def read_blob(self, blob: str) -> bytes:
        return bytes(self.repo.odb.stream(bytes.fromhex(blob)).read())

    def read_file(self, ref: str, path: str, max_bytes: int) -> str | None:
        """A top-level file's whole text at a commit; None when it has none; SyncError
        when it is not a regular file or is larger than ``max_bytes``."""
        if not self.has(ref):
            return None
        out = self.repo.git.ls_tree("-l", "-z", ref, "--", path, stdout_as_string=False)
        entries = [e for e in _entries(out) if e.path == path]
        if not entries:
            return None
        if entries[0].type != "blob" or entries[0].symlink:
            raise SyncError(f"{path} in {self.origin_url} is not a regular file")
        if entries[0].size > max_bytes:
            raise SyncError(
                f"{path} in {self.origin_url} is {entries[0].size:,} bytes, over the limit "
                f"of {max_bytes:,} (sync.max_file_bytes)"
            )
        return self.read_blob(entries[0].blob).decode("utf-8", errors="replace")

    def write(self, path: str, text: str) -> None:
        """Write a file of the work tree, refusing to pass through a symlink."""
        target = self._safe(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        self._safe(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        with os.fdopen(os.open(target, flags, 0o644), "w", encoding="utf-8") as stream:
            stream.write(text)

    def remove(self, path: str) -> None:
        target = self._safe(path)
        if os.path.lexists(target):
            target.unlink()

    def _safe(self, path: str) -> Path:
        current = self.root
        for part in Path(path).parts:
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                break
            if stat.S_ISLNK(mode):
                raise SyncError(f"the repository holds a symlink at {path}; refusing to follow it")
        return self.root / path

    def commit(self, message: str, host: str) -> str | None:
        """Commit every change of the work tree; the new commit, or None when nothing changed."""
        self.repo.git.add("-A", "--", ".")
        if self.has("HEAD") and not self.repo.git.diff("--cached", "--name-only"):
            return None
        env = self._identity(host)
        self.repo.git.commit("--quiet", "--no-verify", "-m", message, env={**_env(), **env})
        return str(self.repo.head.commit.hexsha)

    def _identity(self, host: str) -> dict[str, str]:
        """memctl's name for a commit, unless git has one configured."""
        if self._config("user.name") and self._config("user.email"):
            return {}
        name, email = FALLBACK_NAME, FALLBACK_EMAIL.format(host=host)
        return {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }

    def _config(self, key: str) -> str:
        try:
            return str(self.repo.git.config("--get", key))
        except self._errors():
            return ""

    def push(self) -> bool:
        """Push this branch; False when the remote moved meanwhile (fetch and retry)."""
        if self._config("core.sharedRepository") != CLONE_MODE:  # a clone made before
            self.repo.git.config("core.sharedRepository", CLONE_MODE)
        try:
            with outside_umask():  # the remote's files: as its other users expect them
                self.repo.git.push(
                    "--quiet",
                    "--no-verify",
                    "--porcelain",
                    "origin",
                    f"HEAD:refs/heads/{self.branch}",
                    kill_after_timeout=self.timeout,
                )
        except self._errors() as exc:
            text = f"{getattr(exc, 'stdout', '')}\n{getattr(exc, 'stderr', '')}"
            if any(mark in text for mark in RACES):
                return False
            raise SyncError(
                f"cannot push to {shown_url(self.origin_url)}: {refusal(text) or one_line(exc)}"
            ) from None
        self.repo.git.update_ref(f"refs/remotes/{self.upstream}", "HEAD")
        return True

    def ahead_behind(self) -> tuple[int, int]:
        """Commits of this clone not on the remote, and of the remote not here (last fetch)."""
        if not self.has("HEAD"):
            return 0, 0
        if not self.has(self.upstream):
            return int(self.repo.git.rev_list("--count", "HEAD")), 0
        counts = self.repo.git.rev_list("--left-right", "--count", f"HEAD...{self.upstream}")
        ahead, behind = counts.split()
        return int(ahead), int(behind)

    def outgoing_paths(self) -> list[str]:
        """Files under ``memories/`` the unpushed commits add or change."""
        base = self.upstream if self.has(self.upstream) else None
        if base is None:
            return [e.path for e in self.tree("HEAD")]
        out = self.repo.git.diff(
            "--name-only", "--diff-filter=AM", "-z", base, "HEAD", "--", MEMORIES
        )
        return [p for p in out.split("\0") if p]

    def last_fetch(self) -> float | None:
        fetch_head = Path(self.repo.git_dir) / "FETCH_HEAD"
        return fetch_head.stat().st_mtime if fetch_head.exists() else None


def _entries(out: bytes) -> Iterator[Entry]:
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, blob, size = meta.decode().split()
        yield Entry(mode, kind, blob, int(size) if size.isdigit() else 0, shown(path), _utf8(path))


def _utf8(path: bytes) -> bool:
    try:
        path.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _wait_for_orphan(lock: Path) -> None:
    """Let the git a killed sync left running finish with the index (removing its lock
    under it broke the next sync: "Could not write new index file"), then remove a lock
    no git holds any more."""
    while True:
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            return
        if age > INDEX_LOCK_SECONDS:
            lock.unlink(missing_ok=True)
            return
        time.sleep(0.05)
