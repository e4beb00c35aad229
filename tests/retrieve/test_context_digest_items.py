"""A session's digest in the start block, after the facts shown above it are taken out of it:
no empty items, no section left with its label alone."""

from __future__ import annotations

import re

from memctl.retrieve.session_start import asked_once, unsaid
from tests.conftest import run_cli
from tests.ingesting import REAL_SESSIONS

FIX_A = "`pytest` failed: exit 127: command not found → fixed by `uv run pytest`"
FIX_B = "`ruff check` failed: SIM115 → fixed by editing deep_manifest.py"
DIGEST = "\n".join(
    [
        "Session of 2025-11-29 (claude-code) — add tar support",
        "Edited: deep_manifest.py; tests/test_unit.py",
        f"Fixed: {FIX_A}; {FIX_B}; `make;lint` failed → fixed by retrying",
        f"Found: {FIX_A}",
        "Outcome: tar archives are read like zip archives.",
    ]
)
EMPTY = re.compile(r": ;|; ;|;\s*$|^\w[\w ]*:\s*$", re.MULTILINE)


def test_a_digest_without_the_facts_shown_keeps_its_other_items_whole() -> None:
    left = unsaid(DIGEST, [FIX_A, FIX_B])
    assert "Fixed: `make;lint` failed → fixed by retrying" in left.splitlines()
    assert not any(line.startswith("Found:") for line in left.splitlines())  # nothing left
    assert not EMPTY.search(left)
    assert unsaid(DIGEST, ["short"]) == DIGEST  # nothing said: as it was


def test_the_start_block_of_a_real_session_has_no_empty_digest_items() -> None:
    session = REAL_SESSIONS / "cc2-cclog-a7da6a22.jsonl"
    done = run_cli("ingest", "--transcript", str(session), "--wait", env={"MEMCTL_LLM": "none"})
    assert done.returncode == 0, done.stderr
    block = run_cli("context", "-s", "/src/deep-manifest").stdout
    assert block.splitlines()[1] == "Context for: /src/deep-manifest"  # its path, not a hash
    assert "tests run with" in block and "Session of" in block  # facts, then the digest
    assert not EMPTY.search(block), block


def test_the_start_block_gives_a_request_its_digest_is_titled_by_once() -> None:
    """benchmarks/sessions/real cc1-gitai-cb947e5b (MIT): one request, the title and the
    "Asked:" line both said it; a title cut short says less than the ask, which stays."""
    digest = "\n".join(
        [
            "Session of 2025-09-11 (claude-code) — Make the colors green and yellow",
            "Asked: Make the colors green and yellow",
            "Edited: app/globals.css; game/HistoryLog.tsx",
            "Outcome: Now I need to update the player color mapping.",
        ]
    )
    shown = asked_once(digest)
    assert shown.count("Make the colors green and yellow") == 1
    assert shown.splitlines()[1] == "Edited: app/globals.css; game/HistoryLog.tsx"
    two = digest.replace("yellow\nEdited", "yellow; and blue for dates\nEdited")
    assert "Asked: and blue for dates" in asked_once(two).splitlines()
    cut = "Session of 2025-06-14 (claude-code) — Hey Claude, can you please add a Github…"
    longer = f"{cut}\nAsked: Hey Claude, can you please add a Github Action to run tests?"
    assert asked_once(longer) == longer
