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
    memory = memory_api.remember(ctx, RememberRequest(text, scope=scope))
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
