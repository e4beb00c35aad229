"""What a new user meets in the first hour, through the real CLI in a temporary HOME:
memctl on PATH with its man page, an empty context block that says why, oversize input
refused at once with the limit, and a purge that leaves nothing behind."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from memctl.integrations import shell
from tests.conftest import ROOT, python_c, run_cli

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


def test_a_first_session_that_left_no_memory_is_named_to_the_next_one() -> None:
    """Nothing distilled from it (no LLM, no rule matched): the next session is still told
    that its words are stored and how to search them, unless every budget is 0."""
    said = "user: Our staging database is called pelican-stage.\nassistant: ok\n"
    assert run_cli("-c", "llm=none", "ingest", "--wait", "-", input=said).returncode == 0
    block = run_cli("context").stdout
    assert block.startswith("<memctl-context>") and "session_search" in block, block
    assert "every context budget is 0" in run_cli(*ZERO_BUDGETS, "context").stdout


def test_a_recalled_message_of_two_codex_sessions_begun_together_opens_as_shown() -> None:
    """Codex's session ids (UUIDv7) open with their start time: two begun within a minute
    share their first 8 digits, so the id recall shows must say more of it."""
    for session, said in (
        ("01a227b0-2f48-7e23-b391-096c24bd7bb7", "nightly restore: 03:30 UTC"),
        ("01a227b0-1cea-7dd1-8915-16493432fd59", "the CI image is ghcr.io/reef/ci:24"),
    ):
        text = f"user: {said}\nassistant: ok\n"
        done = run_cli("-c", "llm=none", "ingest", "--session-id", session, "-", input=text)
        assert done.returncode == 0, done.stderr
    shown = run_cli("recall", "--explain", "-n", "1", "when does the nightly restore run").stdout
    (line,) = [ln for ln in shown.splitlines() if "open it:" in ln]
    command = line.split("memctl ", 1)[1].split()
    opened = run_cli(*command)
    assert opened.returncode == 0, opened.stderr
    assert "03:30 UTC" in opened.stdout
    both = run_cli("sessions", "show", "01a227b0")  # the candidates, as for a memory's id
    assert both.returncode != 0 and len(both.stderr.strip().splitlines()) == 1
    assert "01a227b0-2f48-" in both.stderr and "01a227b0-1cea-" in both.stderr


def test_remember_says_when_the_text_it_stored_lost_private_or_secret_parts() -> None:
    done = run_cli("remember", "key AKIAIOSFODNN7EXAMPLE and <private>my pin 4321</private> ok")
    assert done.returncode == 0 and re.fullmatch(r"[0-9a-f]{32}\n", done.stdout)
    assert "stored without 2 private or secret parts" in done.stderr, done.stderr
    mine = run_cli("remember", "the log shows [REDACTED] where the token was")  # as typed
    assert mine.returncode == 0 and mine.stderr == "", mine.stderr


def test_remembering_what_a_longer_memory_already_says_replaces_nothing() -> None:
    """The first hour's memory of a session, merged with an import's: "We deploy with make
    release from main. We deploy Tidepool with ..."; the README's `memctl remember "we deploy
    with make release from main"` superseded it (its slot's value ran on past the period).
    Another value still does, and says so in a line that marks where it is cut."""
    merged = (
        "We deploy with make release from main. We deploy Tidepool with `make release` from "
        "the main branch, after the staging smoke tests pass."
    )
    first = run_cli("remember", merged).stdout.strip()
    same = run_cli("remember", "we deploy with make release from main")
    assert same.returncode == 0 and "replaces" not in same.stderr, same.stderr
    other = run_cli("remember", "we deploy with fly now")
    assert other.returncode == 0
    (line,) = [s for s in other.stderr.splitlines() if f"replaces {first}" in s]
    assert "`memctl undo` brings it back): We deploy with make release from main." in line
    assert line.endswith("…") and len(line) < 200


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


def ended(pid: int) -> bool:
    """Whether the process is gone (or a zombie) within 10 s."""
    for _ in range(100):
        try:
            if "zombie" in Path(f"/proc/{pid}/status").read_text():
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def files_under(root: Path) -> set[str]:
    """Every file, link and directory under ``root``."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_completions_put_memctl_on_path_and_purge_leaves_nothing(tmp_path: Path) -> None:
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    (user / ".claude" / "settings.json").write_text('{"model": "opus"}\n')
    before = files_under(user)
    env = {
        "HOME": str(user),
        "PATH": "/usr/bin:/bin",
        "XDG_CACHE_HOME": str(user / ".cache"),  # the model cache a purge removes
        "MEMCTL_HOME": "",
    }
    done = run_cli("install", "completions", env={**env, "COLUMNS": "80"})  # a narrow terminal
    assert done.returncode == 0, done.stderr
    assert "not on PATH" in done.stdout and "$HOME/.local/bin:$PATH" in done.stdout
    # each note a line of its own, whole (the terminal folds it): the command to copy too
    assert 'add `export PATH="$HOME/.local/bin:$PATH"` to' in done.stdout
    assert f"backups in {user / '.local/share/memctl/backups'}" in done.stdout
    shell = {**env, "PATH": f"{user / '.local' / 'bin'}:/usr/bin:/bin"}
    found = subprocess.run(["sh", "-c", "memctl --version"], env=shell, capture_output=True)
    assert found.returncode == 0 and b"memctl" in found.stdout
    if shutil.which("man"):
        where = subprocess.run(["man", "-w", "memctl"], env=shell, capture_output=True, text=True)
        assert where.stdout.strip() == str(user / ".local/share/man/man1/memctl.1")
    assert (user / ".local/share/bash-completion/completions/memctl").is_file()
    for step in (("install", "claude-code"), ("init",), ("remember", "We deploy on Fridays.")):
        assert run_cli(*step, env=env).returncode == 0
    (user / ".cache" / "memctl").mkdir(parents=True)
    (user / ".cache" / "memctl" / "weights.bin").write_bytes(b"\0" * 16)
    resident = {**env, "MEMCTL_RECALL_RESIDENT": "on"}
    started = run_cli("daemon", "start", env=resident)
    assert "resident recall process" in started.stdout, started.stdout + started.stderr
    status = json.loads(run_cli("daemon", "status", "--json", env=resident).stdout)
    pid = int(status["pid"])
    # the process's count of requests in progress no longer stands for whether it runs
    assert status["running"] is True and status["requests_running"] == 0, status

    mine = run_cli("--home", str(user), "uninstall", "--purge", "--yes", env=env)
    assert mine.returncode != 0 and "holds your home directory" in mine.stderr
    refused = run_cli("uninstall", "--purge", env=env, input="")
    assert refused.returncode != 0 and "--yes" in refused.stderr
    assert (user / ".local" / "share" / "memctl" / "memctl.db").is_file()  # nothing removed
    done = run_cli("uninstall", "--purge", "--yes", env=resident)
    assert done.returncode == 0, done.stderr
    assert "stopped the resident recall process" in done.stdout
    assert ended(pid)
    assert files_under(user) == before
    assert (user / ".claude" / "settings.json").read_text() == '{"model": "opus"}\n'


def test_the_tests_keep_matplotlibs_files_out_of_the_real_home() -> None:
    pytest.importorskip("matplotlib")
    where = python_c(
        "import matplotlib; print(matplotlib.get_configdir())", check=True
    ).stdout.strip()
    assert Path(where).is_relative_to(tempfile.gettempdir())
    assert not Path(where).is_relative_to(Path.home() / ".config")


def new_shell(user: Path, script: str, shell: str = "sh") -> subprocess.CompletedProcess[str]:
    """``script`` in a new shell of a person whose login put ~/.local/bin on PATH (as most
    distributions do once it exists): their HOME, nothing else of this one."""
    env = {"HOME": str(user), "PATH": f"{user / '.local' / 'bin'}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    env["MEMCTL_RECALL_RESIDENT"] = "off"  # the README's set-up starts none either
    return subprocess.run(
        [shell, "-c", script], cwd=user, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_readmes_set_up_then_a_new_shell_then_purge_leaves_only_the_clone(
    tmp_path: Path,
) -> None:
    """The README's "Set up with your assistant", as written, in a fresh clone with HOME a
    temporary directory; then, in a new shell: `memctl --version` from PATH, `man memctl`,
    completion; then `memctl uninstall --purge --yes` takes out everything but the clone."""
    from tests.test_readme import clone, environment, run_block, section, shell_blocks

    (tmp_path / "clone").mkdir()
    where = clone(tmp_path / "clone")
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)  # Claude Code has run on this machine
    before, clone_before = files_under(user), sorted(p.name for p in where.iterdir())
    env = {**environment(user, user / ".cache"), "XDG_DATA_HOME": ""}
    setup = shell_blocks(section("Set up with your assistant"))[0]
    done = run_block(setup, where, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mcpServers" in (user / ".claude.json").read_text()

    version = new_shell(user, "memctl --version")
    assert version.returncode == 0 and version.stdout.startswith("memctl "), version.stderr
    if shutil.which("man"):
        page = new_shell(user, "MANPAGER=cat man memctl")
        assert page.returncode == 0, page.stderr
        assert "SYNOPSIS" in page.stdout and "memctl recall" in page.stdout
    if shutil.which("bash"):
        bash = user / ".local/share/bash-completion/completions/memctl"
        loader = next((p for p in shell.BASH_COMPLETION if Path(p).is_file()), None)
        load = f"source {loader}; _completion_loader memctl" if loader else f"source {bash}"
        if loader is None:  # install completions said to add this line to ~/.bashrc
            assert f"source{bash}" in "".join(done.stdout.split())  # folded at 80 columns
        words = "COMP_WORDS=(memctl rec); COMP_CWORD=1; _memctl memctl rec memctl"
        completed = new_shell(user, f'{load}; {words}; echo "${{COMPREPLY[@]}}"', "bash")
        assert completed.stdout.split() == ["recall"], completed.stderr

    purged = new_shell(user, "memctl uninstall --purge --yes")
    assert purged.returncode == 0, purged.stderr
    assert files_under(user) == before
    assert sorted(p.name for p in where.iterdir()) == clone_before
    assert new_shell(user, "memctl --version").returncode == 127  # not on PATH any more


def test_a_moved_clones_launcher_says_what_to_run_in_one_line(tmp_path: Path) -> None:
    user = tmp_path / "user"
    env = {"HOME": str(user), "PATH": "/usr/bin:/bin", "MEMCTL_HOME": ""}
    assert run_cli("install", "completions", env=env).returncode == 0
    checks = json.loads(run_cli("doctor", "--json", env=env).stdout)  # the man page's prose
    assert next(c for c in checks if c["name"] == "programs")["status"] == "ok"  # runs nothing
    launcher = user / ".local" / "bin" / "memctl"
    program = launcher.read_text().split("exec ", 1)[1].split()[0]
    gone = str(tmp_path / "moved-away" / ".venv" / "bin" / "memctl")
    launcher.write_text(launcher.read_text().replace(program, gone))  # as if the clone moved
    done = new_shell(user, "memctl --version")
    assert done.returncode == 127 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert gone in line and "./scripts/setup" in line and "install completions" in line
    checks = json.loads(run_cli("doctor", "--json", env=env).stdout)
    programs = next(c for c in checks if c["name"] == "programs")
    assert programs["status"] == "fail" and gone in programs["detail"]


def test_list_since_says_in_words_what_it_left_out_as_dated_earlier() -> None:
    """A session of 2026-01 captured today: `list --since 7d` lists none of its memories,
    and its last line read "6 more stored since then date from earlier"."""
    transcript = ROOT / "tests" / "fixtures" / "transcripts" / "claude-code.jsonl"
    assert run_cli("-c", "llm=none", "ingest", str(transcript), "--wait").returncode == 0
    shown = run_cli("list", "--since", "7d").stdout.splitlines()
    assert re.fullmatch(
        r"\d+ memories stored since then are dated earlier \(an older session or file\): "
        r"--stored lists them",
        shown[-1],
    ), shown


def test_an_uninstall_with_nothing_installed_says_so_not_nothing_to_undo(tmp_path: Path) -> None:
    """The walk's `uninstall --purge --yes` after `uninstall` opened with "nothing to undo"."""
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / ".cache"), "MEMCTL_HOME": ""}
    done = run_cli("uninstall", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no file of memctl's left to put back (nothing installed)\n"
