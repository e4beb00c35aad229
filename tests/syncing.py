"""Two machines sharing one bare repository on disk, for the sync tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memctl.api import memory as memory_api
from memctl.api import sync as sync_api
from memctl.api.memory import RememberRequest
from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.model import Memory
from memctl.sync.migrate import move_index
from tests.fakes import HashEmbedder


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def bare_repo(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    return remote


def machine(tmp_path: Path, name: str, remote: Path, **overrides: object) -> Context:
    """A data directory of its own (so a host id of its own) syncing with ``remote``."""
    values: dict[str, object] = {"llm": "none", "sync.remote": str(remote)}
    values.update({k.replace("__", "."): v for k, v in overrides.items()})
    return Context(load_settings(home=tmp_path / name, overrides=values), embedder=HashEmbedder())


def shared(ctx: Context, text: str, scope: str = "global") -> Memory:
    """Remember a memory and promote it."""
    memory = memory_api.remember(ctx, RememberRequest(text, scope=scope)).memory
    sync_api.promote(ctx, sync_api.ShareRequest((memory.id,)))
    return memory


def history(remote: Path) -> str:
    """Every commit of the bare repository with its full patch."""
    return git("--git-dir", str(remote), "log", "--all", "-p", "--format=%H %s")


def work_clone(tmp_path: Path, remote: Path, name: str = "hand") -> Path:
    """A person's clone, to commit to the repository by hand."""
    path = tmp_path / name
    git("clone", "--quiet", str(remote), str(path))
    git("config", "user.name", "Hand", cwd=path)
    git("config", "user.email", "hand@example.invalid", cwd=path)
    return path


def push_files(path: Path, files: dict[str, bytes | str], message: str = "by hand") -> None:
    for name, data in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8")
        else:
            target.write_bytes(data)
    git("add", "-A", cwd=path)
    git("commit", "--quiet", "-m", message, cwd=path)
    git("push", "--quiet", "origin", "HEAD", cwd=path)


def _plumb(remote: Path, *args: str, data: bytes = b"") -> bytes:
    done = subprocess.run(
        ["git", "--git-dir", str(remote), *args], input=data, capture_output=True, check=True
    )
    return done.stdout.strip()


def _tree(remote: Path, entries: dict[bytes, tuple[bytes, bytes]]) -> bytes:
    """A tree of ``{path: (mode, blob id)}``, nested trees made on the way (``git mktree``
    takes any name, ``..`` and non-UTF-8 bytes included)."""
    here: list[bytes] = []
    below: dict[bytes, dict[bytes, tuple[bytes, bytes]]] = {}
    for path, (mode, blob) in entries.items():
        head, slash, rest = path.partition(b"/")
        if slash:
            below.setdefault(head, {})[rest] = (mode, blob)
        else:
            kind = b"commit" if mode == b"160000" else b"blob"
            here.append(mode + b" " + kind + b" " + blob + b"\t" + head)
    for name, inner in below.items():
        here.append(b"040000 tree " + _tree(remote, inner) + b"\t" + name)
    return _plumb(remote, "mktree", "-z", data=b"\0".join(here) + b"\0")


def plant(
    remote: Path, files: dict[bytes, bytes], symlinks: dict[bytes, bytes] | None = None
) -> None:
    """Commit ``files`` (byte paths, any bytes) onto the bare repository's main branch
    directly, as a hostile member's push would leave it (no checks of git's own)."""
    entries = _head_entries(remote)
    for path, data in files.items():
        entries[path] = (b"100644", _plumb(remote, "hash-object", "-w", "--stdin", data=data))
    for path, target in (symlinks or {}).items():
        entries[path] = (b"120000", _plumb(remote, "hash-object", "-w", "--stdin", data=target))
    _commit(remote, entries, "hostile")


def as_format_1(remote: Path, *machines: Context) -> None:
    """Turn the repository and the machines' indexes into what memctl 1.0 left: every
    memory file moved out of its shard directory, ``memctl.yaml`` saying 1.0, and index
    paths of format 1."""
    entries = {}
    for path, entry in _head_entries(remote).items():
        parts = path.split(b"/")
        flat = parts[:-2] + parts[-1:] if parts[0] == b"memories" else parts
        entries[b"/".join(flat)] = entry
    fmt = _plumb(remote, "hash-object", "-w", "--stdin", data=b'format: "1.0"\n')
    entries[b"memctl.yaml"] = (b"100644", fmt)
    _commit(remote, entries, "memctl 1.0")
    for ctx in machines:
        with ctx.db.atomic():
            move_index(ctx.db, 1)


def _head_entries(remote: Path) -> dict[bytes, tuple[bytes, bytes]]:
    entries: dict[bytes, tuple[bytes, bytes]] = {}
    head = _head(remote)
    if head:
        for record in _plumb(remote, "ls-tree", "-r", "-z", head).split(b"\0"):
            if record:
                meta, _, path = record.partition(b"\t")
                mode, _, blob = meta.split(b" ")
                entries[path] = (mode, blob)
    return entries


def _head(remote: Path) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(remote), "rev-parse", "--verify", "-q", "refs/heads/main"],
        capture_output=True,
        text=True,
    ).stdout.strip()


def _commit(remote: Path, entries: dict[bytes, tuple[bytes, bytes]], message: str) -> None:
    tree = _tree(remote, entries).decode()
    head = _head(remote)
    parent = ["-p", head] if head else []
    env_args = ["-c", "user.name=Hostile", "-c", "user.email=hostile@example.invalid"]
    commit = subprocess.run(
        ["git", *env_args, "--git-dir", str(remote), "commit-tree", tree, *parent, "-m", message],
        capture_output=True,
        check=True,
    ).stdout.strip()
    _plumb(remote, "update-ref", "refs/heads/main", commit.decode())
