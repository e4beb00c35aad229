"""Which project a command runs in, and the scope string that names it.

Two clones of one repository share a scope because the scope comes from the
git remote URL; a directory without a remote is named by a hash of its path.
When a remote is added later, the path's scope becomes an alias of the
remote's (``path_scope`` names the old one; ``store.scopes`` moves it).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

GLOBAL_SCOPE = "global"
LOCAL_REMOTE = "file:"  # the scope of a project whose remote is a directory: "file:<path>"


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


def project_scope(cwd: Path) -> str:
    """The scope of the project ``cwd`` is in: its normalised remote, else ``path:<hash>``."""
    found = find_git_dir(cwd)
    url = remote_url(found[1]) if found else None
    return normalise_remote(url) if url else path_scope(cwd)


def path_scope(cwd: Path) -> str:
    """``path:<hash>`` of the project's main work tree (of ``cwd`` outside git): the scope
    the project has, or had before it got a remote."""
    found = find_git_dir(cwd)
    root = project_root(cwd)
    if found:
        common = common_git_dir(found[1])
        if common.name == ".git":  # a worktree is named by its main work tree
            root = common.parent
    return "path:" + hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
