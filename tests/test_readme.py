"""The README's Quick start, "Set up with your assistant" and the daily commands run as
written, in order.

The commands are read from README.md, so an edit that breaks one fails here. They run
in a directory laid out like a fresh clone (the repository's files, and this checkout's
.venv as the one ``./scripts/setup`` made), with a home directory of their own and the
real model; what the README says each does is checked (the deploy procedure first).
``./scripts/setup`` itself is not rerun (it installs packages; CI runs it right before
this suite): its flags are checked against the script.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP = re.compile(r"^\./scripts/setup((?: --[a-z]+)*)$")
QUESTION_ANSWER = "Tidepool deploys to production"


def section(title: str) -> str:
    """The text of the README section ``## title``, up to the next ``## ``."""
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


def steps(line: str) -> list[str]:
    return [step.strip() for step in line.split("&&")]


def clone(where: Path) -> Path:
    """A directory like a fresh clone after ./scripts/setup: the tracked files (linked) and
    this checkout's .venv."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for top in {name.split("/")[0] for name in tracked} | {".venv"}:
        (where / top).symlink_to(ROOT / top)
    return where


def environment(user: Path, cache: Path) -> dict[str, str]:
    """A person's shell: their own home, no MEMCTL_* settings (but no resident recall
    process left behind), no assistant binaries on PATH, an 80-column terminal."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCTL_", "OLLAMA_"))}
    return {
        **keep,
        "HOME": str(user),
        "XDG_CACHE_HOME": str(cache),
        "COLUMNS": "80",
        "PATH": "/usr/bin:/bin",
        "XDG_DATA_HOME": str(user / ".local" / "share"),
        "MEMCTL_RECALL_RESIDENT": "off",
    }


def run_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The block's lines as one shell script (an ``export`` holds for the lines after it),
    stopping at the first that fails; the setup step left out (see the module's doc)."""
    lines = []
    for line in block.splitlines():
        kept = [step for step in steps(line) if not SETUP.match(step)]
        if kept:
            lines.append(" && ".join(kept))
    script = "set -e\n" + "\n".join(lines) + "\n"
    return subprocess.run(
        ["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_every_setup_the_readme_runs_takes_flags_the_script_takes() -> None:
    accepted = set(re.findall(r"^\s+(--[a-z]+)\)", (ROOT / "scripts" / "setup").read_text(), re.M))
    setups = [
        step
        for block in shell_blocks(README)
        for line in block.splitlines()
        for step in steps(line)
        if step.startswith("./scripts/setup")
    ]
    assert setups, "the README no longer says to run ./scripts/setup"
    for step in setups:
        match = SETUP.match(step)
        assert match and set(match.group(1).split()) <= accepted, step
    assert (
        "./scripts/setup --test --bench && .venv/bin/python -m pytest -q"
        in (ROOT / ".ci" / "run").read_text()
    )


@pytest.fixture(scope="module")
def quick_start(
    tmp_path_factory: pytest.TempPathFactory, user_cache: Path
) -> subprocess.CompletedProcess[str]:
    where = clone(tmp_path_factory.mktemp("clone"))
    (block,) = shell_blocks(section("Quick start"))[:1]
    assert SETUP.match(steps(block.splitlines()[0])[0]), "the Quick start starts with setup"
    env = environment(tmp_path_factory.mktemp("user"), user_cache)
    done = run_block(block, where, env)
    done.args = where  # where it ran, for the assertions on its files
    return done


def test_the_quick_start_stores_the_fifteen_examples(
    quick_start: subprocess.CompletedProcess[str],
) -> None:
    assert quick_start.returncode == 0, quick_start.stderr
    assert "15 memories imported" in quick_start.stdout
    assert (Path(quick_start.args) / ".demo" / "memctl.db").is_file()


def test_the_quick_start_recalls_the_deploy_procedure_first(
    quick_start: subprocess.CompletedProcess[str],
) -> None:
    assert "no memories found" not in quick_start.stdout
    first = next(line for line in quick_start.stdout.splitlines() if line.startswith("│ 1 "))
    assert QUESTION_ANSWER[:16] in first, quick_start.stdout


def test_the_quick_start_question_in_other_words_is_answered_as_the_readme_shows(
    quick_start: subprocess.CompletedProcess[str], user_cache: Path, tmp_path: Path
) -> None:
    """The reworded question, run where the Quick start ran, prints the README's table: Sam's
    preference for small pull requests, labelled possible (the score may differ in its last
    digits)."""
    quick = section("Quick start")
    (block,) = shell_blocks(quick)[1:2]
    (shown,) = re.findall(r"```text\n(.*?)```", quick, flags=re.S)
    done = run_block(block, Path(quick_start.args), environment(tmp_path / "user", user_cache))
    assert done.returncode == 0, done.stderr
    assert shown.splitlines()[0] == "no clear match; possible:"
    assert masked(done.stdout) == masked(shown)
    assert scores(done.stdout) == pytest.approx(scores(shown), abs=SCORE_DIGITS)


def test_the_question_in_other_words_is_answered_alike_after_maintain(
    quick_start: subprocess.CompletedProcess[str], user_cache: Path, tmp_path: Path
) -> None:
    """The README tells a user to run ``memctl maintain`` from cron: over a copy of the
    Quick start's store, maintain changes nothing of the reworded question's answer (it
    once named the imported memories, and "when do we release to customers?" then put the TLS
    outage first)."""
    quick = section("Quick start")
    (block,) = shell_blocks(quick)[1:2]
    (shown,) = re.findall(r"```text\n(.*?)```", quick, flags=re.S)
    where = tmp_path / "clone"
    where.mkdir()
    (where / ".venv").symlink_to(ROOT / ".venv")
    shutil.copytree(Path(quick_start.args) / ".demo", where / ".demo")
    script = f".venv/bin/memctl --home .demo maintain\n{block}"
    done = run_block(script, where, environment(tmp_path / "user", user_cache))
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("no clear match") :]
    assert masked(table) == masked(shown)
    assert scores(table) == pytest.approx(scores(shown), abs=SCORE_DIGITS)


# How far a printed score may be from the README's: its last digits differ between
# machines (BLAS sums in another order); a change to ranking moves it further.
SCORE_DIGITS = 0.002


def masked(table: str) -> str:
    """A recall table with its scores' digits masked."""
    return re.sub(r"\d\.\d{4}", "0.0000", table)


def scores(table: str) -> list[float]:
    return [float(score) for score in re.findall(r"\d\.\d{4}", table)]


def test_set_up_then_every_daily_command_in_order(tmp_path: Path, user_cache: Path) -> None:
    """Set up with your assistant (it writes what the table says), then every daily
    command as written: ``ID`` is the id ``remember`` printed; a notes folder and a sync
    repository are there to use."""
    where = clone(tmp_path)
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)  # Claude Code and Codex have run on this machine
    (user / ".codex").mkdir()
    (user / "notes").mkdir()
    (user / "notes" / "vpn.md").write_text("# VPN\n\nThe VPN gateway runs WireGuard.\n")
    remote = tmp_path / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    (setup,) = shell_blocks(section("Set up with your assistant"))[:1]
    (daily,) = shell_blocks(section("Daily commands"))
    lines = [line.split("  #")[0].strip() for line in daily.splitlines()]
    assert lines[0].startswith("memctl remember ") and "memctl forget ID" in lines
    script = [
        setup,
        f"memctl sync init {remote}",
        f"ID=$({lines[0]}) && echo remembered $ID",
        *(line.replace(" ID", ' "$ID"') for line in lines[1:]),
    ]
    done = run_block("\n".join(script), where, environment(user, user_cache))
    assert done.returncode == 0, done.stdout + done.stderr

    server = json.loads((user / ".claude.json").read_text())["mcpServers"]["memctl"]
    assert Path(server["command"]).is_absolute() and server["command"].endswith("memctl")
    assert "memctl:begin" in (user / ".claude" / "CLAUDE.md").read_text()
    for skill in ("recall", "remember", "forget"):
        assert (user / ".claude" / "skills" / skill / "SKILL.md").is_file()
    hooks = json.loads((user / ".claude" / "settings.json").read_text())["hooks"]
    assert {"SessionStart", "Stop", "SessionEnd", "PreCompact"} <= set(hooks)
    assert "memctl" in json.dumps(hooks["SessionStart"])
    assert "[mcp_servers.memctl]" in (user / ".codex" / "config.toml").read_text()
    assert "memctl:begin" in (user / ".codex" / "AGENTS.md").read_text()

    said = lines[0].removeprefix("memctl remember ").strip('"')
    recalled = done.stdout.split("│ 1 ", 1)[1].split("│ 2 ", 1)[0]
    assert said[:20] in recalled, done.stdout
    undone = next(line for line in done.stdout.splitlines() if line.startswith("undid "))
    assert undone.startswith("undid edit ") and "(forget " in undone
    # `memctl list --since 7d` counts what it lists (the remembered fact at least)
    assert re.search(r"^[1-9]\d* memor(?:y|ies)$", done.stdout, flags=re.M), done.stdout


def test_the_viewer_starts_as_written_and_signs_in_once(tmp_path: Path, user_cache: Path) -> None:
    """`memctl ui` as the README writes it: it prints a sign-in link that opens the projects
    page (once) and serves nothing without it."""
    import http.cookiejar
    import signal
    import urllib.error
    import urllib.request

    where = clone(tmp_path)
    (block,) = shell_blocks(section("See it in a browser"))
    line = block.split("  #")[0].strip()
    assert line == "memctl ui"
    env = environment(tmp_path / "user", user_cache)
    env["PATH"] = f"{where / '.venv' / 'bin'}:{env['PATH']}"
    process = subprocess.Popen(
        ["sh", "-c", f"exec {line}"],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        said = process.stdout.readline()
        assert said.startswith("memctl ui: open http://127.0.0.1:"), process.stderr
        url = said.split("open ", 1)[1].strip()
        base = url.split("/login", 1)[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/projects", timeout=30)
        assert refused.value.code == 401
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(url, timeout=30) as page:
            assert page.url == f"{base}/projects" and "<h1>Projects</h1>" in page.read().decode()
        with pytest.raises(urllib.error.HTTPError) as spent:
            urllib.request.build_opener().open(url, timeout=30)
        assert spent.value.code == 403
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
