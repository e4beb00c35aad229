"""What `memctl init` keeps of the assistants' config files it edits, and how its undo uses it.

A whole copy of ``~/.claude.json`` in ``$MEMCTL_HOME/backups`` was a copy of Claude Code's
prompt history and of other MCP servers' tokens, which `sessions forget` never reached.
Of a JSON or TOML file, only memctl's keys are kept (with what they held before); the
undo takes them back from the file as it stands, keeping what changed there since.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from tests.conftest import files_holding, run_cli

PROMPT = "deploy with password Quill-Marmot-4471 to staging"
TOKEN = "ghp_Vb7Tq2LmX9wRk4Zp8Nc3Hd6Jf1Ys5Ua0Eo"
CODEX_TOKEN = "sk-live-Orchid-Lantern-9934"


def claude_json(history: list[str], ours: dict[str, object] | None = None) -> bytes:
    """~/.claude.json as Claude Code writes it (JSON.stringify, 2 spaces): its prompt
    history per project and another MCP server with its token."""
    servers: dict[str, object] = {"github": {"command": "gh-mcp", "env": {"GH_TOKEN": TOKEN}}}
    if ours is not None:
        servers["memctl"] = ours
    doc = {
        "numStartups": 12,
        "projects": {"/home/u/app": {"history": [{"display": h} for h in history]}},
        "mcpServers": servers,
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


CODEX = f"""# my settings
model = "o3"

[mcp_servers.billing]
command = "billing-mcp"

[mcp_servers.billing.env]
API_KEY = "{CODEX_TOKEN}"
""".encode()


def user_home(tmp_path: Path) -> Path:
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    (user / ".codex").mkdir()
    (user / ".claude.json").write_bytes(claude_json([PROMPT]))
    (user / ".codex" / "config.toml").write_bytes(CODEX)
    return user


def memctl(user: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_cli(*args, env={"HOME": str(user), "PATH": ""}, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_init_keeps_no_prompt_and_no_token_and_its_undo_gives_back_every_byte(
    home: Path, tmp_path: Path
) -> None:
    user = user_home(tmp_path)
    memctl(user, tmp_path, "init")
    assert b'"memctl"' in (user / ".claude.json").read_bytes()
    assert b"mcp_servers.memctl" in (user / ".codex" / "config.toml").read_bytes()
    for value in (PROMPT, TOKEN, CODEX_TOKEN, "Quill-Marmot"):
        assert files_holding(home, value) == []
    memctl(user, tmp_path, "init", "--undo")
    assert (user / ".claude.json").read_bytes() == claude_json([PROMPT])
    assert (user / ".codex" / "config.toml").read_bytes() == CODEX


def test_an_undo_puts_back_what_init_replaced_and_keeps_what_changed_since(
    home: Path, tmp_path: Path
) -> None:
    """An older memctl entry (another install) replaced by init comes back on undo, while a
    prompt Claude Code recorded after init stays: a whole-file restore would have lost the
    prompt, and taking memctl's entry out would have lost the older one."""
    user = user_home(tmp_path)
    older = {"type": "stdio", "command": "/opt/old/memctl", "args": ["mcp"], "env": {}}
    (user / ".claude.json").write_bytes(claude_json([PROMPT], older))
    memctl(user, tmp_path, "init")
    doc = json.loads((user / ".claude.json").read_text())
    assert doc["mcpServers"]["memctl"]["command"] != "/opt/old/memctl"
    doc["projects"]["/home/u/app"]["history"].append({"display": "a later prompt"})
    (user / ".claude.json").write_text(json.dumps(doc, indent=2) + "\n")  # Claude Code, later
    done = memctl(user, tmp_path, "init", "--undo", "--json")
    assert str(user / ".claude.json") in json.loads(done.stdout)["cleaned"]
    assert (user / ".claude.json").read_bytes() == claude_json([PROMPT, "a later prompt"], older)
    assert files_holding(home, "/opt/old/memctl")  # what init replaced is kept: that, only
    assert files_holding(home, PROMPT) == []
    (user / ".claude.json").write_bytes(claude_json([PROMPT], older))
    memctl(user, tmp_path, "init")
    doc = json.loads((user / ".claude.json").read_text())
    doc["projects"]["/home/u/app"]["history"].append({"display": "a later prompt"})
    (user / ".claude.json").write_text(json.dumps(doc, indent=2) + "\n")
    said = memctl(user, tmp_path, "init", "--undo").stdout
    assert f"put back what memctl changed in {user / '.claude.json'}" in said  # not "took out"


def test_a_whole_file_backup_of_the_previous_version_still_undoes(
    home: Path, tmp_path: Path
) -> None:
    """A run the previous version made (``0.bak`` the file whole, no ``kept`` in the
    manifest) is undone as before: the old bytes back where memctl's are still there."""
    user = user_home(tmp_path)
    original = (user / ".claude.json").read_bytes()
    written = original.replace(b'"mcpServers": {', b'"mcpServers": {"memctl": {}, ', 1)
    (user / ".claude.json").write_bytes(written)
    run = home / "backups" / "20261201T120000000000Z-init"
    run.mkdir(parents=True)
    (run / "0.bak").write_bytes(original)
    entry = {
        "path": str(user / ".claude.json"),
        "client": "claude-code",
        "backup": "0.bak",
        "written": hashlib.sha256(written).hexdigest(),
        "created_dirs": [],
        "undone": False,
    }
    manifest = {"command": "init", "created": "20261201T120000000000Z", "entries": [entry]}
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    memctl(user, tmp_path, "init", "--undo")
    assert (user / ".claude.json").read_bytes() == original
    assert json.loads((run / "manifest.json").read_text())["entries"][0]["undone"] is True


def test_an_undo_with_a_damaged_backup_takes_memctls_part_out_and_keeps_the_rest(
    home: Path, tmp_path: Path
) -> None:
    """A backup of memctl's keys made unreadable (a disk error, an edit by hand) ended
    `init --undo` with "internal error: JSONDecodeError"; now memctl's entry is taken out
    of the file as it stands, the user's prompt kept."""
    user = user_home(tmp_path)
    memctl(user, tmp_path, "init")
    (backup,) = [
        p
        for p in home.glob("backups/*/*.bak")
        if b'"ops"' in p.read_bytes() and b"mcpServers" in p.read_bytes()
    ]
    backup.write_text("garbage{")
    done = memctl(user, tmp_path, "init", "--undo")
    assert "internal error" not in done.stdout + done.stderr
    doc = json.loads((user / ".claude.json").read_text())
    assert "memctl" not in doc.get("mcpServers", {})
    assert PROMPT in (user / ".claude.json").read_text()
