"""The entry point: --version before any import, and a Typer app holding only the group run."""

from __future__ import annotations

import json

import pytest
import typer.main

from memctl.cli.entry import command_of
from memctl.cli.main import COMMANDS, build_app
from tests.conftest import python_c, run_cli


def test_every_command_is_mapped_to_its_module() -> None:
    group = typer.main.get_group(build_app())
    assert set(group.commands) == set(COMMANDS)


def test_a_group_alone_runs_its_command() -> None:
    group = typer.main.get_group(build_app("recall"))
    assert set(group.commands) == {"recall", "profile"}


def test_command_of_skips_the_global_options() -> None:
    assert command_of(["--home", "h", "-c", "a=b", "recall", "x"]) == "recall"
    assert command_of(["--config=a=b", "list"]) == "list"
    assert command_of(["--version"]) is None and command_of([]) is None


def test_version_loads_neither_typer_nor_the_core() -> None:
    probe = (
        "import sys\nsys.argv = ['memctl', '--home', 'x', '--version']\n"
        "from memctl.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('typer', 'click', 'rich', 'memctl.config') if m in sys.modules))"
    )
    done = python_c(probe)
    assert done.stdout.splitlines() == ["memctl 0.1.0", "[]"]


@pytest.mark.fresh
def test_version_help_and_unknown_commands_as_processes() -> None:
    assert run_cli("--version").stdout == "memctl 0.1.0\n"
    assert "recall" in run_cli("--help").stdout
    unknown = run_cli("recal", "x")
    assert unknown.returncode == 2 and "No such command" in unknown.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("recal", "x"), "Did you mean 'recall'?"),
        (("view",), "Did you mean 'ui'?"),  # as another tool names it
        (("history", "1234"), "Did you mean 'events'?"),
        (("install", "claude"), "Did you mean 'claude-code'?"),
        (("recall", "--limt", "3", "x"), "(did you mean --limit?)"),
        (("list", "--format", "xml"), "'xml' is not one of"),
        (("get",), "Missing argument"),
    ],
)
def test_a_usage_mistake_is_one_line_with_the_closest_spelling(
    args: tuple[str, ...], said: str
) -> None:
    done = run_cli(*args)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("memctl: error: ") and said in line and "-h` for help" in line


def test_a_group_alone_still_shows_its_help() -> None:
    done = run_cli("config")
    assert done.returncode == 2 and "show" in done.stderr and "Usage:" in done.stderr


@pytest.mark.fresh
def test_tag_is_spelled_the_same_everywhere_and_tags_still_works() -> None:
    made = run_cli("remember", "-t", "a", "--tags", "b,c", "tagged text", "--json")
    memory = json.loads(made.stdout)
    assert memory["tags"] == ["a", "b", "c"]
    assert run_cli("update", memory["id"], "--tags", "x").returncode == 0  # the old spelling
    assert run_cli("update", memory["id"], "--tag", "y", "-t", "z").returncode == 0
    (listed,) = json.loads(run_cli("list", "--format", "json").stdout)
    assert listed["tags"] == ["y", "z"]


def test_every_command_that_tags_spells_the_option_tag_in_its_help() -> None:
    """Forked: the test above runs tagging in fresh processes; the help is the same text."""
    for command in ("remember", "update", "import", "ingest"):
        shown = run_cli(command, "--help").stdout
        assert "--tag" in shown and "--tags" not in shown, command


def test_list_takes_format_like_recall() -> None:
    ids = {run_cli("remember", text).stdout.strip() for text in ("one thing", "another thing")}
    assert set(run_cli("list", "--format", "ids").stdout.split()) == ids
    assert run_cli("list", "-f", "json").stdout == run_cli("list", "--json").stdout
    assert run_cli("list", "--format", "xml").returncode == 2


def test_recall_for_a_hook_loads_no_rich(home: object) -> None:
    """A session-start hook's `recall --format context` prints plain text: rich stays out."""
    probe = (
        "import sys\nsys.argv = ['memctl', 'recall', '--format', 'context', 'deploy']\n"
        "from memctl.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('RICH', any(m.startswith('rich') for m in sys.modules))"
    )
    done = python_c(probe)
    assert "<memctl-context>" in done.stdout and done.stdout.splitlines()[-1] == "RICH False"
