"""The suite's fork server (tests/cli_server.py) runs a command as a fresh `python -m memctl`
runs it: the same output, errors and exit code, from the same directory, stdin and umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.conftest import cli_server, run_cli, server_env

# (arguments, stdin): a fast-lane and a Typer command, stdin, an error, a usage error
CASES: list[tuple[tuple[str, ...], str | None]] = [
    (("remember", "we deploy with fly", "--json"), None),
    (("remember",), "the staging host is blue"),
    (("list", "--json"), None),
    (("status",), None),
    (("recall", "deploy"), None),
    (("get", "ffffffff"), None),
    (("recal", "deploy"), None),
]


@pytest.mark.fresh
def test_a_forked_command_prints_what_a_fresh_process_prints(home: Path, tmp_path: Path) -> None:
    forked_home = tmp_path / "forked"
    for args, given in CASES:
        fresh = run_cli(*args, input=given)
        env = {**os.environ, "COLUMNS": "200", "MEMCTL_EMBEDDER": "hash"}
        server = cli_server({**env, "MEMCTL_HOME": str(forked_home)})
        assert server is not None
        code, out, err = server.run(
            list(args),
            None if given is None else given.encode(),
            {**env, "MEMCTL_HOME": str(forked_home)},
            os.getcwd(),
            60,
        )
        same = (code, len(out.splitlines()), err.decode().replace(str(forked_home), str(home)))
        assert same == (fresh.returncode, len(fresh.stdout.splitlines()), fresh.stderr), args
    assert sorted(p.name for p in forked_home.iterdir()) == sorted(p.name for p in home.iterdir())
    mode = stat.S_IMODE((forked_home / "memctl.db").stat().st_mode)
    assert mode == stat.S_IMODE((home / "memctl.db").stat().st_mode) == 0o600


def test_a_forked_command_runs_where_the_test_runs(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.md").write_text("# Deploys\n\nWe deploy with fly from the main branch.\n")
    assert run_cli("import", "notes.md").returncode != 0  # not in the project
    assert run_cli("import", "notes.md", cwd=elsewhere).returncode == 0
    assert "deploy with fly" in run_cli("list").stdout
    assert run_cli("recal", "x").stderr.startswith("memctl: error: No such command 'recal'")


def test_a_command_with_other_start_up_variables_runs_fresh() -> None:
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    assert cli_server(env) is None
    assert cli_server(dict(os.environ)) is not None


def test_an_mcp_servers_environment_is_one_the_fork_servers_serve(home: Path) -> None:
    """``server_env`` has the worker's start-up variables, so an MCP server a test starts
    through ``memctl_command`` is forked: without them each was a fresh process."""
    assert cli_server(server_env(home, MEMCTL_RECALL_RESIDENT="off")) is not None
