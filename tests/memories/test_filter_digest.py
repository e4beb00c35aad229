"""The privacy filter's digest (``memories.filter_digest``): what the filter does, so an
edit of a comment or a docstring does not make maintain's rescrub read the whole store
again, and a changed pattern, constant or line of code does."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from memctl.memories import privacy
from memctl.memories.filter_digest import behaviour_digest

NAME = privacy.__name__


def _digest_of(source: str, folder: Path) -> str:
    """The digest of ``source`` loaded as the privacy module (from a file of its own)."""
    path = folder / "privacy.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(NAME, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules[NAME] = privacy
    return behaviour_digest([module])


SOURCE = Path(str(privacy.__file__)).read_text()
COMMENTED = SOURCE.replace(
    "REDACTED = ", "# a comment added, lines moved\n\n\nREDACTED = ", 1
).replace('"""A kind of secret.', '"""A kind of secret, said otherwise.', 1)


@pytest.mark.parametrize(
    ("edit", "same"),
    [
        (lambda s: COMMENTED, True),
        (lambda s: s.replace("ENTROPY_MIN_CHARS = 20", "ENTROPY_MIN_CHARS = 21", 1), False),
        (lambda s: s.replace('"pass pwd pin ', '"pass pwd pin pincode ', 1), False),
        (lambda s: s.replace("return shannon_entropy", "return 1 + shannon_entropy", 1), False),
    ],
    ids=["comment-docstring-lines", "constant", "anchor-list", "code"],
)
def test_the_digest_follows_what_the_filter_does(edit, same: bool, tmp_path: Path) -> None:
    edited = edit(SOURCE)
    assert edited != SOURCE
    assert (_digest_of(edited, tmp_path) == behaviour_digest([privacy])) is same


def test_the_digest_is_the_same_in_every_process() -> None:
    """A set's order differs between processes (``PYTHONHASHSEED``): a digest that read
    one would rescan the store at every maintain."""
    code = "from memctl.maintain.rescrub import filter_digest; print(filter_digest())"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(seen) == 1 and len(seen.pop().strip()) == 16
