"""A check command on the whole project or on a part of it, by its arguments' shape, and
the command facts that follow: a project's test command is the run of its whole suite."""

from __future__ import annotations

from typing import Any

import pytest

from memctl.ingest.digest import build_digest
from memctl.ingest.extract_actions import action_facts
from memctl.ingest.run_scope import (
    ONE_FILE,
    SELECTED_FILES,
    SELECTED_TESTS,
    only_informs,
    run_scope,
)
from tests.ingest.test_ingest_digest import cc, parse, result, use


@pytest.mark.parametrize(
    ("step", "scope"),
    [
        # the whole project, whatever the runner
        ("npm test", ""),
        ("uv run pytest -x -q", ""),
        ("python -m pytest tests", ""),
        ("go test ./...", ""),
        ("cargo test --workspace", ""),
        ("cargo test --release -- --nocapture", ""),
        ("cargo test 2>&1", ""),  # the shell's redirection
        ("cargo test --features postgres", ""),  # an option's value is no pattern
        ("npx vitest run --reporter dot", ""),
        ("mix test", ""),
        ("ruff check src tests", ""),
        ("npx tsc -p tsconfig.app.json", ""),  # a configuration file names no part
        ("python manage.py test", ""),  # an interpreter's script is the runner
        ("bash scripts/test.sh", ""),
        ('uv run pytest -m "not slow"', ""),
        # a part of it
        ("npm test -- --run src/agents/plugins/__tests__/reasoning.test.ts", ONE_FILE),
        ("python3 -m pytest tests/test_find_project_sessions.py -v", ONE_FILE),
        ("uv run ruff format app/export.py", ONE_FILE),
        ("mix test test/hooks_test.exs:42", ONE_FILE),
        ("go test ./store/cache_test.go ./store/lru_test.go", SELECTED_FILES),
        ("pytest 'tests/test_*.py'", SELECTED_FILES),
        ("pytest tests/test_cache.py::test_expiry", SELECTED_TESTS),
        ("cargo test store::tests::expiry", SELECTED_TESTS),
        ("cargo test expiry", SELECTED_TESTS),  # a bare name is cargo's filter
        ("cargo test -- expiry --nocapture", SELECTED_TESTS),
        ("yarn jest retries", SELECTED_TESTS),
        ("npx vitest run cart", SELECTED_TESTS),
        ("pytest -k 'retry and not slow'", SELECTED_TESTS),
        ("go test -run=TestRetry ./...", SELECTED_TESTS),
        ("yarn jest --testNamePattern retries", SELECTED_TESTS),
        ("mvn test -Dtest=CheckoutTest", SELECTED_TESTS),
        ("uv run pytest -m browser -v", SELECTED_TESTS),
    ],
)
def test_a_runs_scope_by_the_shape_of_its_arguments(step: str, scope: str) -> None:
    assert run_scope(step) == scope


def test_a_run_that_prints_about_its_runner_checks_nothing() -> None:
    assert only_informs("uv run pytest --markers")
    assert only_informs("npx jest --listTests")
    assert not only_informs("uv run pytest -m unit -v")


def _session(*commands: str) -> list[dict[str, Any]]:
    """A session that ran each command, and each passed."""
    records = [cc("user", "Make the checkout tests pass", 1)]
    for n, command in enumerate(commands, start=1):
        records += [
            cc("assistant", use(n, "Bash", command=command), 2 * n),
            cc("user", result(n, "Tests: 12 passed"), 2 * n + 1),
        ]
    return records


def _command_facts(*commands: str) -> list[str]:
    messages, _ = parse(_session(*commands))
    facts = action_facts(build_digest(messages, 6, 500), "session:s1")
    return [f.content for f in facts if f.tags == ["command"]]


def test_the_suite_run_is_the_projects_command_not_a_shorter_one_file_run() -> None:
    """The one-file run is shorter; the suite's run is the project's test command."""
    assert _command_facts("npx vitest a.test.ts", "npx vitest run --reporter dot") == [
        "tests run with `npx vitest run --reporter dot` (passed on 2026-03-13)"
    ]


def test_a_one_file_run_alone_is_kept_and_says_so() -> None:
    """And neither a run that prints the runner's markers nor a clean-up of the build's
    directories (a real fresh session's) says how the project runs."""
    facts = _command_facts(
        "uv run pytest tests/test_export.py -q",
        "uv run pytest --markers",
        "rm -rf .venv build dist *.egg-info",
    )
    assert facts == [
        "tests run, on one file only, with `uv run pytest tests/test_export.py -q` "
        "(passed on 2026-03-13)"
    ]
