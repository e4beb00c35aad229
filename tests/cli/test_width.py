"""Every command's human output fits an 80-column terminal (issue 37): each one runs as a real
process with COLUMNS=80 over a small real store holding long words, long paths and CJK text,
and no line is wider than 80 display cells (a CJK character takes two)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.cells import cell_len

from memctl.cli.init import FOUND_WIDTH, found_width
from memctl.cli.render import fit
from tests.conftest import Shared, run_cli, shared

WIDTH = 80
NARROW = {"COLUMNS": str(WIDTH), "MEMCTL_LLM": "none"}
TEXTS = (
    "Tidepool deploys to production with make release, only from the main branch, "
    "after the smoke tests in tidepool-integration-suite-for-the-billing-service pass.",
    "The production database is backed up every six hours to "
    "s3://tidepool-backups-eu-west-1/postgres/nightly-and-hourly-snapshots/ by cron.",
    "部署流程：每周五从主分支用 make release 发布到生产环境，先跑冒烟测试再发布。",
)
SAID = (
    "user: I always deploy tidepool with make release after the smoke tests pass, "
    "and the staging host is db-staging.internal.tidepool.example.com port 5432.\n"
    "assistant: Noted: make release, after the smoke tests; staging on port 5432.\n"
    "user: 我们决定计费服务使用 PostgreSQL 16，因为它支持逻辑复制和分区表。\n"
)


def widest(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory, user_cache: Path
) -> tuple[Shared, dict[str, str]]:
    """A store with memories, a session, runs and events, and two clients' hooks installed
    (built once for the module); the environment to run memctl in it at 80 columns."""
    with shared(tmp_path_factory, user_cache, "width") as place:
        tmp_path = place.project.parent
        users_home = tmp_path / "user"
        (users_home / ".claude").mkdir(parents=True)
        (users_home / ".codex").mkdir()
        env = {**NARROW, "HOME": str(users_home), "CODEX_HOME": str(users_home / ".codex")}
        for text in TEXTS:
            assert run_cli("remember", "--category", "entities", text, env=env).returncode == 0
        transcript = tmp_path / "a-transcript-with-a-rather-long-name-for-the-tidepool-deploys.txt"
        transcript.write_text(SAID)
        done = run_cli("ingest", "--transcript", str(transcript), "--wait", env=env)
        assert done.returncode == 0, done.stderr
        assert run_cli("maintain", env=env).returncode == 0
        for client in ("claude-code", "codex"):
            assert run_cli("install", client, "--per-prompt", env=env).returncode == 0
        prompt = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "deploy?"}
        fired = run_cli(
            "hook", "claude-code", "UserPromptSubmit", input=json.dumps(prompt), env=env
        )
        assert fired.returncode == 0, fired.stderr
    return place, env


def commands(env: dict[str, str], project: Path) -> list[tuple[str, ...]]:
    listed = json.loads(run_cli("list", "--json", env=env, cwd=project).stdout)
    memory = listed[0]["id"]
    sessions = json.loads(run_cli("sessions", "list", "--json", env=env, cwd=project).stdout)
    session = sessions[0]["id"]
    return [
        ("recall", "deploy tidepool production"),
        ("recall", "部署 生产环境"),
        ("recall", "--explain", "staging host smoke tests"),
        ("recall", "--why-not", memory, "部署"),
        ("list",),
        ("get", memory),
        ("status",),
        ("projects",),
        ("runs",),
        ("events",),
        ("events", memory),
        ("context",),
        ("context", "--explain"),
        ("graph",),
        ("profile",),
        ("sessions", "list"),
        ("sessions", "show", session),
        ("sessions", "grep", "smoke tests"),
        ("sessions", "expand", f"{session}#1-2"),
        ("graph", "PostgreSQL"),
        ("install", "status"),
        ("doctor",),
    ]


@pytest.mark.fresh
def test_install_status_fits_80_columns_with_every_word_whole(
    store: tuple[Shared, dict[str, str]],
) -> None:
    place, env = store  # before the test below: the hook ran "just now"
    shown = run_cli("install", "status", env={**env, **place.env}, cwd=place.project).stdout
    assert widest(shown) <= WIDTH and "…" not in shown, shown
    header = next(line for line in shown.splitlines() if "tool" in line)
    assert header.split() == [
        "tool",
        "found",
        "mcp",
        "instructions",
        "hooks",
        "last",
        "run",
        "captured",
    ]
    fired = next(line for line in shown.splitlines() if "UserPromptSubmit" in line)
    assert "just now" in fired  # each hook's last run on its own line


def test_every_command_fits_80_columns(store: tuple[Shared, dict[str, str]], home: Path) -> None:
    place, given = store
    mine = place.copy(home)  # recall touches what it finds
    env = {**given, **mine.env}
    too_wide = {}
    for args in commands(env, mine.project):
        done = run_cli(*args, env=env, cwd=mine.project)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert done.stdout.strip(), args  # each shows something a person reads
        if widest(done.stdout) > WIDTH:
            too_wide[" ".join(args)] = done.stdout
    assert not too_wide, "\n\n".join(f"$ memctl {k}\n{v}" for k, v in too_wide.items())


def test_a_folded_line_keeps_every_word_and_goes_on_under_its_text() -> None:
    line = "  >[12] user: we deploy\twith make release; 我们决定计费服务使用 PostgreSQL 16 today"
    folded = fit(line, 30).splitlines()
    assert len(folded) > 1 and max(map(cell_len, folded)) <= 30
    assert all(part.startswith(" " * len("  >[12] ")) for part in folded[1:])
    assert " ".join(" ".join(folded).split()) == " ".join(line.split())
    assert fit("short\n\n- kept", 30) == "short\n\n- kept"


def test_install_status_gives_its_found_paths_the_room_a_wider_terminal_has() -> None:
    """The found column takes what the other columns (and the table's edges) leave, 12 at
    least: on 80 columns the paths are cut, on a wider terminal not."""
    header = ["tool", "found", "mcp", "instructions", "hooks", "last run", "captured"]
    row = ["claude-code", "~/.local/bin/claude", "yes", "yes", "SessionStart\nStop", "never", "2m"]
    others = sum(len(cell) for cell in ("claude-code", "yes", "instructions", "SessionStart"))
    others += len("last run") + len("captured")
    assert found_width([header, row], 200) == 200 - others - 6 - 2
    assert found_width([header, row], 80) == max(FOUND_WIDTH, 80 - others - 8)
    assert found_width([header, row], 40) == FOUND_WIDTH
