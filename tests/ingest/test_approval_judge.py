"""An approval judge's rollout (Codex Desktop's guardian: a sub-agent asked, for each action
that needs approval, whether it may run) as a user's Codex folder and hooks hand it to
memctl: real rollouts of one session (tests/fixtures/transcripts/real/SOURCES.md), real
memctl processes. Each of the judge's turns quotes the session's transcript again; stored,
they doubled the session's words and made a digest of their own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import run_cli
from tests.ingesting import backfill_env

REAL = Path(__file__).parent.parent / "fixtures" / "transcripts" / "real"
JUDGE = REAL / "codex-cyspbot-guardian-019f4f1a.jsonl"
REVIEW = REAL / "codex-cyspbot-review-019f4f1c.jsonl"  # /review's sub-agent, same session
SESSION = "019f4f1a-6f8f-7211-80c2-30acbc3497a3"  # the session both name as theirs
# the words each of the judge's turns opens with, quoting the session after them
QUOTING = "The following is the Codex agent history"


def test_ingesting_a_judges_rollout_stores_nothing_and_says_why(tmp_path: Path) -> None:
    env = {"MEMCTL_HOME": str(tmp_path / "memctl"), "MEMCTL_LLM": "none"}
    done = run_cli("ingest", str(JUDGE), "--wait", env=env)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())  # wrapped at the width, where the file's path ends
    assert "is an approval judge's" in said and "no session stored" in said
    listed = run_cli("sessions", "list", "--all-scopes", "--json", env=env)
    assert json.loads(listed.stdout) == []
    memories = run_cli("list", "--all-scopes", "--json", env=env)
    assert json.loads(memories.stdout) == []


def test_backfill_keeps_a_real_sub_agent_and_passes_over_the_judge(tmp_path: Path) -> None:
    home = tmp_path / "user"
    day = home / ".codex" / "sessions" / "2026" / "07" / "11"
    day.mkdir(parents=True)
    shutil.copy(JUDGE, day / "rollout-2026-07-11T02-55-55-019f4f1a-6fe5.jsonl")
    shutil.copy(REVIEW, day / "rollout-2026-07-11T02-58-43-019f4f1c-ec5a.jsonl")
    env = {**backfill_env(home), "MEMCTL_HOME": str(tmp_path / "memctl")}
    done = run_cli("ingest", "--backfill", "--json", env=env)
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)
    assert (first["transcripts"], first["sessions"], first["failed"]) == (2, 1, 0)
    shown = run_cli("sessions", "show", SESSION, "--page-size", "1000", "--json", env=env)
    session = json.loads(shown.stdout)
    # titled by its order, not by the plugin list Codex Desktop sends first as a user turn
    assert session["session"]["title"].startswith("Review the code changes")
    contents = [m["content"] for m in session["messages"]]
    assert len(contents) == first["messages"]
    assert any(c.startswith("[subagent] Review the code changes") for c in contents)
    assert not any(QUOTING in c for c in contents)
    again = json.loads(run_cli("ingest", "--backfill", "--json", env=env).stdout)
    assert (again["messages"], again["failed"]) == (0, 0)
