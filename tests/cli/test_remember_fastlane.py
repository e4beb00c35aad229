"""`memctl remember` in the fast lane (no Typer) does what the Typer command does: the same
output, warnings, errors and exit codes, the same memory stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memctl.cli.fastlane import Refused, remember_args, remember_parser, split_command
from memctl.config.files import FORGET_KEY, forget_key, private_dir, write_private
from tests.conftest import fast_lane_run, options_both_ways, run_cli, through_typer

# The fields of a memory that differ between two stores of the same text.
OWN_FIELDS = ("id", "created_at", "updated_at", "stored_at")


def home_of(home: Path) -> dict[str, str]:
    return {"MEMCTL_HOME": str(home)}


def same(fast: str, slow: str) -> None:
    """The same output, the ids and times of each store aside."""
    if fast.startswith("{"):
        mine, theirs = json.loads(fast), json.loads(slow)
        for name in OWN_FIELDS:
            assert re.fullmatch(r"[0-9a-f]{32}|\d{4}-.*Z", mine.pop(name))
            theirs.pop(name)
        assert mine == theirs
    else:
        assert re.sub(r"[0-9a-f]{32}", "ID", fast) == re.sub(r"[0-9a-f]{32}", "ID", slow)


@pytest.mark.parametrize(
    "steps",
    [
        [("we deploy with make release",)],
        [("-", "--json")],
        [("--json", "-t", "a", "--tags", "b,c", "-t", "d", "--category", "cases", "-i", "0")],
        [("-s", "global", "--importance", "0.7", "I prefer tabs", "--json")],
        [("-c", "remember.importance=0.3", "remember", "--json", "--tag=x", "staging is slow")],
        [("the same text twice",), ("the same text twice",), ("the same text twice", "--json")],
        [("--category", "nonsense", "some text")],
        [("-",)],  # no text on stdin: one line, nothing stored
        [("-c", "no-such-key=1", "remember", "some text")],
        [("key AKIAIOSFODNN7EXAMPLE, <private>pin 4321</private>",)],  # said: left out
    ],
)
def test_the_fast_lane_does_what_the_typer_command_does(
    tmp_path: Path, steps: list[tuple[str, ...]]
) -> None:
    # one key for both homes: a project with no remote is named by a digest keyed with it
    write_private(private_dir(tmp_path / "typer") / FORGET_KEY, forget_key(tmp_path / "fast").hex())
    for step in steps:
        args = step if "remember" in step else ("remember", *step)
        given = "" if step == ("-",) else "read from standard input"
        fast = run_cli(*args, input=given, env={"MEMCTL_HOME": str(tmp_path / "fast")})
        slow = through_typer("remember", *args, input=given, env=home_of(tmp_path / "typer"))
        assert fast.returncode == slow.returncode
        same(fast.stdout, slow.stdout)
        same(fast.stderr, slow.stderr)
        assert fast.stdout.strip() if fast.returncode == 0 else fast.stderr.strip()


def test_bad_standard_input_is_refused_alike(tmp_path: Path) -> None:
    given = "binary\x00data"
    fast = run_cli("remember", input=given, env={"MEMCTL_HOME": str(tmp_path / "fast")})
    slow = through_typer("remember", "remember", input=given, env=home_of(tmp_path / "typer"))
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)
    assert fast.returncode != 0 and fast.stderr.count("\n") == 1
    listed = run_cli("list", "--format", "ids", env={"MEMCTL_HOME": str(tmp_path / "fast")})
    assert listed.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h", "text"],
        ["-i", "2", "text"],
        ["-i", "nan", "text"],
        ["--importance", "much", "text"],
        ["one", "two"],
        ["--unknown", "text"],
        ["-5"],
        ["--", "-text"],
        ["--json=yes", "text"],
        ["-t", "--json", "text"],
    ],
)
def test_what_the_fast_lane_does_not_take_goes_to_typer(args: list[str]) -> None:
    with pytest.raises(Refused):
        remember_args(args)


def test_a_short_option_joined_by_an_equals_sign_goes_to_typer() -> None:
    with pytest.raises(Refused):
        split_command(["remember", "-s=global", "text"])
    assert split_command(["remember", "--scope=global", "a=b"])[2] == ["--scope=global", "a=b"]


def test_both_parsers_take_the_same_options() -> None:
    typer_side, fast_side = options_both_ways("remember", remember_parser())
    assert typer_side == fast_side and fast_side[1] == ["text"]


def test_the_fast_lane_loads_no_typer(home: Path) -> None:
    stored, loaded = fast_lane_run(["remember", "we deploy with make release"])
    assert re.fullmatch(r"[0-9a-f]{32}", stored) and loaded == []
