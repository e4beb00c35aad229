"""`memctl config path` and `memctl model info` as real processes: what a script reads
from them is whole and names the files memctl really uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

NARROW = {"COLUMNS": "80"}


@pytest.mark.fresh
def test_config_path_is_one_line_a_script_can_open(tmp_path: Path) -> None:
    home = tmp_path / ("a-data-directory-with-a-name-longer-than-any-terminal-is-wide-" * 2)
    env = {**NARROW, "MEMCTL_HOME": str(home)}
    done = run_cli("config", "path", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(home / "config.yaml")]  # not wrapped at 80
    assert run_cli("config", "set", "recall.limit", "7", env=env).returncode == 0
    assert "limit: 7" in Path(done.stdout.strip()).read_text()


def test_config_path_project_names_the_file_config_set_project_writes(home: Path) -> None:
    project = Path.cwd()
    (project / ".git").mkdir()
    nested = project / "src" / "deep"
    nested.mkdir(parents=True)
    done = run_cli("config", "path", "--project", cwd=nested)
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path.parent.parent == project  # found from a subdirectory: the project's root
    assert not path.exists()
    assert run_cli("config", "set", "--project", "recall.limit", "4", cwd=nested).returncode == 0
    assert "limit: 4" in path.read_text()


@pytest.mark.fresh
def test_model_info_says_which_embedder_made_the_stores_vectors(home: Path) -> None:
    before = json.loads(run_cli("model", "info", "--json").stdout)
    assert before["embedder"] == "hash"  # the tests' embedder (MEMCTL_EMBEDDER=hash)
    assert before["store_vectors"] is None  # nothing stored yet
    assert run_cli("remember", "Deploys go out on Fridays with make release.").returncode == 0
    after = json.loads(run_cli("model", "info", "--json").stdout)
    assert after["store_vectors"].endswith("hash (64-d)")  # its name and dimensions
    table = run_cli("model", "info").stdout
    assert f"store_vectors      {after['store_vectors']}" in table
    assert "ollama_model       -" in table  # not the configured embedder: shown as none
