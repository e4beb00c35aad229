"""Codex's config.toml is Codex's file too: memctl changes its own table and key, and
keeps every byte Codex or the user wrote, before and after memctl's part."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memctl.clients import codex, formats
from memctl.clients.base import Launcher, Where
from memctl.integrations import setup

RUN = Launcher(("/opt/memctl/bin/memctl", "--home", "/data/memctl"))
# What Codex appends to the end of config.toml when the user trusts hooks and a folder
# and changes the TUI (its own comment included).
CODEX_STATE = """\

# written by Codex
[hooks.state."/h/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:0f1e"

[projects."/work/shop"]
trust_level = "trusted"

[tui]
notifications = true
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "user" / ".codex").mkdir(parents=True)
    return tmp_path / "user"


def config(home: Path) -> Path:
    return home / ".codex" / "config.toml"


def init(home: Path) -> setup.Outcome:
    where = Where(home, None, {"PATH": ""})
    return setup.init(setup.InitRequest(tools=("codex",)), where, RUN, home.parent / "data")


def uninstall(home: Path, command: str = "init") -> setup.Removal:
    where = Where(home, None, {"PATH": ""})
    return setup.uninstall(command, ("codex",), where, RUN, home.parent / "data", False)


def test_init_again_after_codex_appended_its_state_keeps_every_byte_of_it(home: Path) -> None:
    config(home).write_text('# mine\nmodel = "o3"  # the fast one\n')
    init(home)
    with open(config(home), "a") as out:  # Codex appends after memctl's table
        out.write(CODEX_STATE)
    written = config(home).read_text()
    init(home)
    assert config(home).read_text() == written  # nothing of memctl's changed: no write
    moved = Launcher(("/usr/local/bin/memctl", "mcp-home"))  # memctl moved: its entry changes
    setup.init(
        setup.InitRequest(tools=("codex",)),
        Where(home, None, {"PATH": ""}),
        moved,
        home.parent / "data",
    )
    text = config(home).read_text()
    assert text.startswith('# mine\nmodel = "o3"  # the fast one\n')
    assert CODEX_STATE.strip() in text
    assert tomllib.loads(text)["mcp_servers"]["memctl"]["command"] == "/usr/local/bin/memctl"

    removal = uninstall(home)
    assert removal.cleaned == [str(config(home))]  # Codex changed it: only memctl's part out
    left = config(home).read_text()
    assert left.startswith('# mine\nmodel = "o3"  # the fast one\n')
    assert CODEX_STATE.strip() in left and "memctl" not in left


def test_the_server_is_required_and_its_tools_approved_for_codex_exec(home: Path) -> None:
    init(home)
    entry = tomllib.loads(config(home).read_text())["mcp_servers"]["memctl"]
    assert entry == {
        "command": "/opt/memctl/bin/memctl",
        "args": ["--home", "/data/memctl", "mcp"],
        "required": True,
        "default_tools_approval_mode": "approve",
    }


def test_keys_the_user_added_to_memctls_table_stay(home: Path) -> None:
    init(home)
    with open(config(home), "a") as out:
        out.write("startup_timeout_sec = 30\n")  # inside [mcp_servers.memctl], by hand
    init(home)
    entry = tomllib.loads(config(home).read_text())["mcp_servers"]["memctl"]
    assert entry["startup_timeout_sec"] == 30 and entry["required"] is True


def test_markers_of_older_versions_give_back_what_codex_wrote_inside_them(home: Path) -> None:
    legacy = (
        'model = "o3"\n\n# memctl:begin\n[mcp_servers.memctl]\ncommand = "memctl"\n'
        'args = ["mcp"]\n' + CODEX_STATE + "# memctl:end\n"
    )
    config(home).write_text(legacy)
    init(home)
    text = config(home).read_text()
    assert "memctl:begin" not in text and "memctl:end" not in text
    assert CODEX_STATE.strip() in text
    assert tomllib.loads(text)["mcp_servers"]["memctl"]["required"] is True
    uninstall(home)  # the file changed since: memctl's table out, Codex's state kept
    assert CODEX_STATE.strip() in config(home).read_text()


def test_a_memctl_table_that_runs_something_else_is_left_alone(home: Path) -> None:
    mine = '[mcp_servers.memctl]\ncommand = "/opt/other/server"\nargs = []\n'
    config(home).write_text(mine)
    outcome = init(home)
    assert config(home).read_text() == mine
    assert any("runs something else" in note for note in outcome.notes)


def test_notify_goes_before_every_table_and_leaves_with_uninstall(home: Path) -> None:
    config(home).write_text('model = "o3"\n' + CODEX_STATE)
    where = Where(home, None, {"PATH": ""})
    request = setup.InstallRequest("codex", notify=True)
    setup.install(request, where, RUN, home.parent / "data")
    text = config(home).read_text()
    assert tomllib.loads(text)["notify"][-3:] == ["hook", "codex", "notify"]
    assert text.index("notify") < text.index("[hooks.state")
    assert codex.hooks_installed(where) == [*codex.EVENTS, "notify"]
    with open(config(home), "a") as out:
        out.write('\n[projects."/other"]\ntrust_level = "trusted"\n')
    uninstall(home, "install")
    left = tomllib.loads(config(home).read_text())
    assert "notify" not in left and left["projects"]["/other"]["trust_level"] == "trusted"
    assert left["hooks"]["state"] and left["tui"] == {"notifications": True}


def test_a_toml_file_that_does_not_parse_is_named_and_left_alone(home: Path) -> None:
    config(home).write_text("model = \n")
    outcome = init(home)
    assert config(home).read_text() == "model = \n"
    assert any(str(config(home)) in note and "TOML" in note for note in outcome.notes)
    with pytest.raises(formats.MalformedConfig):
        formats.set_toml(config(home), b"[a]\nx = 1\n[a]\n", ("b",), 1)
