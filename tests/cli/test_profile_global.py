"""The global profile when every memory is a project's: it says where the profile lines
are and how to write a global one, through the real CLI; the MCP tool names no other
project."""

from __future__ import annotations

import json
from pathlib import Path

from memctl.api.recall import ProfileRequest, profile
from memctl.config.settings import load_settings
from memctl.context import Context
from tests.conftest import cli_ok
from tests.fakes import HashEmbedder


def a_project_with_a_profile_line(tmp_path: Path) -> Path:
    """A project directory whose one memory makes its profile's one line."""
    shop = tmp_path / "shop"
    shop.mkdir()
    cli_ok(
        "remember",
        "We deploy with make release",
        "-s",
        "project",
        "--category",
        "patterns",
        cwd=shop,
    )
    cli_ok("maintain", "--only", "profile", cwd=shop)
    return shop


def test_an_empty_global_profile_says_where_the_projects_profiles_are(
    home: Path, tmp_path: Path
) -> None:
    shop = a_project_with_a_profile_line(tmp_path)
    said = " ".join(cli_ok("profile", "-s", "global", cwd=shop).split())
    assert f"the global profile is empty: every profile line is a project's: {shop} (1)" in said
    assert '`memctl remember -s global --category profile "..."`' in said
    shown = json.loads(cli_ok("profile", "-s", "global", "--json", cwd=shop))
    assert shown["written"] == [] and shown["elsewhere"] == {str(shop): 1}
    # what the line says to do fills it
    cli_ok("remember", "I am a backend developer", "-s", "global", "--category", "profile")
    cli_ok("maintain", "--only", "profile", cwd=shop)
    said = cli_ok("profile", "-s", "global", cwd=shop)
    assert "I am a backend developer" in said and "is empty" not in said
    # the project's own view is as before: its lines and the global ones
    assert "We deploy with make release" in cli_ok("profile", cwd=shop)


def test_the_project_view_names_no_other_project(home: Path, tmp_path: Path) -> None:
    shop = a_project_with_a_profile_line(tmp_path)
    elsewhere = tmp_path / "blog"
    elsewhere.mkdir()
    said = cli_ok("profile", cwd=elsewhere)
    assert str(shop) not in said
    ctx = Context(load_settings(), embedder=HashEmbedder())
    try:
        assert profile(ctx, ProfileRequest()).elsewhere == {}
    finally:
        ctx.close()


def test_a_tool_named_only_as_what_was_chosen_against_is_no_stack(tmp_path: Path) -> None:
    """The walk's session-start block read "stack: Vim" beside "I prefer helix over vim
    these days.", and "PostgreSQL" cited "SQLite instead of Postgres"."""
    shop = tmp_path / "shop"
    shop.mkdir()
    for said in (
        "I prefer helix over vim these days.",
        "We decided to use SQLite instead of Postgres for the edge cache.",
        "The API keeps its sessions in Redis.",
    ):
        cli_ok("remember", said, cwd=shop)
    cli_ok("maintain", "--only", "profile", cwd=shop)
    shown = cli_ok("context", cwd=shop)
    stack = [line for line in shown.splitlines() if line.startswith("- stack:")]
    assert any("Redis" in line for line in stack) and any("SQLite" in line for line in stack)
    assert not any("Vim" in line or "PostgreSQL" in line for line in stack), shown
