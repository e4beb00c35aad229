"""`memctl recall` in the fast lane (no Typer) prints what the Typer command prints."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memctl.cli.fastlane import Refused, recall_args
from tests.conftest import Shared, fast_lane_run, run_cli, shared, through_typer

FACTS = (
    "We deploy with make release from the main branch.",
    "The staging database is restored every night at two.",
    "Alice reviews every change to the billing code.",
)


def without_scores(text: str) -> str:
    return re.sub(r"\d\.\d{4}", "S", text)  # the table's 4-digit scores (they age)


def same_answer(fast: dict[str, Any], typer: dict[str, Any]) -> None:
    """The same JSON answer, its scores within rounding (decay moves them as memories age)."""
    assert len(fast["results"]) == len(typer["results"])
    for mine, theirs in zip(fast["results"], typer["results"], strict=True):
        assert mine.pop("score") == pytest.approx(theirs.pop("score"), rel=1e-4)
        assert mine.pop("factors") == pytest.approx(theirs.pop("factors"), rel=1e-4)
    assert fast == typer


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Shared:
    """The facts, remembered once for the module; the parity tests only read them
    (``--no-touch``), a test that writes takes a copy."""
    with shared(tmp_path_factory, user_cache, "facts") as place:
        for fact in FACTS:
            assert run_cli("remember", fact).returncode == 0
    return place


@pytest.mark.parametrize(
    "args",
    [
        ("how do we deploy",),
        ("--format", "context", "deploy"),
        ("-f", "ids", "-n", "2", "--all-scopes", "database"),
        ("--json", "--mode", "focused", "--budget", "50", "billing"),
        ("--format=xml", "deploy"),
        ("--budget", "0", "deploy"),
        ("-", "--history", "--sessions", "--as-of", "30d"),
        ("--json", "--no-sessions", "--clear-only", "deploy"),
        ("--clear-only", "-n", "3", "the weather in Lisbon"),
    ],
)
def test_the_fast_lane_prints_what_the_typer_command_prints(
    stored: Shared, args: tuple[str, ...]
) -> None:
    command = ("recall", "--no-touch", *args)  # a touch would change the second answer
    fast = run_cli(*command, input="who reviews billing", env=stored.env, cwd=stored.project)
    typer = through_typer(
        "recall", *command, input="who reviews billing", env=stored.env, cwd=stored.project
    )
    assert (fast.returncode, fast.stderr) == (typer.returncode, typer.stderr)
    if "--json" in args:
        same_answer(json.loads(fast.stdout), json.loads(typer.stdout))
    else:
        assert without_scores(fast.stdout) == without_scores(typer.stdout)
    assert fast.returncode != 0 or fast.stdout.strip()


@pytest.mark.parametrize(
    "args",
    [
        ["--explain", "deploy"],
        ["--why-not", "abcd1234", "deploy"],
        ["--limit", "0", "deploy"],
        ["-n", "many", "deploy"],
        ["one", "two"],
        ["--help"],
        ["--unknown", "deploy"],
    ],
)
def test_what_the_fast_lane_does_not_take_goes_to_typer(args: list[str]) -> None:
    with pytest.raises(Refused):
        recall_args(args)


def test_refused_command_lines_still_get_typers_answer(stored: Shared, home: Path) -> None:
    mine = stored.copy(home)  # recall touches what it finds
    explained = run_cli("recall", "--explain", "deploy", cwd=mine.project)
    assert explained.returncode == 0 and "found by:" in explained.stdout
    too_few = run_cli("recall", "--limit", "0", "deploy", cwd=mine.project)
    assert too_few.returncode == 2 and "0" in too_few.stderr and "1" in too_few.stderr


def test_the_fast_lane_loads_no_typer(stored: Shared, home: Path) -> None:
    mine = stored.copy(home)  # recall touches what it finds
    printed, loaded = fast_lane_run(["recall", "--format", "context", "deploy"], cwd=mine.project)
    assert "make release" in printed and loaded == []


def test_tables_show_stored_text_as_stored_not_as_emoji(stored: Shared, home: Path) -> None:
    """ ":rocket:" in a memory is shown as written (rich turned it into an emoji), by recall
    in the fast lane and through Typer, and by list."""
    mine = stored.copy(home)  # a memory more
    text = "We ship the release with the :rocket: script on Fridays"
    assert run_cli("remember", text, cwd=mine.project).returncode == 0
    shown = [
        run_cli("recall", "release script", cwd=mine.project).stdout,
        through_typer("recall", "recall", "release script", env=mine.env, cwd=mine.project).stdout,
        run_cli("list", cwd=mine.project).stdout,
    ]
    for n, out in enumerate(shown):
        assert ":rocket:" in out and "\N{ROCKET}" not in out, (n, out)
