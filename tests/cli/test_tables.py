"""Tables fit an 80-column terminal: nothing cropped (runs keeps its tokens), nothing
wrapped that should not be (a long file name stays on one line of the import table)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

NARROW = {"COLUMNS": "80", "MEMCTL_LLM": "none"}
LONG_NAME = "a-very-long-file-name-for-the-deployment-procedure-of-the-billing-service.md"


def narrow(*args: str) -> list[str]:
    done = run_cli(*args, env=NARROW)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, done.stdout
    return lines


def test_every_table_fits_80_columns(tmp_path: Path) -> None:
    for text in (
        "we deploy with make ship from the main branch every Friday after the tests pass",
        "the staging database lives at db-staging.internal.example.com port 5432",
    ):
        assert run_cli("remember", "--category", "entities", text, env=NARROW).returncode == 0
    transcript = tmp_path / "t.txt"
    transcript.write_text(
        "user: I prefer tabs over spaces in every language.\nassistant: noted\n"
        "user: We decided to use PostgreSQL 16 for the billing service.\n"
    )
    run_cli("ingest", "--transcript", str(transcript), "--wait", env=NARROW)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / LONG_NAME).write_text("# Deploys\n\nWe deploy with make ship on Fridays.\n")
    # the import table keeps a long file name on one line, cut in the middle
    (row,) = [line for line in narrow("import", str(docs)) if line.strip().startswith("/")]
    name, status = row.split()[:2]
    assert "…" in name and name.endswith("-service.md") and status == "imported"
    # runs keeps its tokens column
    runs = narrow("runs")
    header = next(line for line in runs if "run" in line and "age" in line)
    assert "tokens" in header and "decisions" in header
    assert any("create" in line for line in runs)
    for command in (("list",), ("events",), ("status",), ("recall", "deploy")):
        assert len(narrow(*command)) > 1
