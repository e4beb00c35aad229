"""Running ``memctl maintain`` on a schedule: a crontab line, or a systemd user timer.

``memctl install cron`` and ``memctl maintain --print-crontab`` print the same
text (``schedule_text``). The crontab is left to the person (``crontab -e``):
rewriting someone's crontab from a program is too easy to get wrong. The two
systemd unit files, which are memctl's alone, ``memctl install cron --systemd``
writes under ``$XDG_CONFIG_HOME/systemd/user/`` through the install plan (backed
up, shown with ``--dry-run``, undone by ``memctl install uninstall cron``).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from memctl.clients.base import Launcher, Where
from memctl.clients.files import Plan
from memctl.maintain.spawn import NICENESS

NAME = "cron"
SERVICE, TIMER = "memctl-maintain.service", "memctl-maintain.timer"
MINUTE = 17  # hourly, at a quiet minute
# The log a crontab line appends to is the shell's to create: 0600, as memctl's own files
PRIVATE_UMASK = "077"
ENABLE = "systemctl --user daemon-reload && systemctl --user enable --now " + TIMER


def units_dir(where: Where) -> Path:
    return where.xdg_config() / "systemd" / "user"


def crontab(run: Launcher, log: Path) -> str:
    """Hourly, at a lower CPU priority; output goes to ``log`` (cron would mail it
    otherwise), made under ``PRIVATE_UMASK``: cron's shell would create it readable by
    others (umask 022), inside a data directory ``memctl doctor`` keeps private. ``%`` is
    special to cron, so it is escaped."""
    command = f"umask {PRIVATE_UMASK} && nice -n {NICENESS} {run.shell('maintain')}"
    line = f"{MINUTE} * * * * {command} >> {shlex.quote(str(log))} 2>&1"
    return line.replace("%", "\\%")


def systemd_units(run: Launcher) -> dict[str, str]:
    """File name -> text of a user service and its hourly timer."""
    return {
        SERVICE: (
            "[Unit]\nDescription=memctl maintain (decay, consolidation, backups)\n\n"
            f"[Service]\nType=oneshot\nNice={NICENESS}\nExecStart={run.shell('maintain')}\n"
        ),
        TIMER: (
            "[Unit]\nDescription=Run memctl maintain hourly\n\n"
            "[Timer]\nOnCalendar=hourly\nRandomizedDelaySec=10m\nPersistent=true\n\n"
            "[Install]\nWantedBy=timers.target\n"
        ),
    }


def schedule_text(run: Launcher, log: Path, where: Where) -> str:
    """What a person installs: the crontab line, or the systemd units and how to enable
    them."""
    parts = ["# crontab -e, then add:", crontab(run, log), "", "# or a systemd user timer:"]
    for name, text in systemd_units(run).items():
        parts += [f"# {units_dir(where) / name}", text]
    parts.append(f"# then: {ENABLE}")
    parts.append("# (`memctl install cron --systemd` writes both files)")
    return "\n".join(parts) + "\n"


def plan_units(plan: Plan, where: Where, run: Launcher) -> None:
    """Write the two unit files."""
    for name, text in systemd_units(run).items():
        plan.write(units_dir(where) / name, text.encode(), NAME, "systemd unit")
