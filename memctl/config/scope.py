"""Which project a command runs in, and the scope string that names it.

Two clones of one repository share a scope because the scope comes from the
git remote URL; a directory without a remote is named by a digest of its path
keyed with the home's key (``keyed_path``). When a remote is added later, the
path's scope becomes an alias of the remote's (``path_scope`` names the old
one; ``store.scopes`` moves it).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

from memctl.lazy_re import lazy

GLOBAL_SCOPE = "global"
LOCAL_REMOTE = "file:"  # the scope of a project whose remote is a directory: "file:<path>"
PATH_SCOPE = "path:"  # the scope of a project with no remote: a digest of its folder
# An older memctl's ``path:`` scope: 16 hexadecimal digits of a plain SHA-256 of the folder,
# which anyone holding the database, a backup or an export could try a guessed folder on.
PLAIN_PATH = lazy(r"path:[0-9a-f]{16}")
# hexadecimal digits of the keyed digest: twice the plain one's, so the two never meet (and
# as many as the sync repository's name of the project, ``sync.layout.shared_scope``)
KEYED_DIGITS = 32
# A ``path:`` scope as ``keyed_path`` names it: its digits are the sync repository's name of
# the project (``sync.layout.shared_scope`` of the plain one), so that name stays
KEYED_PATH = lazy(rf"{PATH_SCOPE}[0-9a-f]{{{KEYED_DIGITS}}}")


def find_git_dir(start: Path) -> tuple[Path, Path] | None:
    """(work tree root, git dir) of the repository containing ``start``, if any."""
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return directory, dot_git
        if dot_git.is_file():
            # worktrees and submodules: ".git" is a file "gitdir: <path>"
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                git_dir = (directory / text.removeprefix("gitdir:").strip()).resolve()
                return directory, git_dir
    return None


def project_root(cwd: Path) -> Path:
    """The git work tree containing ``cwd``, else ``cwd`` itself."""
    found = find_git_dir(cwd)
    return found[0] if found else cwd


def common_git_dir(git_dir: Path) -> Path:
    """The main repository's git dir: a worktree's own git dir names it in ``commondir``."""
    common = git_dir / "commondir"
    if common.is_file():
        return (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    return git_dir


def remote_url(git_dir: Path) -> str | None:
    """The URL of remote "origin", else of the first remote, from the repository config."""
    import configparser  # here: its import compiles 8 patterns in every process

    git_dir = common_git_dir(git_dir)
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(git_dir / "config", encoding="utf-8")
    except configparser.Error:
        return None
    remotes = [s for s in parser.sections() if s.startswith('remote "')]
    remotes.sort(key=lambda section: section != 'remote "origin"')
    for section in remotes:
        url = parser.get(section, "url", fallback="").strip()
        if url:
            return url
    return None


def normalise_remote(url: str) -> str:
    """``git@github.com:a/b.git`` and ``https://user@github.com/a/b`` -> ``github.com/a/b``."""
    url = re.sub(r"\.git$", "", url.strip().rstrip("/"), flags=re.I).rstrip("/")
    local = re.match(r"^file://(/.*)$", url, re.I)
    if local:  # file:///srv/x is the same repository as /srv/x
        return LOCAL_REMOTE + local.group(1)
    scp = re.match(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$", url)
    if scp:
        return f"{scp.group(1)}/{scp.group(2).lstrip('/')}".lower()
    full = re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?(/.*)?$", url, re.I)
    if full:
        return f"{full.group(1)}{full.group(2) or ''}".lower()
    return LOCAL_REMOTE + url


def project_scope(cwd: Path, key: bytes | None) -> str:
    """The scope of the project ``cwd`` is in: its normalised remote, else ``path:<hash>``
    (``path_scope``)."""
    found = find_git_dir(cwd)
    url = remote_url(found[1]) if found else None
    return normalise_remote(url) if url else path_scope(cwd, key)


def path_scope(cwd: Path, key: bytes | None) -> str:
    """``path:<hash>`` of the project's main work tree (of ``cwd`` outside git), keyed with
    ``key`` (``keyed_path``): the scope the project has, or had before it got a remote."""
    found = find_git_dir(cwd)
    root = project_root(cwd)
    if found:
        common = common_git_dir(found[1])
        if common.name == ".git":  # a worktree is named by its main work tree
            root = common.parent
    return keyed_path(folder_scope(str(root.resolve())), key)


def folder_scope(folder: str) -> str:
    """An older memctl's scope of a folder with no remote (``PLAIN_PATH``)."""
    return PATH_SCOPE + hashlib.sha256(folder.encode()).hexdigest()[:16]


def keyed_path(plain: str, key: bytes | None) -> str:
    """The scope of the project an older memctl named ``plain`` (``PLAIN_PATH``): an
    HMAC-SHA256 of it under the home's key (``config.files.forget_key``), so a copy of the
    database, a backup or an export cannot confirm a guessed folder; ``plain`` itself
    without a key (a home no key can be made in: a read-only disk, whose store was keyed
    by whoever made the key, or is older and read as it is)."""
    if key is None:
        return plain
    return PATH_SCOPE + hmac.new(key, plain.encode(), hashlib.sha256).hexdigest()[:KEYED_DIGITS]


def keyed_scope(scope: str, key: bytes | None) -> str:
    """``scope``, or its keyed name when an older memctl wrote it (an export's record, a
    sync file, a scope typed from an older listing): the same project here."""
    return keyed_path(scope, key) if PLAIN_PATH.fullmatch(scope) else scope
