"""A file whose name says it holds credentials (``.env``, ``~/.kube/config``, ``.npmrc``,
``id_rsa``...) keeps its path and not its content: a file tool's note kept up to 320
characters of what it wrote, scrubbed, and a read's result its first line, and a dotenv
line with no telling name (``SIGNING=...``), a ``SESSION_COOKIE=``, a kubeconfig's token
of no known shape passed the scanner into the messages, recall and ``sessions show``."""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.api.ingest import IngestRequest, ingest
from memctl.context import Context
from memctl.ingest import pending
from memctl.ingest.capture_report import CaptureReport, IngestOptions
from memctl.ingest.parse import read_transcript
from memctl.ingest.parse.common import (
    Tally,
    called,
    names_secret_file,
    tool_result_note,
    tool_use_note,
    withholds,
)
from memctl.ingest.pending import capture_grown
from memctl.ingest.read_marks import open_transcript
from memctl.ingest.scrub import scrubbed
from memctl.ingest.source import Input
from memctl.ingest.spool import replay, spool
from memctl.ingest.tools import read_calls
from memctl.maintain.forgetting import forget_session
from memctl.memories.followed import Followed, digests
from memctl.store.sessions import followed_digests
from tests.conftest import files_holding
from tests.ingest.test_compaction import ingest_file
from tests.ingest.test_parse_specstory import CLAUDE_V21, CURSOR_EXPORT, read
from tests.ingesting import claude_record

# values the scanner cannot tell by shape or label; only the file's name says what they are
UNTOLD = ("tr0ub4dor-horse-battery", "c00kie-otter-secret", "kubeadmtoken.q7w8e9r0t1y2u3i4")
DOTENV = f"DEBUG=true\nSIGNING={UNTOLD[0]}\n"


def _call(n: int, name: str, **arguments: str) -> dict[str, object]:
    block = {"type": "tool_use", "id": f"t{n}", "name": name, "input": arguments}
    return claude_record("assistant", [block], n, "leak-files")


def _result(n: int, text: str) -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": f"t{n}", "content": text}
    return claude_record("user", [block], n, "leak-files")


def test_a_credentials_file_keeps_its_path_and_none_of_what_was_written_or_read(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    kube = f"users:\n- name: admin\n  user:\n    token: {UNTOLD[2]}\n"
    lines = [
        claude_record("user", "Write the app's .env and the kubeconfig.", 0, "leak-files"),
        _call(1, "Write", file_path="/home/ann/app/.env", content=DOTENV),
        _result(1, "File created successfully at: /home/ann/app/.env"),
        _call(
            2,
            "Edit",
            file_path="/home/ann/app/.env",
            old_string="DEBUG=true",
            new_string=f"SESSION_COOKIE={UNTOLD[1]}",
        ),
        _result(2, "The file /home/ann/app/.env has been updated."),
        _call(3, "Write", file_path="/home/ann/.kube/config", content=kube),
        _result(3, "File created successfully at: /home/ann/.kube/config"),
        _call(4, "Read", file_path="/home/ann/app/.env"),
        _result(4, f"     1→SIGNING={UNTOLD[0]}\n     2→DEBUG=true"),
        _call(5, "Bash", command="grep token ~/.kube/config"),
        _result(5, f"    token: {UNTOLD[2]}"),
        _call(6, "Write", file_path="/home/ann/app/retry.py", content="RETRIES = 5\n"),
        claude_record("assistant", "Both are written; the deploy reads them.", 7, "leak-files"),
    ]
    transcript = tmp_path / "leak-files.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ctx = make_ctx()
    ingest_file(ctx, transcript)
    ctx.close()
    assert [files_holding(home, value) for value in UNTOLD] == [[], [], []]
    assert files_holding(home, "RETRIES = 5")  # any other file's text is kept, as before
    assert files_holding(home, "[tool Write: /home/ann/.kube/config]")  # and every path


def test_a_credentials_file_an_ide_copied_into_the_turn_keeps_its_path_only(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """Claude Code's IDE extension copies a file the person @-mentions into their turn
    (``<context ref="file:///…">``, as a real fresh2 session shows) and the lines they
    select (``<ide_selection>``): a `.env`'s copy was stored whole, where a Read of it keeps
    no line; and the assistant's reply repeating a value kept it too."""
    copied = f'<context ref="file:///home/ann/app/.env.production">\n{DOTENV}</context>'
    selected = (
        "<ide_selection>The user selected the lines 2 to 2 from /home/ann/app/.env:\n"
        f"SESSION_COOKIE={UNTOLD[1]}\n\nThis may or may not be related to the current task."
        "</ide_selection>"
    )
    doc = '<context ref="file:///home/ann/app/docs/deploy.md">\n# Deploy with make ship\n</context>'
    lines = [
        claude_record("user", f"why does signing fail in production? {copied}", 0, "leak-ide"),
        claude_record("user", [{"type": "text", "text": f"and this? {selected}"}], 1, "leak-ide"),
        claude_record("user", f"see {doc}", 2, "leak-ide"),
        claude_record("assistant", f"SIGNING={UNTOLD[0]} looks cut; rotate it.", 3, "leak-ide"),
    ]
    transcript = tmp_path / "leak-ide.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ctx = make_ctx()
    ingest_file(ctx, transcript)
    ctx.close()
    assert [files_holding(home, value) for value in UNTOLD[:2]] == [[], []]
    assert files_holding(home, "file:///home/ann/app/.env.production")  # its path stays
    assert files_holding(home, "Deploy with make ship")  # another file's copy, as before


def test_which_names_say_a_file_holds_credentials() -> None:
    secret = [
        "/app/.env", ".env.production", "prod.env", ".envrc", "~/.ssh/id_ed25519", "tls.key",
        "certs/server.pem", "~/.npmrc", "~/.pypirc", "~/.netrc", "~/.pgpass",
        "~/.git-credentials", "~/.aws/credentials", "~/.docker/config.json", "~/.kube/config",
        "gcp-credentials.json", "client_secret_123.apps.json", "k8s/secrets.yaml",
        "prod.tfvars", "terraform.tfstate", "cat .env | grep KEY", "source .env && make",
        "~/kubeconfig.yaml", ".dev.vars", "act/.secrets", "~/.s3cfg", "~/.boto", "~/.my.cnf",
        "~/.terraformrc", "~/.config/gh/hosts.yml", "keys/my-proj-service-account-key.json",
        "cat *.pem", "cat certs/*.key", "~/.azure/accessTokens.json",
        "~/.azure/msal_token_cache.json", "~/.config/hub", "/run/secrets/db_password",
        "/var/run/secrets/kubernetes.io/serviceaccount/token",
    ]  # fmt: skip
    plain = [
        ".env.example", ".env.sample", "~/.ssh/id_rsa.pub", "src/env.py", "config.yaml",
        "settings.py", "environment.ts", "docs/credentials.md", "keys.py", "git status",
        "pkg/kubeconfig.go", "kubeconfig_test.go", ".dev.vars.example", "docs/service-account.md",
        "src/secrets_test.py", "~/.config/hubble.toml", "docs/hub.md", "docs/run/secrets.md",
        "ls *.pub",
    ]  # fmt: skip
    assert [p for p in secret if not names_secret_file({"file_path": p})] == []
    assert [p for p in plain if names_secret_file({"file_path": p})] == []
    assert names_secret_file({"command": "kubectl --kubeconfig ~/.kube/config get pods"})
    # a commit's message, a heredoc's body: text (a real session's commit, whose pre-commit
    # error line is the case's cause)
    assert not names_secret_file({"command": 'git commit -m "add .envrc to .gitignore"'})
    assert not names_secret_file({"command": "git commit -F - <<'EOF'\nignore .env\nEOF"})


def test_a_patch_keeps_the_added_lines_of_its_other_files_only() -> None:
    patch = "*** Begin Patch\n*** Add File: .env\n+SIGNING=tr0ub4dor\n"
    patch += "*** Update File: src/app.py\n@@\n+RETRIES = 5\n*** End Patch"
    note = tool_use_note("apply_patch", patch)
    assert "tr0ub4dor" not in note and note.endswith("+ RETRIES = 5]")
    assert [c.name for c in _read(note)] == ["apply_patch"]


def test_a_withheld_result_keeps_its_outcome_and_exit_code() -> None:
    assert tool_result_note("SIGNING=x", tool="Read", withheld=True) == "[tool result Read]"
    failed = tool_result_note(f"Exit code 2\nSIGNING={UNTOLD[0]}", tool="Bash", withheld=True)
    assert failed == "[tool error Bash: exit 2]"


def _read(note: str) -> list:  # type: ignore[type-arg]
    calls: list = []  # type: ignore[type-arg]
    read_calls(note, calls)
    return calls


def test_a_command_writing_a_credentials_file_keeps_no_value_it_sets() -> None:
    echo = tool_use_note("Bash", {"command": f'echo "SIGNING={UNTOLD[0]}" >> .env'})
    assert echo == '[tool Bash: echo "SIGNING=[REDACTED:secret]" >> .env]'
    heredoc = tool_use_note("Bash", {"command": f"cat > .env <<'EOF'\n{DOTENV}EOF"})
    assert heredoc == "[tool Bash: cat > .env <<'EOF']"
    assert tool_use_note("Bash", {"command": "FOO=bar make"}) == "[tool Bash: FOO=bar make]"


def test_a_specstory_history_keeps_no_line_a_credentials_file_showed() -> None:
    history = CLAUDE_V21.replace("git show 0381a52 --no-stat", "cat .env").replace(
        "Exit code 128\nfatal: unrecognized argument: --no-stat", f"SIGNING={UNTOLD[0]}"
    )
    notes = [text for _, text, _ in read(history)[0]]
    assert notes[1:3] == ["[tool Bash: cat .env]", "[tool result Bash]"]


def test_a_call_naming_a_credentials_file_another_way_keeps_no_line_of_it() -> None:
    """Ways round s27-leak's rule: a dotenv variant, a glob, a file a script's code names,
    a command naming the file on its second line, a path in another field of the input
    (Gemini CLI's read_many_files, Grep's glob); a heredoc writing one kept its value in the
    note, as did a script's."""
    named = [
        {"file_path": "app/.env_prod"}, {"file_path": "app/.env-local"},
        {"command": "cat .env*"}, {"command": "cat .env{,.local}"},
        {"command": "node -e 'console.log(require(\"fs\").readFileSync(\".env\", \"utf8\"))'"},
        {"command": "python3 - <<'EOF'\nprint(open('.env').read())\nEOF"},
        {"command": "cd app &&\n  grep -h TOKEN .env"},
        {"paths": [".env.production"]}, {"pattern": "SIGNING", "glob": ".env*"},
    ]  # fmt: skip
    assert [a for a in named if not names_secret_file(a)] == []
    text = [  # a heredoc's body, what a file tool writes: text, not a file it reads
        {"command": "cat >> .gitignore <<'EOF'\n.env\nEOF"},
        {"file_path": ".gitignore", "content": ".env"},
        {"description": "Check how the app loads .env files", "command": "rg load_dotenv"},
    ]
    assert [a for a in text if names_secret_file(a)] == []
    script = f"python3 - <<'EOF'\nopen('.env', 'w').write('SIGNING={UNTOLD[0]}')\nEOF"
    for command in (script, f"cd app &&\n  echo SIGNING={UNTOLD[0]} >> .env"):
        assert UNTOLD[0] not in tool_use_note("Bash", {"command": command})
    moved = "*** Begin Patch\n*** Update File: app.yml\n*** Move to: .env\n@@\n-a: 1\n"
    assert UNTOLD[0] not in tool_use_note("apply_patch", f"{moved}+SIGNING={UNTOLD[0]}\n")


def test_output_showing_a_credentials_file_keeps_none_of_its_lines() -> None:
    """A call naming no credentials file may show one's lines: `git diff` (`git show`,
    `git log -p`), `grep -rn`'s hits, `rg`'s under a heading; the other files' lines stay."""
    diff = (
        "diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1,2 @@\n DEBUG=1\n"
        f"+SIGNING={UNTOLD[0]}\ndiff --git a/src/app.py b/src/app.py\n+RETRIES = 5"
    )
    grep = f"app/.env:3:SIGNING={UNTOLD[0]}\nsrc/app.py:1:RETRIES = 5"
    rg = f"app/.env\n3:SIGNING={UNTOLD[0]}\n\nsrc/app.py\n1:RETRIES = 5"
    for output in (diff, grep, rg):
        note = tool_result_note(output, tool="Bash")
        assert UNTOLD[0] not in note and "RETRIES = 5" in note
    failed = tool_result_note(f"Exit code 1\n{'.' * 5000}\n{grep}\nError: boom", tool="Bash")
    assert UNTOLD[0] not in failed


def test_a_specstory_history_and_a_cursor_export_leave_no_credential_or_private_text(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    """Through the store: a SpecStory history's `git diff` and Grep showed a `.env`'s lines,
    and a Cursor export's escaped `<private>` block was kept (messages, digest, index)."""
    shown = "```text\ndiff --git a/.env b/.env\n+++ b/.env\n+SIGNING=" + UNTOLD[0] + "\n```"
    history = CLAUDE_V21.replace("git show 0381a52 --no-stat", "git diff").replace(
        "```text\nExit code 128\nfatal: unrecognized argument: --no-stat\n```", shown
    )
    export = CURSOR_EXPORT.replace(
        "one run in ten?", f"one run in ten? &lt;private&gt;{UNTOLD[1]}&lt;/private&gt;"
    )
    ctx = make_ctx()
    for name, text in (("h.md", history), ("export.md", export)):
        (tmp_path / name).write_text(text)
        ingest_file(ctx, tmp_path / name)
    ctx.close()
    assert [files_holding(ctx.settings.home, v) for v in UNTOLD[:2]] == [[], []]
    assert files_holding(ctx.settings.home, "[tool Bash: git diff]")


# Commands that print a credential with no file named: a password manager's or a vault's
# read, a cloud CLI's token or secret, a Kubernetes secret's data, a variable named for one.
PRINTS_SECRET = [
    "gh auth token", "gh auth status --show-token", "op read op://prod/db/password",
    "eval $(op signin)", "op item get db --reveal", "vault kv get secret/app",
    "vault read database/creds/app", "pass show mail/work", "aws configure export-credentials",
    "aws configure get aws_secret_access_key", "aws sts get-session-token",
    "aws ecr get-login-password --region eu-west-1 | docker login -u AWS --password-stdin x",
    "aws secretsmanager get-secret-value --secret-id prod/db",
    "aws ssm get-parameter --name /app/db --with-decryption",
    "kubectl get secret db -o yaml", "kubectl -n prod get secrets/db -o jsonpath='{.data}'",
    "kubectl describe secret db", "kubectl config view --raw", "kubectl create token ci",
    "gcloud auth print-access-token", "gcloud secrets versions access latest --secret=db",
    "az account get-access-token", "az keyvault secret show --vault-name v --name db",
    "heroku auth:token", "heroku config -a shop", "doppler secrets get DB_URL --plain",
    "terraform output -raw db_password", "security find-generic-password -s db -w",
    "git credential fill", "echo $GITHUB_TOKEN", 'echo "key: ${OPENAI_API_KEY}"',
    "printenv DB_PASSWORD", "cd infra &&\n  vault kv get -field=password secret/db",
    "export TOKEN=$(gh auth token) && sudo -E op read op://x/y/z",
    "ssh -p 2222 deploy@prod 'vault kv get secret/db'",
    # a heredoc's body a shell runs (s30-leak left it)
    "bash <<'EOF'\nset -e\nop read op://prod/db/password\nEOF",
    "cat <<EOF | sudo sh\n  vault kv get secret/db\nEOF", "ssh prod <<-EOF\n\tgh auth token\nEOF",
    "kubectl exec -i web -- sh <<EOF\necho $DB_PASSWORD\nEOF",
    "/bin/zsh -s <<EOF\ncat .env\nEOF", "docker exec -i db bash <<EOF\ncat /run/secrets/db\nEOF",
]  # fmt: skip
PRINTS_NO_SECRET = [
    "gh auth status", "gh pr list", "kubectl get secrets", "kubectl get pods -o yaml",
    "aws configure list", "aws s3 ls", "vault status", "terraform output", "echo $PATH",
    'echo "length ${#GITHUB_TOKEN}"', "printenv PATH", 'git commit -m "use gh auth token"',
    "grep -rn 'op read' docs", "pass", "rg 'kubectl get secret' -n",
    # a heredoc's body no shell runs is text: a file written, a commit's message
    "cat > fetch.sh <<'EOF'\nop read op://prod/db/password\nEOF",
    "git commit -F - <<EOF\ndocs: run gh auth token, not cat .env\nEOF",
    "python3 - <<EOF\nprint('vault kv get secret/db')\nEOF",
]  # fmt: skip


def test_a_command_printing_a_credential_keeps_no_line_of_its_output() -> None:
    assert [c for c in PRINTS_SECRET if not withholds({"command": c})] == []
    assert [c for c in PRINTS_NO_SECRET if withholds({"command": c})] == []
    assert withholds({"command": ["bash", "-lc", "op read op://x/y/z"]})  # Codex's shell


def test_what_a_credential_command_printed_is_not_stored(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """Through the store: the bare password ``op read`` printed, a Vault table's value, a
    Kubernetes secret's base64 data, a variable echoed; Claude Code's shell mode (``!``)
    too. Another command's output is kept as before."""
    kube = "apiVersion: v1\ndata:\n  signing: dHIwdWI0ZG9yLWhvcnNlLWJhdHRlcnk=\nkind: Secret"
    outputs = {
        "op read op://prod/db/signing": UNTOLD[0],
        "vault kv get secret/app": f"====== Data ======\nKey       Value\nsigning   {UNTOLD[1]}",
        "kubectl get secret app -o yaml": kube,
        "echo $SESSION_COOKIE_SECRET": UNTOLD[2],
        "ls": "RETRIES.md",
        "cat config/app.yaml": "db:\n  password: Kestrel-Plum-5521",  # the scanner's to find
        "gh secret set SIGNING --body Orchid-Tide-3388": "✓ Set Actions secret SIGNING",
    }
    lines = [claude_record("user", "Check the app's secrets.", 0, "leak-cmds")]
    for n, (command, output) in enumerate(outputs.items(), start=1):
        lines += [_call(n, "Bash", command=command), _result(n, output)]
    # no label left (s30-leak left it): a value the scanner took from a note, one withheld
    repeated = (
        f"The db login is Kestrel-Plum-5521 and SIGNING {UNTOLD[0]}; also {UNTOLD[1]}, "
        "Orchid-Tide-3388."
    )
    lines.append(claude_record("assistant", [{"type": "text", "text": repeated}], 8, "leak-cmds"))
    shell = (
        "<bash-input>pass show db/signing</bash-input>",
        f"<bash-stdout>{UNTOLD[0]}-2</bash-stdout>",
    )
    lines += [claude_record("user", text, 9 + n, "leak-cmds") for n, text in enumerate(shell)]
    transcript = tmp_path / "leak-cmds.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ctx = make_ctx()
    ingest_file(ctx, transcript)
    ctx.close()
    told = (*UNTOLD, "dHIwdWI0ZG9yLWhvcnNlLWJhdHRlcnk", f"{UNTOLD[0]}-2", "Kestrel", "Orchid")
    assert [files_holding(home, value) for value in told] == [[]] * 7
    said = "login is [REDACTED:password] and SIGNING [REDACTED:secret]; also [REDACTED:secret], "
    assert files_holding(home, said)
    assert files_holding(home, "RETRIES.md")  # any other command's output is kept
    assert files_holding(home, "[tool Bash: op read op://prod/db/signing]")  # and every command


def test_a_command_storing_a_credential_keeps_where_it_went_and_no_value() -> None:
    """A value stored by a command holds no label the scanner knows (``signing``, a bare
    argument, a value piped in): the note keeps the words naming where it went, and the
    names it set; another command keeps its line."""
    value = UNTOLD[0]
    stored = {
        f"gh secret set SIGNING --body {value}": "gh secret set SIGNING [REDACTED:secret]",
        f"vault kv put secret/app signing={value} debug=1": (
            "vault kv put secret/app signing=[REDACTED:secret] debug=[REDACTED:secret]"
        ),
        f"kubectl -n prod create secret generic app --from-literal=signing={value}": (
            "kubectl -n prod create secret generic app signing=[REDACTED:secret]"
        ),
        f"heroku config:set SIGNING={value} -a shop": "heroku config:set SIGNING=[REDACTED:secret]",
        f"echo -n {value} | npx wrangler secret put SIGNING": (
            "npx wrangler secret put SIGNING [REDACTED:secret]"
        ),
        f"aws secretsmanager put-secret-value --secret-id db --secret-string {value}": (
            "aws secretsmanager put-secret-value [REDACTED:secret]"
        ),
        f"cd infra &&\n  printf {value} | docker secret create signing -": (
            "docker secret create signing [REDACTED:secret]"
        ),
        f"bash <<EOF\ngh secret set SIGNING --body {value}\nEOF": (
            "gh secret set SIGNING [REDACTED:secret]"
        ),
    }
    assert {c: tool_use_note("Bash", {"command": c}) for c in stored} == {
        c: f"[tool Bash: {note}]" for c, note in stored.items()
    }
    for kept in ("gh secret list", "vault kv get secret/app", "heroku config:get SIGNING"):
        assert tool_use_note("Bash", {"command": kept}) == f"[tool Bash: {kept}]"
    # and what it printed: Heroku and Doppler show the values they set
    assert [c for c in stored if not withholds({"command": c})] == []


def test_a_note_ending_in_a_secret_keeps_its_closing_bracket() -> None:
    """A bare value runs to a blank: scrubbed with its note's ``]``, it took the bracket."""
    note = tool_use_note("Bash", {"command": "helm repo add r https://x --password Kestrel-Plum"})
    assert note == "[tool Bash: helm repo add r https://x --password [REDACTED:password]]"
    result = tool_result_note("export TOKEN=ghp_" + "a1B2" * 9, tool="Bash")
    assert result.endswith("[REDACTED:github-token]]")


def test_a_secret_hidden_in_one_capture_is_hidden_in_the_session_s_next(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """Capture reads a transcript from where it stopped (a Stop hook per turn, ``ingest``
    of a growing file): a value one capture hid (by its label, a withheld output, a
    command storing it) and the assistant repeats in the next is hidden there too; the
    session keeps keyed digests of them only, and its forget takes those."""
    outputs = {
        "cat config/app.yaml": "db:\n  password: Kestrel-Plum-5521",
        "op read op://prod/db/signing": UNTOLD[0],
        "gh secret set DEPLOY --body Orchid-Tide-3388": "✓ Set Actions secret DEPLOY",
    }
    lines = [claude_record("user", "Check the app's secrets.", 0, "leak-later")]
    for n, (command, output) in enumerate(outputs.items(), start=1):
        lines += [_call(n, "Bash", command=command), _result(n, output)]
    repeated = f"The db login is Kestrel-Plum-5521, SIGNING {UNTOLD[0]} and Orchid-Tide-3388."
    later = [
        claude_record("user", "What were they?", 4, "leak-later"),
        claude_record("assistant", [{"type": "text", "text": repeated}], 5, "leak-later"),
    ]
    transcript = tmp_path / "leak-later.jsonl"
    ctx = make_ctx()
    for part in (lines, later):  # the file grows: the second capture reads `later` alone
        with transcript.open("a") as file:
            file.write("".join(json.dumps(line) + "\n" for line in part))
        ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    assert ctx.db.value("SELECT count(*) FROM messages WHERE session_id = 'leak-later'") == 9
    ctx.close()
    told = ("Kestrel-Plum-5521", UNTOLD[0], "Orchid-Tide-3388")
    assert [files_holding(home, value) for value in told] == [[]] * 3
    said = "login is [REDACTED:password], SIGNING [REDACTED:secret] and [REDACTED:secret]."
    assert files_holding(home, said)
    ctx = make_ctx()
    kept = followed_digests(ctx.db, "leak-later")
    assert sorted(kept.values()) == ["password", "secret", "secret"]
    plain = {hashlib.sha256(value.encode()).hexdigest() for value in told}
    assert not plain & set(kept) and (home / "forget.key").is_file()  # keyed, not plain
    forget_session(ctx, "leak-later")
    assert ctx.db.value("SELECT count(*) FROM followed_secrets") == 0
    ctx.close()


def test_a_password_said_in_prose_is_hidden_where_it_is_said_again(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """A password of letters (``swordfish``) was hidden where its label stood and stored
    where it was said again; a value ending a sentence ("is V.") was followed with its
    full stop, so its bare repeat was stored; "the password for the staging db is V" was
    not found at all. A password that is a word or a tool's name (``postgres``) is hidden
    where labelled only: said again, it is more often the tool."""
    first = [
        ("user", "The db password is swordfish. The password for the staging db is Rk-4471."),
        ("assistant", "Noted: swordfish for the db, Rk-4471 for staging. Swordfish it is."),
        ("user", "POSTGRES_PASSWORD=postgres in compose; restart postgres after."),
    ]
    later = [("assistant", "Swordfish worked (and Rk-4471); postgres restarted.")]
    transcript, ctx = tmp_path / "leak-words.jsonl", make_ctx()
    for n, part in enumerate((first, later)):  # the second capture reads `later` alone
        records = [claude_record(r, t, 10 * n + i, "leak-words") for i, (r, t) in enumerate(part)]
        with transcript.open("a") as file:
            file.write("".join(json.dumps(record) + "\n" for record in records))
        ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    rows = ctx.db.tuples(
        "SELECT content FROM messages WHERE session_id = ? ORDER BY seq", ["leak-words"]
    )
    said = [text for (text,) in rows]
    ctx.close()
    assert len(said) == 4
    told = ("swordfish", "Swordfish", "Rk-4471")
    assert [files_holding(home, value) for value in told] == [[], [], []]
    assert said[1] == (
        "Noted: [REDACTED:password] for the db, [REDACTED:password] for staging. "
        "[REDACTED:password] it is."
    )
    assert said[3].endswith("[REDACTED:password]); postgres restarted.")


def test_a_followed_value_is_hidden_between_non_letters_only() -> None:
    key = b"k" * 32
    followed = Followed(key, digests(key, {"Kestrel-Plum-5521": "password"}))
    counts: Counter[str] = Counter()
    text = "is Kestrel-Plum-5521. (`Kestrel-Plum-5521`) xKestrel-Plum-5521 Kestrel-Plum-55210"
    assert followed.hide(text, counts) == (
        "is [REDACTED:password]. (`[REDACTED:password]`) xKestrel-Plum-5521 Kestrel-Plum-55210"
    )
    assert counts == {"password": 2}


def test_a_spooled_capture_hides_and_keeps_what_the_session_s_captures_hid(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """A hook meeting a busy database spools what it read: it spooled a repeat of a value an
    earlier capture hid (the session's digests were not read), and the values the spooled
    capture itself hid were not kept for the session's next capture."""
    told = ("Kestrel-Plum-5521", "Orchid-Tide-3388")
    shown = [
        claude_record("user", "Check the app's secrets.", 0, "leak-spool"),
        _call(1, "Bash", command="cat config/app.yaml"),
        _result(1, f"db:\n  password: {told[0]}"),
        _call(2, "Bash", command=f"gh secret set DEPLOY --body {told[1]}"),
        _result(2, "✓ Set Actions secret DEPLOY"),
    ]
    repeat = f"The db login is {told[0]} and DEPLOY is {told[1]}."
    later = [claude_record("assistant", [{"type": "text", "text": repeat}], 5, "leak-spool")]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("".join(json.dumps(line) + "\n" for line in shown), encoding="utf-8")
    second.write_text(json.dumps(later[0]) + "\n", encoding="utf-8")  # a resumed session's file
    ctx = make_ctx()
    for transcript in (first, second):
        with open_transcript(ctx, str(transcript), None, IngestOptions(mode="raw")) as opened:
            assert opened.source is not None
            spooled = spool(ctx, opened.source, opened.options)
        assert spooled.path is not None
        assert [value for value in told if value in spooled.path.read_text()] == []
        assert [c.session.id for c in replay(ctx).stored] == ["leak-spool"]
        assert sorted(followed_digests(ctx.db, "leak-spool").values()) == ["password", "secret"]
    ctx.close()
    assert [files_holding(home, value) for value in told] == [[]] * 2
    assert files_holding(home, "login is [REDACTED:password] and DEPLOY is [REDACTED:secret].")


def test_a_forgotten_session_s_transcript_is_not_spooled(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """Resumed after `sessions forget` (the transcript holds the forgotten conversation) and
    met by a busy database, the hook wrote the whole transcript to the spool, where it
    stayed until the next ingest or maintain passed over it."""
    said = "the vendor contract renews at 41,500 a year"
    lines = [claude_record("user", said, 0, "leak-gone")]
    transcript = tmp_path / "gone.jsonl"
    transcript.write_text(json.dumps(lines[0]) + "\n", encoding="utf-8")
    ctx = make_ctx()
    ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    forget_session(ctx, "leak-gone")
    with open_transcript(ctx, str(transcript), None, IngestOptions(), whole=True) as opened:
        assert opened.source is not None
        spooled = spool(ctx, opened.source, opened.options)
    ctx.close()
    assert spooled.path is None and spooled.report.forgotten_at
    assert files_holding(home, "41,500") == []


SIGNING, DEPLOY = UNTOLD[0], "Orchid-Tide-3388"
SHOWN = {"op read op://prod/db/signing": SIGNING, f"gh secret set DEPLOY --body {DEPLOY}": "✓"}
REPEATED = f"SIGNING is {SIGNING} and DEPLOY is {DEPLOY}."


def _opencode() -> str:
    tools = [
        {"type": "tool", "tool": "bash", "state": {"input": {"command": c}, "output": o}}
        for c, o in SHOWN.items()
    ]
    said = [("user", [{"type": "text", "text": "Check the secrets."}]), ("assistant", tools)]
    said.append(("assistant", [{"type": "text", "text": REPEATED}]))
    messages = [{"info": {"role": role}, "parts": parts} for role, parts in said]
    return json.dumps({"info": {"id": "ses_leak"}, "messages": messages})


def _gemini() -> str:
    calls = [
        {
            "name": "run_shell_command",
            "args": {"command": command},
            "result": [{"functionResponse": {"response": {"output": output}}}],
        }
        for command, output in SHOWN.items()
    ]
    messages = [
        {"type": "user", "content": "Check the secrets."},
        {"type": "gemini", "content": "", "toolCalls": calls},
        {"type": "gemini", "content": REPEATED},
    ]
    return json.dumps({"sessionId": "g-leak", "messages": messages})


def _specstory() -> str:
    tools = "".join(
        '<tool-use data-tool-type="shell" data-tool-name="Bash"><details>\n'
        f"<summary>Tool use: **Bash**</summary>\nRun it\n\n`{command}`\n\n"
        f"```text\n{output}\n```\n</details></tool-use>\n\n"
        for command, output in SHOWN.items()
    )
    agent = "_**Agent (claude-opus-4-5-20251101 2026-01-29 16:2{}:38Z)**_\n\n"
    return (
        CLAUDE_V21.split("_**User", 1)[0]
        + "_**User (2026-01-29 16:21:35Z)**_\n\nCheck the secrets.\n\n---\n\n"
        + agent.format(1)
        + tools
        + "---\n\n"
        + agent.format(2)
        + REPEATED
        + "\n"
    )


@pytest.mark.parametrize(
    ("made", "name"), [(_opencode, "s.json"), (_gemini, "s.json"), (_specstory, "s.md")]
)
def test_a_value_a_call_stored_or_a_withheld_output_showed_is_hidden_in_every_client(
    made: Callable[[], str], name: str
) -> None:
    """OpenCode, Gemini CLI and SpecStory write a call and its result together, with no id
    to pair them by: what the call stored (`gh secret set --body V`) or a withheld output
    showed (`op read`'s line) was not followed, and stored where the assistant repeated
    it."""
    transcript = read_transcript(Input(io.BytesIO(made().encode()), name), None)
    said = [m.content for m in scrubbed(transcript, CaptureReport())]
    assert said[-1] == "SIGNING is [REDACTED:secret] and DEPLOY is [REDACTED:secret]."
    assert not [text for text in said if SIGNING in text or DEPLOY in text]


def test_a_spooled_transcript_names_its_file_as_the_store_does(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """The spool's header named the transcript by its path as given: a folder named after
    a token stood on disk until the next ingest or maintain, which stores it scrubbed."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    folder = tmp_path / f"work-{token}"
    folder.mkdir()
    transcript = folder / "t.jsonl"
    said = claude_record("user", "hello there, first message", 0, "leak-path")
    transcript.write_text(json.dumps(said) + "\n", encoding="utf-8")
    ctx = make_ctx()
    with open_transcript(ctx, str(transcript), None, IngestOptions(mode="raw")) as opened:
        assert opened.source is not None
        spooled = spool(ctx, opened.source, opened.options)
    assert spooled.path is not None and token not in spooled.path.read_text()
    (stored,) = replay(ctx).stored
    assert stored.session.source == f"{folder.parent}/work-[REDACTED:github-token]/t.jsonl"
    ctx.close()
    assert files_holding(home, token) == []


def test_a_private_block_left_open_by_one_capture_hides_the_next_up_to_its_close(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """A `<private>` block runs on into the next messages up to its close, and capture
    reads a transcript on from where it stopped (a Stop hook per turn, a big file a chunk
    at a time): the next capture, a fresh scrubber, stored what the person typed before
    the close, as did a spooled one."""
    said = [
        ("user", "Help me plan. <private>The target is Quokkaville Corp"),
        ("assistant", "Go on."),
        ("user", "at 41 million zorblax</private> now draft the migration plan"),
        ("assistant", "Here is the migration plan."),
        ("user", "Then <private>the board meets on the ninth, Plumtree"),
        ("user", "and votes on the tenth</private> so draft the agenda."),
        ("user", "Thanks, the agenda looks right."),
    ]
    lines = [claude_record(role, text, n, "leak-open") for n, (role, text) in enumerate(said)]
    transcript = tmp_path / "open.jsonl"
    ctx = make_ctx()
    for part in (lines[:2], lines[2:5], lines[5:]):  # a capture per turn; the last spooled
        with transcript.open("a") as file:
            file.write("".join(json.dumps(line) + "\n" for line in part))
        if part[0] is lines[5]:
            with open_transcript(ctx, str(transcript), None, IngestOptions(mode="raw")) as opened:
                assert opened.source is not None and opened.inside == "private"
                spooled = spool(ctx, opened.source, opened.options, opened.inside)
            assert spooled.path is not None and "the tenth" not in spooled.path.read_text()
            replay(ctx)
        else:
            ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    stored = ctx.db.tuples("SELECT content FROM messages WHERE session_id = 'leak-open'")
    ctx.close()
    assert [text for (text,) in stored] == [
        "Help me plan. [REDACTED]",
        "now draft the migration plan",
        "Here is the migration plan.",
        "Then [REDACTED]",
        "so draft the agenda.",
        "Thanks, the agenda looks right.",
    ]
    assert [files_holding(home, w) for w in ("zorblax", "Quokkaville", "the tenth")] == [[]] * 3


def test_a_forgotten_session_s_transcript_left_pending_keeps_no_mark_once_read(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """A hook that hands a big transcript to the worker leaves it marked pending (its path,
    directory and session id); the worker, finding the session forgotten, stored nothing
    and recorded the mark as captured, where it stayed."""
    folder = tmp_path / "acme-layoffs"
    folder.mkdir()
    transcript = folder / "gone.jsonl"
    said = claude_record("user", "the layoffs start in march", 0, "leak-pending-gone")
    transcript.write_text(json.dumps(said) + "\n", encoding="utf-8")
    ctx = make_ctx()
    ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
    forget_session(ctx, "leak-pending-gone")
    entry = pending.Pending(
        str(transcript), "claude-code", "leak-pending-gone", str(folder), -1, 0.0
    )
    pending.remember(home, entry)
    assert [done.forgotten for _, done in capture_grown(ctx, print)] == [True]
    ctx.close()
    assert files_holding(home, "acme-layoffs") == []


HEREDOC_A = "cat > src/a.py <<'EOF'\nB = 'x'\nEOF"
PATCHED = "*** Begin Patch\n*** Add File: app/.env\n+SIGNING={}\n*** Add File: src/a.py\n+B = 'x'\n"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("Write", {"file_path": "/app/.env", "content": f"DEBUG=1\nSIGNING={SIGNING}\n"}),
        (
            "MultiEdit",
            {"file_path": "/app/.env", "edits": [{"old_string": "A=1", "new_string": SIGNING}]},
        ),
        ("create", {"path": "/app/.env", "file_text": f"signing: {SIGNING}\n"}),  # Copilot's
        ("apply_patch", {"input": PATCHED.format(SIGNING) + "*** End Patch"}),  # Codex's
        ("Bash", {"command": f"cat > app/.env <<EOF\nSIGNING={SIGNING}\nEOF\n" + HEREDOC_A}),
    ],
)
def test_a_value_written_into_a_credentials_file_is_followed(
    name: str, arguments: dict[str, object]
) -> None:
    """A call writing a `.env` keeps its path in the note and no value; the value was not
    followed, and stored where the assistant repeated it ("SIGNING is ...")."""
    tally = Tally()
    called(tally, "t1", name, arguments)
    assert tally.taken.get(SIGNING) == "secret"
    assert "'x'" not in tally.taken and "x" not in tally.taken  # another file's: not followed
    lines = [
        _call(1, name, **{k: v for k, v in arguments.items() if isinstance(v, str | list)}),
        _result(1, "done"),
        claude_record("assistant", [{"type": "text", "text": REPEATED}], 2, "leak-files"),
    ]
    doc = "".join(json.dumps(line) + "\n" for line in lines)
    transcript = read_transcript(Input(io.BytesIO(doc.encode()), "s.jsonl"), None)
    said = [m.content for m in scrubbed(transcript, CaptureReport())]
    assert not [text for text in said if SIGNING in text]


def test_a_transcript_s_title_hides_what_its_conversation_hid(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    """A client's own title is its summary of the conversation ("Rotated SIGNING to V"): it
    named a value the messages hid (an `op read`'s output), in this capture or an earlier
    one, and the session kept it as its title."""
    first = {**claude_record("user", "Rotate the signing secret.", 0, "leak-title"), "uuid": "u1"}
    lines = [first, _call(1, "Bash", command="op read op://prod/signing"), _result(1, SIGNING)]
    later = {**claude_record("user", "Once more.", 5, "leak-title"), "uuid": "u5"}
    transcript = tmp_path / "title.jsonl"
    ctx = make_ctx()
    titles = []
    for part, leaf, said in (
        (lines, "u1", f"Rotated SIGNING to {SIGNING}"),  # hidden in this capture
        ([later], "u5", f"{SIGNING} rotated again"),  # hidden in an earlier one
    ):
        summary = {"type": "summary", "summary": said, "leafUuid": leaf}
        with transcript.open("a") as file:
            file.write("".join(json.dumps(line) + "\n" for line in [*part, summary]))
        ingest(ctx, IngestRequest(transcript=str(transcript), mode="raw"))
        titles.append(ctx.db.value("SELECT title FROM sessions WHERE id = 'leak-title'"))
    ctx.close()
    assert titles == [
        "Rotated SIGNING to [REDACTED:secret]",
        "[REDACTED:secret] rotated again",
    ]
    assert files_holding(home, SIGNING) == []
