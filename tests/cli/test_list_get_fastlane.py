"""`memctl list`, `memctl get` and `memctl sessions list|show` in the fast lane (no Typer)
print what the Typer commands print: the same output, errors and exit codes."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.api.memory import LinkRequest, RememberRequest, link, remember
from memctl.cli.fastlane import Refused
from memctl.cli.memory_out import get_args, get_parser, list_args, list_parser
from memctl.cli.sessions_out import list_parser as sessions_list_parser
from memctl.cli.sessions_out import sessions_args
from memctl.cli.sessions_out import show_parser as sessions_show_parser
from memctl.config import load_settings
from memctl.context import Context
from tests.conftest import (
    Shared,
    fast_lane_run,
    options_both_ways,
    run_cli,
    said_in_session,
    shared,
    through_typer,
)
from tests.fakes import HashEmbedder


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> tuple[Shared, str]:
    """Three memories (tags, categories, scopes, a relation) and a session message, stored
    once for the module through the API, and the id of the one with the relation; the
    tests only read them."""
    with shared(tmp_path_factory, user_cache, "memories") as place:
        with Context(load_settings(), embedder=HashEmbedder()) as ctx:
            made = [
                remember(ctx, RememberRequest(text, category=category, tags=tags, scope=scope))
                for text, category, tags, scope in (
                    ("We deploy with make release.", "patterns", ("ops",), None),
                    ("Alice reviews the billing code.", "profile", (), "global"),
                    ("The staging database restores nightly.", None, ("ops", "db"), None),
                )
            ]
            link(ctx, LinkRequest(made[0].memory.id, made[2].memory.id, "depends_on", 0.9))
            said_in_session(ctx, ["we deploy on Fridays"])
    return place, made[0].memory.id


def unstamped(shown: str) -> str:
    """A message's ``stored_at`` is the time it is read (a message is no stored memory)."""
    return re.sub(r"stored_at +\S+", "stored_at T", shown)


@pytest.mark.parametrize(
    "args",
    [
        ("list",),
        ("list", "--json", "--all-scopes", "--sort", "importance"),
        ("list", "-f", "ids", "-n", "2", "--tag", "ops", "--kind", "pinned", "--kind", "semantic"),
        ("list", "--category", "profile", "--state", "active", "--since", "7d", "--stored"),
        ("list", "--sort", "nonsense"),
        ("list", "--since", "soonish"),
        ("list", "-s", "billing-sevrice"),
        ("get", "ID"),
        ("get", "ID", "--json"),
        ("get", "s1#1"),
        ("get", "ffffffff"),
        ("sessions", "list", "--all-scopes"),
        ("sessions", "list", "--json", "-n", "5", "--client", "generic", "--since", "30d"),
        ("sessions", "list", "--until", "2000-01-01", "--stored"),
        ("sessions", "show", "s1"),
        ("sessions", "show", "s1", "--json", "-p", "1", "--page-size", "1"),
        ("sessions", "show", "nope"),
    ],
)
def test_the_fast_lane_prints_what_the_typer_command_prints(
    stored: tuple[Shared, str], args: tuple[str, ...]
) -> None:
    place, linked = stored
    command = [linked[:8] if arg == "ID" else arg for arg in args]
    fast = run_cli(*command, env=place.env, cwd=place.project)
    slow = through_typer(command[0], *command, env=place.env, cwd=place.project)
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)
    assert unstamped(fast.stdout) == unstamped(slow.stdout)
    assert fast.stdout.strip() if fast.returncode == 0 else fast.stderr.count("\n") == 1


def test_listing_a_scope_nothing_is_named_says_so(stored: tuple[Shared, str]) -> None:
    place, _ = stored
    typo = run_cli("list", "-s", "billing-sevrice", env=place.env, cwd=place.project)
    assert typo.returncode == 0, typo.stderr
    assert typo.stdout.splitlines() == [
        "no memories match",
        "no project or scope is named 'billing-sevrice': `memctl projects` lists them",
    ]
    for scope in ("global", "project", str(place.project)):  # known, nothing matches the tag
        empty = run_cli("list", "-s", scope, "--tag", "none", env=place.env, cwd=place.project)
        assert empty.stdout.splitlines() == ["no memories match"], scope


def test_a_listing_says_how_many_it_shows_of_how_many(stored: tuple[Shared, str]) -> None:
    """The last line counts what the filters find: all of it, or how many a limit shows."""
    place, _ = stored
    lines = [
        run_cli(*args, env=place.env, cwd=place.project).stdout.splitlines()
        for args in (["list"], ["list", "-n", "2"], ["sessions", "list", "--all-scopes"])
    ]
    assert lines[0][-1] == "3 memories"
    assert lines[1][-1] == "2 of 3 memories (-n shows more)"
    assert lines[2][-1] == "1 session"


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        ["--limit", "0"],
        ["-n", "-3"],
        ["--format", "xml"],
        ["--json=yes"],
        ["stray"],
        ["--scope"],
        ["--all"],
    ],
)
def test_what_the_list_fast_lane_does_not_take_goes_to_typer(args: list[str]) -> None:
    with pytest.raises(Refused):
        list_args(args)


@pytest.mark.parametrize("args", [[], ["-h"], ["a", "b"], ["-1"], ["--", "-abc"], ["a", "--j"]])
def test_what_the_get_fast_lane_does_not_take_goes_to_typer(args: list[str]) -> None:
    with pytest.raises(Refused):
        get_args(args)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["grep", "x"],
        ["list", "--help"],
        ["list", "-n", "0"],
        ["list", "stray"],
        ["show"],
        ["show", "s1", "--page", "0"],
        ["show", "s1", "--page-size", "-2"],
        ["show", "--", "-s1"],
    ],
)
def test_what_the_sessions_fast_lane_does_not_take_goes_to_typer(args: list[str]) -> None:
    with pytest.raises(Refused):
        sessions_args(args)


@pytest.mark.parametrize(
    ("command", "parser"),
    [
        ("list", list_parser),
        ("get", get_parser),
        ("sessions list", sessions_list_parser),
        ("sessions show", sessions_show_parser),
    ],
)
def test_both_parsers_take_the_same_options(
    command: str, parser: Callable[[], argparse.ArgumentParser]
) -> None:
    typer_side, fast_side = options_both_ways(command, parser())
    assert typer_side == fast_side


def test_the_fast_lane_loads_no_typer(stored: tuple[Shared, str]) -> None:
    place, linked = stored
    listed, loaded = fast_lane_run(["list", "--json"], env=place.env, cwd=place.project)
    assert len(json.loads(listed)) == 3 and loaded == []  # JSON: no rich either
    shown, loaded = fast_lane_run(["get", linked[:8]], env=place.env)
    assert "--depends_on(0.9)-->" in shown and loaded == ["rich"]
    sessions, loaded = fast_lane_run(["sessions", "list", "--all-scopes", "--json"], env=place.env)
    assert [s["id"] for s in json.loads(sessions)] == ["s1"] and loaded == []
