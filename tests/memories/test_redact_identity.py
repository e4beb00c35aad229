"""`memctl redact` reaches the identity file every session starts with: the value stayed
there and went to the assistant at each session start. Real files in a real home."""

from __future__ import annotations

from pathlib import Path

from memctl.api import memory as memory_api
from memctl.config.scope import project_root
from memctl.context import Context
from memctl.retrieve.identity import FILE_NAME, PROJECT_DIR, read_identity
from tests.memories.test_forget_everywhere import _files_holding

VALUE = "Velvet-Otter-2291"  # no label: the scanner leaves it, as redact's values are


def test_redact_rewrites_the_home_identity_file_and_names_the_project_s(
    ctx: Context, home: Path
) -> None:
    assert ctx.settings.home == home
    mine = home / FILE_NAME
    home.mkdir(exist_ok=True)
    mine.write_text(f"I am Dana.\nThe shared lab login is dana / {VALUE}.\n")
    project = project_root(ctx.settings.cwd) / PROJECT_DIR / FILE_NAME
    project.parent.mkdir()
    project.write_text(f"Payments service. Staging login: {VALUE}\n")
    done = memory_api.redact(ctx, VALUE)
    assert done.identity == [str(mine)]
    assert done.identity_left == [str(project)]
    assert _files_holding(home, VALUE) == []
    read = read_identity(mine)
    assert read is not None
    assert read.text == "I am Dana.\nThe shared lab login is dana / [REDACTED]."
    assert mine.stat().st_mode & 0o077 == 0
    assert VALUE in project.read_text()  # the repository's file, its to change
