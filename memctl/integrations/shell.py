"""``memctl install completions``: ``memctl`` on PATH, its man page and its shell
completions, at the user level where the shell and ``man`` look for them.

- ``~/.local/bin/memctl``: a short script that runs this memctl (the clone's
  ``.venv``, with ``--home`` when a data directory was chosen). A clone's ``.venv`` does
  not survive a move (its scripts name their own path), so when that program is gone
  the script says so in one line, with what to run in the clone (``MOVED``), and exits
  127; ``memctl doctor`` names the hooks and MCP entries left behind. Most distributions put
  ``~/.local/bin`` on PATH when it exists (systemd's file-hierarchy, the XDG base
  directories); when it is not, the note says the line to add.
- ``$XDG_DATA_HOME/man/man1/memctl.1``: man-db finds ``~/.local/share/man`` for
  ``~/.local/bin`` on PATH.
- bash: ``$XDG_DATA_HOME/bash-completion/completions/memctl`` (bash-completion loads it
  on first use); fish: ``$XDG_CONFIG_HOME/fish/completions/memctl.fish``; zsh:
  ``$XDG_DATA_HOME/zsh/site-functions/_memctl`` (the note says the ``fpath`` line).

Every file goes through the install plan: backed up, shown with ``--dry-run``, taken
out by ``memctl install uninstall completions`` (and ``memctl uninstall``).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from memctl.clients.base import Launcher, Where
from memctl.clients.files import Plan

NAME = "completions"
MARK = "# memctl launcher"
GONE = 127  # the shell's exit status for a command not found
MOVED = (
    "memctl: %s is gone (the clone moved or was deleted?): in the clone, run "
    "./scripts/setup and .venv/bin/memctl install completions; then memctl doctor names "
    "the assistants to set up again"
)
# The generated files (scripts/gen_docs.py), beside the package in a clone.
SOURCE = Path(__file__).resolve().parent.parent.parent
FILES = {
    "man": "man/memctl.1",
    "bash": "completions/memctl.bash",
    "zsh": "completions/_memctl",
    "fish": "completions/memctl.fish",
}


# Where the bash-completion package's loader lives (Debian, Fedora; older releases):
# without it, bash does not look in bash-completion/completions.
BASH_COMPLETION = ("/usr/share/bash-completion/bash_completion", "/etc/bash_completion")


def bin_dir(where: Where) -> Path:
    return where.home / ".local" / "bin"


def launcher_path(where: Where) -> Path:
    return bin_dir(where) / "memctl"


def _data_home(where: Where) -> Path:
    return Path(where.env.get("XDG_DATA_HOME") or where.home / ".local" / "share")


def targets(where: Where) -> dict[str, Path]:
    """Where each generated file goes."""
    data = _data_home(where)
    return {
        "man": data / "man" / "man1" / "memctl.1",
        "bash": data / "bash-completion" / "completions" / "memctl",
        "zsh": data / "zsh" / "site-functions" / "_memctl",
        "fish": where.xdg_config() / "fish" / "completions" / "memctl.fish",
    }


def launcher_text(run: Launcher) -> str:
    program = shlex.quote(run.argv[0])
    return (
        f"#!/bin/sh\n{MARK} (written by `memctl install completions`)\n"
        f"if [ ! -x {program} ]; then\n"
        f"    printf '{MOVED}\\n' {program} >&2\n"
        f"    exit {GONE}\n"
        "fi\n"
        f'exec {run.shell()} "$@"\n'
    )


def plan_shell(plan: Plan, where: Where, run: Launcher, remove: bool = False) -> None:
    """The launcher, the man page and the completions (``remove``: memctl's taken out)."""
    path = launcher_path(where)
    current = plan.read(path)
    if current is not None and MARK.encode() not in current:
        plan.note(f"{path}: not memctl's launcher; left alone")
    else:
        plan.write(path, None if remove else launcher_text(run).encode(), NAME, "launcher")
    for kind, target in targets(where).items():
        source = SOURCE / FILES[kind]
        if remove:
            if source.is_file() and plan.read(target) == source.read_bytes():
                plan.write(target, None, NAME, kind)
        elif source.is_file():
            plan.write(target, source.read_bytes(), NAME, kind)
        else:
            plan.note(f"{source}: not here (a clone has it); {kind} not installed")


def notes(where: Where) -> list[str]:
    """What a person still has to do: PATH without ~/.local/bin, bash without the
    bash-completion package, zsh's fpath."""
    found = []
    if str(bin_dir(where)) not in where.env.get("PATH", "").split(os.pathsep):
        found.append(
            f'{bin_dir(where)} is not on PATH: add `export PATH="$HOME/.local/bin:$PATH"` '
            "to your shell's profile"
        )
    if not any(Path(loader).is_file() for loader in BASH_COMPLETION):
        found.append(
            f"bash: the bash-completion package is not installed: add "
            f"`source {targets(where)['bash']}` to ~/.bashrc"
        )
    zsh = targets(where)["zsh"].parent
    found.append(f"zsh: add `fpath+=({zsh})` before `compinit` in ~/.zshrc")
    return found


def make_executable(where: Where) -> None:
    path = launcher_path(where)
    if path.is_file():
        path.chmod(0o755)
