"""What a new user meets in the first hour, through the real CLI: an empty context block
says why, oversize input is refused at once with the limit."""

from __future__ import annotations

from tests.conftest import run_cli

ZERO_BUDGETS = (
    "-c",
    "context.identity_budget=0",
    "-c",
    "context.essentials_budget=0",
    "-c",
    "context.recent_budget=0",
)


def test_an_empty_context_says_whether_the_budgets_or_the_memory_are_empty() -> None:
    assert "holds nothing" in run_cli("context").stdout
    assert run_cli("remember", "We deploy with make release from main.").returncode == 0
    done = run_cli(*ZERO_BUDGETS, "context")
    assert done.returncode == 0 and "every context budget is 0" in done.stdout
    assert "holds nothing" not in done.stdout
    small = run_cli("context", "--budget", "3").stdout
    assert "did not fit the budgets" in small and "--explain" in small


def test_oversize_queries_and_memories_are_refused_at_once_with_the_limit() -> None:
    megabyte = "x" * (1 << 20)
    done = run_cli("remember", "-", input=megabyte)
    assert done.returncode != 0 and "limit of 100,000 characters" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    done = run_cli("recall", "-", input=megabyte)
    assert done.returncode != 0 and "limit of 10,000 characters" in done.stderr
    done = run_cli("recall", "deploy " * 2000)
    assert done.returncode != 0 and "the limit is 10,000" in done.stderr
    assert "holds nothing" in run_cli("context").stdout  # nothing was stored
