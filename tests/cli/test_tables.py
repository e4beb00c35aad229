"""Tables fit an 80-column terminal: nothing cropped (runs keeps its tokens), nothing
wrapped that should not be (a long file name stays on one line of the import table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import run_cli

NARROW = {"COLUMNS": "80", "MEMCTL_LLM": "none"}
LONG_NAME = "a-very-long-file-name-for-the-deployment-procedure-of-the-billing-service.md"


def narrow(*args: str, env: dict[str, str] | None = None) -> list[str]:
    done = run_cli(*args, env=env or NARROW)
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


# --- what a person reads at 80 columns: no word broken, no text column squeezed ---------------

WORDS = re.compile(r"[\w./#-]{4,}")


def cut_from(part: str, word: str) -> bool:
    """Whether ``part`` is ``word`` cut with … (at its end or in its middle)."""
    head, mark, tail = part.partition("…")
    return bool(mark) and len(head) >= 4 and word.startswith(head) and word.endswith(tail)


def whole(lines: list[str], texts: list[str]) -> None:
    """Every long word of ``texts`` is on one line whole, or cut with …, never broken."""
    shown = "\n".join(lines)
    for word in {w for text in texts for w in WORDS.findall(text)}:
        assert word in shown or any(cut_from(part, word) for part in shown.split()), (word, shown)


def text_column_width(lines: list[str]) -> int:
    """The width of the last column of a rich table with a heavy header (┏━┳━┓)."""
    top = next(line for line in lines if line.startswith("┏"))
    return len(top.rstrip("┓").split("┳")[-1])


def test_what_a_person_reads_fits_80_columns_whole(tmp_path: Path) -> None:
    users_home = tmp_path / "user"
    (users_home / ".claude").mkdir(parents=True)
    (users_home / ".codex").mkdir()
    env = {**NARROW, "HOME": str(users_home), "CODEX_HOME": str(users_home / ".codex")}
    texts = [
        "Tidepool deploys to production with make release, only from the main branch.",
        "The production database is backed up every six hours to tidepool-backups-eu-west-1.",
    ]
    for text in texts:
        assert run_cli("remember", text, env=env).returncode == 0
    transcript = tmp_path / "t.txt"
    said = "I always deploy tidepool with make release after the smoke tests pass."
    transcript.write_text(f"user: {said}\nassistant: noted\n")
    ingested = run_cli(
        "--config",
        "maintain.tasks=dedup",
        "ingest",
        "--transcript",
        str(transcript),
        "--wait",
        env=env,
    )
    assert ingested.returncode == 0, ingested.stderr
    assert run_cli("maintain", env=env).returncode == 0
    for client in ("claude-code", "codex"):
        assert run_cli("install", client, env=env).returncode == 0

    for args in (("recall", "deploy tidepool production"), ("list",)):
        lines = narrow(*args, env=env)
        whole(lines, texts)
        assert text_column_width(lines) >= 20
    lines = narrow("recall", "deploy tidepool with make release", env=env)
    whole(lines, [said])  # the fact, and the message it was said in folded into it
    assert text_column_width(lines) >= 20
    lines = narrow("recall", "noted", env=env)  # a message no fact was distilled from
    assert text_column_width(lines) >= 20
    assert re.search(r"│ [0-9a-f-]{12}#2 +│", "\n".join(lines))  # the message's short id

    runs = narrow("runs", env=env)
    for kind in ("maintain", "ingest"):
        assert any(kind in line.split() for line in runs)
    counts = [r["counts"] for r in json.loads(run_cli("runs", "--json", env=env).stdout)]
    whole(runs, [name for c in counts for name in c])

    status = narrow("install", "status", env=env)
    whole(status, ["SessionStart", "SessionEnd", "PreCompact", "~/.claude", "claude-code"])
    assert not any(line.strip() in {",", "ate"} for line in status)
    assert len(narrow("status", env=env)) > 5
