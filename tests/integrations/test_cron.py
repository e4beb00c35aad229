"""memctl install cron, through the real CLI: the schedule printed, the systemd user timer
written (backed up) and taken out again."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli


def env(user: Path) -> dict[str, str]:
    return {"HOME": str(user), "XDG_CONFIG_HOME": "", "MEMCTL_LLM": "none"}


def test_install_cron_prints_what_maintain_prints_and_writes_nothing(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    printed = run_cli("install", "cron", env=env(user), cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == run_cli("maintain", "--print-crontab", env=env(user)).stdout
    line = printed.stdout.splitlines()[1]
    assert line.split()[:11] == ["17", "*", "*", "*", "*", "umask", "077", "&&", "nice", "-n", "10"]
    assert "--home" in line and " maintain >> " in line and line.endswith("maintain.log 2>&1")
    # the line as cron's shell runs it (umask 022), with `true` for memctl: the log it
    # makes is the user's alone, so `memctl doctor`'s modes check stays ok
    before_memctl = line.split(" ", 5)[5].split("nice -n")[0]
    log = user / "maintain.log"
    ran = subprocess.run(["sh", "-c", f"umask 022; {before_memctl}true >> {log} 2>&1"])
    assert ran.returncode == 0 and log.stat().st_mode & 0o777 == 0o600
    assert "ExecStart=" in printed.stdout and "OnCalendar=hourly" in printed.stdout
    assert not (user / ".config").exists()


@pytest.mark.fresh
def test_systemd_units_are_written_backed_up_and_taken_out(tmp_path: Path) -> None:
    user = tmp_path / "user"
    units = user / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    timer = units / "memctl-maintain.timer"
    timer.write_text("[Timer]\nOnCalendar=daily\n")  # the user's own, from before
    dry = run_cli("install", "cron", "--systemd", "--dry-run", env=env(user), cwd=tmp_path)
    assert "+ExecStart=" in dry.stdout and "-OnCalendar=daily" in dry.stdout
    assert timer.read_text() == "[Timer]\nOnCalendar=daily\n"
    assert not (units / "memctl-maintain.service").exists()

    done = run_cli("install", "cron", "--systemd", env=env(user), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    service = units / "memctl-maintain.service"
    assert "ExecStart=" in service.read_text() and " maintain" in service.read_text()
    assert "Nice=10\n" in service.read_text()  # maintain embeds in the background
    assert "OnCalendar=hourly" in timer.read_text()
    assert "systemctl --user enable --now memctl-maintain.timer" in done.stdout

    gone = run_cli("install", "uninstall", "cron", env=env(user), cwd=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert not service.exists()
    assert timer.read_text() == "[Timer]\nOnCalendar=daily\n"  # put back, byte for byte

    run_cli("install", "cron", "--systemd", env=env(user), cwd=tmp_path)
    service.write_text(service.read_text() + "CPUQuota=50%\n")  # changed since memctl wrote it
    kept = run_cli("install", "uninstall", "cron", env=env(user), cwd=tmp_path)
    assert "changed since memctl wrote it; left alone" in kept.stdout
    assert service.read_text().endswith("CPUQuota=50%\n")
    bad = run_cli("install", "uninstall", "cronn", env=env(user), cwd=tmp_path)
    assert bad.returncode != 0 and "unknown tool 'cronn'" in bad.stderr
