"""What a person installs to run ``memctl maintain`` on a schedule: a crontab line, or a
systemd user service and timer."""

from __future__ import annotations

import shlex
import shutil
import sys

from memctl.config import Settings


def command(settings: Settings) -> str:
    """The maintain command line, with this home, for a shell."""
    memctl = shutil.which("memctl") or f"{sys.executable} -m memctl"
    return f"{memctl} --home {shlex.quote(str(settings.home))} maintain"


def crontab(settings: Settings) -> str:
    """Hourly, at a quiet minute; output goes to the log beside the worker's."""
    log = shlex.quote(str(settings.home / "logs" / "maintain.log"))
    return f"17 * * * * {command(settings)} >> {log} 2>&1"


def systemd_units(settings: Settings) -> dict[str, str]:
    """File name -> text of a user service and its hourly timer."""
    return {
        "memctl-maintain.service": (
            "[Unit]\nDescription=memctl maintain (decay, consolidation, backups)\n\n"
            f"[Service]\nType=oneshot\nExecStart={command(settings)}\n"
        ),
        "memctl-maintain.timer": (
            "[Unit]\nDescription=Run memctl maintain hourly\n\n"
            "[Timer]\nOnCalendar=hourly\nRandomizedDelaySec=10m\nPersistent=true\n\n"
            "[Install]\nWantedBy=timers.target\n"
        ),
    }
