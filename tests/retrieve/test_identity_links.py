"""`memctl init --project` in a checkout another user could write to: a link planted at
`.memctl/identity.md` (dangling, so it looked missing) or at `.memctl` had init write its
file where the link pointed. Now the file is made new, never through a link, and init says
in one line which it left alone. A real `memctl` process on real files and links."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli


def _init(tmp_path: Path, project: Path) -> str:
    env = {"HOME": str(tmp_path / "user"), "PATH": "/usr/bin:/bin", "MEMCTL_HOME": ""}
    done = run_cli("init", "--project", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize("planted", ["file", "folder"])
def test_init_writes_no_identity_file_through_a_planted_link(
    tmp_path: Path, planted: str
) -> None:
    project = tmp_path / "shared-checkout"
    (project / ".git").mkdir(parents=True)
    target = tmp_path / "victim"
    if planted == "file":
        (project / ".memctl").mkdir()
        (project / ".memctl" / "identity.md").symlink_to(target / "startup.sh")
        target.mkdir()
    else:
        (project / ".memctl").symlink_to(target)
        target.mkdir()

    said = _init(tmp_path, project)

    assert list(target.iterdir()) == []  # nothing written where the link points
    assert "left " in said and "symbolic link: nothing written" in said, said
    assert (tmp_path / "user" / ".local" / "share" / "memctl" / "identity.md").is_file()


def test_init_still_makes_the_project_identity_file_where_nothing_is_planted(
    tmp_path: Path,
) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    said = _init(tmp_path, project)
    made = project / ".memctl" / "identity.md"
    assert made.is_file() and not made.is_symlink()
    assert f"created {made}" in " ".join(said.split())
