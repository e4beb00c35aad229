"""What every client module shares: where it writes, how memctl is started, what was found."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Where:
    """User level (``project`` None: the client's files under ``home``) or project level."""

    home: Path  # the user's home directory
    project: Path | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def level(self) -> str:
        return "user" if self.project is None else "project"

    def xdg_config(self) -> Path:
        return Path(self.env.get("XDG_CONFIG_HOME") or self.home / ".config")


PROGRAM = "memctl"  # the installed script's name


@dataclass(frozen=True)
class Launcher:
    """The command line that starts this memctl: its absolute path and its data directory."""

    argv: tuple[str, ...]

    def words(self, *args: str) -> list[str]:
        return [*self.argv, *args]

    def shell(self, *args: str) -> str:
        return shlex.join(self.words(*args))


def launcher(home: Path | None) -> Launcher:
    """The memctl next to this Python (else ``python -m memctl``), with ``--home`` when the
    data directory is not the default one, so hooks and MCP use the same store."""
    script = Path(sys.executable).parent / PROGRAM
    argv: list[str] = [str(script)] if script.is_file() else [sys.executable, "-m", "memctl"]
    if home is not None:
        argv += ["--home", str(Path(home).resolve())]
    return Launcher(tuple(argv))


def portable(run: Launcher, env: dict[str, str]) -> Launcher:
    """``run`` as a project's shared files name it (``.mcp.json``, ``opencode.json``, ...,
    which a team commits): ``memctl`` when the one on ``PATH`` is this one, since its
    absolute path (``/home/alice/.local/bin/memctl``) names the user to every teammate
    and is not where theirs is; else ``run`` as it is (it must start)."""
    found = find_binary(PROGRAM, env)
    if found and os.path.realpath(found) == os.path.realpath(run.argv[0]):
        return Launcher((PROGRAM, *run.argv[1:]))
    return run


@dataclass(frozen=True)
class Found:
    """What detection found of one client."""

    client: str
    binary: str | None  # absolute path on PATH
    config_dir: Path | None  # its config directory, when it exists

    @property
    def present(self) -> bool:
        return self.binary is not None or self.config_dir is not None


def find_binary(name: str, env: dict[str, str]) -> str | None:
    return shutil.which(name, path=env.get("PATH", os.defpath))


def existing(path: Path) -> Path | None:
    return path if path.exists() else None
