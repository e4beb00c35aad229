"""memctl init / install / uninstall against the clients' files in a temporary HOME."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from memctl.clients import codex, opencode
from memctl.clients.base import Launcher, Where
from memctl.config.settings import ASKING_ENV, SESSION_ARGUMENT
from memctl.integrations import setup
from tests.conftest import run_cli

RUN = Launcher(("/opt/memctl/bin/memctl", "--home", "/data/memctl"))


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """A HOME where all four clients have been used: each has its config directory and
    some settings of the user's own."""
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text('{"theme": "dark", "mcpServers": {"other": {}}}\n')
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}})
    )
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "o3"\n\n[projects."/x"]\ntrust = 1\n')
    (home / ".codex" / "AGENTS.md").write_text("# My rules\n\nBe brief.\n")
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".cursor").mkdir()
    return home


def place(home: Path, project: Path | None = None) -> Where:
    return Where(home, project, {"PATH": ""})


def init(home: Path, **kwargs: object) -> setup.Outcome:
    request = setup.InitRequest(**kwargs)  # type: ignore[arg-type]
    return setup.init(request, place(home), RUN, home.parent / "data")


def test_init_registers_the_server_and_instructions_in_each_format(user: Path) -> None:
    outcome = init(user)
    assert outcome.clients == ["claude-code", "codex", "opencode", "cursor"]
    claude = json.loads((user / ".claude.json").read_text())
    assert claude["theme"] == "dark" and "other" in claude["mcpServers"]
    assert claude["mcpServers"]["memctl"] == {
        "type": "stdio",
        "command": "/opt/memctl/bin/memctl",
        "args": ["--home", "/data/memctl", "mcp"],
        "env": {},
        "alwaysLoad": True,
    }
    toml = tomllib.loads((user / ".codex" / "config.toml").read_text())
    assert toml["model"] == "o3" and toml["projects"]["/x"] == {"trust": 1}
    assert toml["mcp_servers"]["memctl"]["args"] == ["--home", "/data/memctl", "mcp"]
    opencode = json.loads((user / ".config" / "opencode" / "opencode.json").read_text())
    assert opencode["mcp"]["memctl"]["command"][-1] == "mcp"
    cursor = json.loads((user / ".cursor" / "mcp.json").read_text())
    assert cursor["mcpServers"]["memctl"]["command"] == "/opt/memctl/bin/memctl"
    agents = (user / ".codex" / "AGENTS.md").read_text()
    assert agents.startswith("# My rules\n\nBe brief.\n") and "memory_search" in agents
    for skill in ("recall", "remember", "forget"):
        assert "memctl" in (user / ".claude" / "skills" / skill / "SKILL.md").read_text()
    assert any("Cursor's settings" in note for note in outcome.notes)
    offer = "to distil with claude-code's own model: `memctl config set llm claude-code`"
    assert any(note.startswith(offer) and "model quota" in note for note in outcome.notes)


def test_init_offers_the_assistants_model_only_while_no_llm_is_chosen(user: Path) -> None:
    chosen = init(user, tools=("codex",), llm="ollama")  # the user picked an LLM already
    assert not any("memctl config set llm" in note for note in chosen.notes)
    offered = init(user, tools=("codex", "cursor"), llm="none", force=True)
    assert any("`memctl config set llm codex`" in note for note in offered.notes)


def test_init_twice_changes_nothing_and_undo_restores_every_byte(user: Path) -> None:
    before = snapshot(user)
    init(user)
    after_first = snapshot(user)
    second = init(user)
    assert second.plan.files() == [] and second.backup is None
    assert snapshot(user) == after_first
    removal = setup.uninstall("init", (), place(user), RUN, user.parent / "data", False)
    assert removal.undone.restored and removal.undone.removed
    assert snapshot(user) == before
    assert not (user / ".claude" / "skills").exists()  # directories it made are gone too


def test_a_second_run_replaces_only_its_own_block(user: Path) -> None:
    agents = user / ".codex" / "AGENTS.md"
    agents.write_text(
        "# Mine\n\n<!-- memctl:begin -->\nold words\n<!-- memctl:end -->\n\n## After\nkeep\n"
    )
    init(user, tools=("codex",))
    text = agents.read_text()
    assert text.startswith("# Mine\n\n<!-- memctl:begin -->\n## Long-term memory")
    assert text.endswith("<!-- memctl:end -->\n\n## After\nkeep\n")
    assert "old words" not in text and text.count("memctl:begin") == 1


def test_malformed_configs_are_reported_and_left_untouched(user: Path) -> None:
    (user / ".claude.json").write_text('{"theme": "dark",')
    (user / ".codex" / "config.toml").write_text("model = \n")
    outcome = init(user)
    assert (user / ".claude.json").read_text() == '{"theme": "dark",'
    assert (user / ".codex" / "config.toml").read_text() == "model = \n"
    assert any(".claude.json: not valid JSON" in note for note in outcome.notes)
    assert any("config.toml: not valid TOML" in note for note in outcome.notes)
    assert (user / ".claude" / "CLAUDE.md").exists()  # the other files are still set up


def test_dry_run_prints_a_diff_and_writes_nothing(user: Path, tmp_path: Path) -> None:
    before = snapshot(user)
    done = run_cli("init", "--dry-run", env={"HOME": str(user), "PATH": ""}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"--- a{user}/.claude.json" in done.stdout
    assert (
        f"+++ b{user}/.claude/CLAUDE.md" in done.stdout and "+[mcp_servers.memctl]" in done.stdout
    )
    assert snapshot(user) == before
    env = {"HOME": str(user), "PATH": ""}
    assert run_cli("init", env=env, cwd=tmp_path).returncode == 0
    set_up = snapshot(user)
    undo = run_cli("init", "--undo", "--dry-run", env=env, cwd=tmp_path)  # no preview: refused
    assert undo.returncode == 2 and "--undo takes no --dry-run" in undo.stderr
    assert snapshot(user) == set_up  # not undone for real


@pytest.mark.fresh
def test_a_tool_that_is_not_there_is_named_and_left_alone(tmp_path: Path) -> None:
    empty = tmp_path / "nobody"
    empty.mkdir()
    done = run_cli("install", "cursor", env={"HOME": str(empty), "PATH": ""}, cwd=tmp_path)
    assert done.returncode == 3 and done.stdout == ""  # not found: a one-line error
    (line,) = done.stderr.splitlines()
    assert line.startswith("memctl: error: cursor: not found") and "--force" in line
    assert list(empty.iterdir()) == []


def test_project_level_init_writes_into_the_repository(user: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    request = setup.InitRequest(tools=("claude-code", "cursor"), project=True)
    setup.init(request, place(user, repo), RUN, tmp_path / "data")
    assert "memctl" in json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert "memory_store" in (repo / "CLAUDE.md").read_text()
    assert "alwaysApply: true" in (repo / ".cursor" / "rules" / "memctl.mdc").read_text()
    assert "memctl" in json.loads((repo / ".cursor" / "mcp.json").read_text())["mcpServers"]


def install(home: Path, client: str, **kwargs: object) -> setup.Outcome:
    request = setup.InstallRequest(client, **kwargs)  # type: ignore[arg-type]
    return setup.install(request, place(home), RUN, home.parent / "data")


def test_claude_code_hooks_join_the_users_own(user: Path) -> None:
    install(user, "claude-code")
    hooks = json.loads((user / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "say done"  # the user's, first
    ours = hooks["Stop"][1]["hooks"][0]
    assert ours["command"] == "/opt/memctl/bin/memctl --home /data/memctl hook claude-code Stop"
    assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert set(hooks) == {"Stop", "SubagentStop", "SessionStart", "SessionEnd", "PreCompact"}
    assert install(user, "claude-code").plan.files() == []  # idempotent


def test_codex_install_says_hooks_need_trust_and_status_reads_it(user: Path) -> None:
    outcome = install(user, "codex", notify=True)
    assert any("/hooks" in note for note in outcome.notes)
    hooks = json.loads((user / ".codex" / "hooks.json").read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"].endswith("hook codex Stop")
    config = tomllib.loads((user / ".codex" / "config.toml").read_text())
    assert config["notify"][-3:] == ["hook", "codex", "notify"] and config["model"] == "o3"
    where = place(user)
    assert codex.trusted(where) == []
    key = f"{user / '.codex' / 'hooks.json'}:stop:0:0"
    with open(user / ".codex" / "config.toml", "a") as out:
        out.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "sha256:abc"\n')
    status = {s.client: s for s in setup.status(where, user.parent / "data")}
    assert status["codex"].trusted == [key]
    assert status["codex"].hooks == [*codex.EVENTS, "notify"]
    # Codex cuts a SessionEnd hook to 3 s, and warns at every start when asked for more
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == codex.SESSION_END_TIMEOUT
    assert status["claude-code"].hooks == []


@pytest.mark.fresh
def test_opencode_plugin_and_cursor_hooks(user: Path) -> None:
    install(user, "opencode")
    plugin = (user / ".config" / "opencode" / "plugin" / "memctl.js").read_text()
    assert plugin.startswith("// memctl plugin")
    assert '"/opt/memctl/bin/memctl", "--home", "/data/memctl"' in plugin
    assert "session.idle" in plugin and "session.compacted" in plugin
    assert "import " not in plugin and "require(" not in plugin  # nothing to install
    assert plugin.count("import(") == 1 and 'import("node:fs")' in plugin  # built in
    assert setup_problems(user) == []
    if shutil.which("node"):  # the module loads, and names the session to its shell tool
        module = user.parent / "plugin.mjs"  # and to memctl's memory_search, no other tool
        module.write_text(plugin)
        shell = (  # Bun's spawn, as memctl's hook answers it: what each run was given
            "const asked = [];\n"
            "globalThis.Bun = { spawn: (argv, options) => {\n"
            "  asked.push(options.stdin.text());\n"
            "  return { unref() {}, stdout: 'block' };\n"
            "} };\n"
            f"const {{ MemctlPlugin }} = await import({json.dumps(str(module))});\n"
            "const hooks = await MemctlPlugin({ client: {}, directory: '/' });\n"
            "const output = { env: {} };\n"
            "await hooks['shell.env']({ cwd: '/', sessionID: 'ses_1' }, output);\n"
            "const said = [output.env];\n"
            "for (const tool of ['memctl_memory_search', 'other_memory_search']) {\n"
            "  const call = { args: { query: 'q' } };\n"
            "  await hooks['tool.execute.before']({ tool, sessionID: 'ses_1' }, call);\n"
            "  said.push(call.args);\n"
            "}\n"
            "const created = { sessionID: 'ses_new', info: { id: 'ses_new' } };\n"
            "await hooks.event({ event: { type: 'session.created', properties: created } });\n"
            "const system = (sessionID) => {\n"
            "  const prompt = { system: ['You are OpenCode'] };\n"
            "  const transform = hooks['experimental.chat.system.transform'];\n"
            "  return transform({ sessionID }, prompt).then(() => prompt.system[1]);\n"
            "};\n"
            "for (const id of ['ses_new', 'ses_old', 'ses_old']) said.push(await system(id));\n"
            "console.log(JSON.stringify([...said, ...(await Promise.all(asked))]));"
        )
        checked = subprocess.run(
            ["node", "--input-type=module", "-e", shell], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stderr
        env, search, other, *blocks = json.loads(checked.stdout)
        assert env == {ASKING_ENV: "ses_1"} and other == {"query": "q"}
        assert search == {"query": "q", SESSION_ARGUMENT: "ses_1"}
        # a session created while OpenCode runs gets the block asked for at its start; a
        # resumed one a block asked for with its id (without its own digest), once
        assert blocks[:3] == ["block"] * 3
        assert [json.loads(b) for b in blocks[3:]] == [
            {"cwd": "/"},
            {"cwd": "/", "session_id": "ses_old"},
        ]
    install(user, "cursor")
    cursor = json.loads((user / ".cursor" / "hooks.json").read_text())
    assert cursor["version"] == 1
    assert cursor["hooks"]["sessionStart"][0]["command"].endswith("hook cursor sessionStart")


def setup_problems(user: Path) -> list[str]:
    return [p for s in setup.status(place(user), user.parent / "data") for p in s.problems]


def test_an_older_opencode_plugin_handing_sessions_over_readable_is_a_problem(
    user: Path,
) -> None:
    install(user, "opencode")
    plugin = user / ".config" / "opencode" / "plugin" / "memctl.js"
    older = plugin.read_text().replace(opencode.PRIVATE_HANDOVER, "Bun.write(path, payload)")
    plugin.write_text(older)
    (problem,) = [p for p in setup_problems(user) if "other users can read" in p]
    assert "run `memctl install opencode`" in problem
    install(user, "opencode")
    assert not [p for p in setup_problems(user) if "other users can read" in p]
    older = plugin.read_text().replace("const SESSION_ARGUMENT", "const OTHER")
    plugin.write_text(older)
    (problem,) = setup_problems(user)
    assert "memory_search" in problem and "run `memctl install opencode`" in problem


def test_uninstall_restores_bytes_or_takes_out_only_memctls_part(user: Path) -> None:
    data = user.parent / "data"
    settings = user / ".claude" / "settings.json"
    original = settings.read_bytes()
    install(user, "claude-code")
    setup.uninstall("install", ("claude-code",), place(user), RUN, data, False)
    assert settings.read_bytes() == original
    install(user, "claude-code")
    doc = json.loads(settings.read_text())
    doc["model"] = "opus"  # the user changes the file after memctl wrote it
    settings.write_text(json.dumps(doc))
    removal = setup.uninstall("install", ("claude-code",), place(user), RUN, data, False)
    assert removal.cleaned == [str(settings)]
    left = json.loads(settings.read_text())
    assert left["model"] == "opus" and left["hooks"] == json.loads(original)["hooks"]


def test_init_list_tools_shows_what_was_found(user: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    env = {"HOME": str(user), "PATH": str(bin_dir) + os.pathsep + "/usr/bin"}
    init(user, tools=("claude-code",))
    done = run_cli("init", "--list-tools", "--json", env=env, cwd=tmp_path)
    found = {item["client"]: item for item in json.loads(done.stdout)}
    assert found["claude-code"]["binary"] == str(fake)
    assert found["claude-code"]["mcp"] and found["claude-code"]["instructions"]
    assert not found["codex"]["mcp"] and found["codex"]["binary"] is None
