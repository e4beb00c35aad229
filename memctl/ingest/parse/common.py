"""What every transcript parser shares: the parsed message, the tally, tool notes."""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memctl.config.safe_load import json_value
from memctl.ingest.parse.secret_commands import prints_secret, runs_shell, stores_secret
from memctl.ingest.tools import (
    LONG_PATH,
    NOTE_START,
    PATCH_FILE,
    SHORT_PATH,
    SUBAGENT_REPORT,
    writes_files,
)
from memctl.lazy_re import lazy
from memctl.memories.privacy import find_secrets, has_label, scrub
from memctl.memories.told_back import memctl_tool, reads_memctl
from memctl.model import Role, format_time, parse_time

NOTE_WIDTH = 160
# Marks a sub-agent's (Claude Code "sidechain") message: its own thread within the session.
SUBAGENT = "[subagent] "
# How the tally names the lines it kept, per kind: "kept user", "kept subagent assistant"
KEPT, KEPT_SUBAGENT = "kept ", "kept subagent "
# The longest report a message keeps: a 20 KB review is whole, a 50 MB result is cut (how much
# of it a digest shows is the ``digest.report_chars`` setting).
REPORT_KEEP = 32_000
REPORT_CUT = f"[report cut at {REPORT_KEEP} characters]"  # ends a report that was longer
# Opens an assistant message holding the summary of the conversation so far that the client
# wrote when it compacted its context: Claude Code's compaction sub-agent's answer and its
# ``isCompactSummary`` turn, Codex's ``compacted`` record. Its <analysis> part is left out.
SESSION_SUMMARY = "[session summary] "
# A client's note of a hook of its own that failed ("[sessionStart hook failed] Error: ...":
# Copilot CLI's hook.end), and what its command printed
HOOK_FAILED = "[{hook} hook failed] "
HOOK_FAILED_NOTE = lazy(r"\A\[(\w+) hook failed\] ")
# Claude Code's prompt to its compaction sub-agent (``agent-acompact-*.jsonl``, 2.1.39)
COMPACTION_PROMPT = lazy(
    r"\A\s*Your task is to create a detailed summary of the conversation so far"
)
SUMMARY_PART = lazy(r"<summary>(.*?)(?:</summary>|\Z)", re.S)
ANALYSIS_PART = lazy(r"<analysis>.*?(?:</analysis>|\Z)", re.S)
# Records the clients write that hold no message by design (seen in real transcripts);
# any other kind passed over is one memctl does not read yet, named in the run's notes.
METADATA_KINDS = frozenset(
    {
        "summary",
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "meta",
        "user without text",
        "assistant without text",
        "subagent without text",
        "tool without text",
        "session_meta",
        "turn_context",
        "event_msg",
        "turn said twice",
        "compacted",
        "compaction prompt",
        "reasoning",
        "state",
        "injected context",
        "developer message",
        "user message",
        "assistant message",
        "turn_ended",
        "approval judge",  # a Codex approval judge's turns (parse/codex.py)
        "info notice",  # Gemini CLI's own notices (generic.NOTICES)
        "error notice",
        "warning notice",
        # Claude Code 2.1.330's: the context it attached to a turn (environment, date,
        # instructions, skill and tool listings, the system prompt's snapshot), its API
        # requests as sent, the tools used, the last prompt again, its costs
        "attachment",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "tools-used",
        "last-prompt",
        "cost-state",
        # Claude Code 2.1.2xx's (its desktop app, JanDeDobbeleer/oh-my-posh's sessions): the
        # session's title (read: custom-title), its permission mode, the PR it opened
        "custom-title",
        "mode",
        "pr-link",
        # Codex's (as scripts/install-clients pins it): the state it loaded (the AGENTS.md
        # text, its settings) and a turn's token counts
        "world_state",
        "token_usage_record",
    }
)
# Entire (entire.io) keeps sessions with what looks like a secret replaced by this word,
# and its earlier versions took high-entropy ids for secrets (entireio/cli, redact/): a
# tool call's id, a session's, a sub-agent's parentID. Such an id names nothing.
REDACTED_ID = "REDACTED"
# A tool call is a sub-agent's when its client names it so, or its input has a sub-agent type
# (Gemini CLI's is delegate_to_agent).
SUBAGENT_TOOLS = frozenset({"task", "agent", "spawn_agent", "delegate_to_agent"})
# Claude Code (2.1.330) runs a sub-agent in the background: its call's result only says it
# started; its report comes later, as a user turn, in a <task-notification>'s <result>.
# GitHub Copilot CLI (1.0.x) likewise: its report is what ``read_agent`` gives back later.
LAUNCHED = lazy(
    r"\A(?:Async agent launched successfully|Agent started in background with agent_id)"
)
TASK_RESULT = lazy(r"\A\s*<task-notification>.*?<result>(.*?)</result>", re.S)
# What Claude Code adds to a sub-agent's report for its model: the agent's id to resume it
# by, and its token count (2.1.x: "agentId: a1b2c3 (for resuming ...)\n<usage>...</usage>");
# 2.1.33x frames the report ("[Subagent hand-back] ... The report follows:") and indents
# each of its lines. None of it is the report the person reads.
REPORT_TRAILER = lazy(r"\n*agentId: [\w-]+ \([^)\n]*\)[^\n]*(?:\n<usage>.*?</usage>)?\s*\Z", re.S)
HANDBACK = lazy(r"\A\[Subagent hand-back\][^\n]*?The report follows:\n", re.S)
# Claude Code's answer when the person said no at the permission prompt (with a word of
# feedback, or without one: 2.0.4x's "... doesn't want to take this action right now. STOP
# ...", which read as a failure made a fact of a refused `git push` "fixed by" the next
# commit), or (Claude Code 1.0 without a prompt, as in print mode) the permission was never
# granted; GitHub Copilot CLI's (1.0.102, its runtime's words) when the person said no
# (error code "rejected"), or when no rule allowed the call and no one was there to ask
# (code "denied": `copilot -p` without --allow-all)
REFUSED = lazy(
    r"^(?:The user doesn't want to (?:proceed with this tool use|take this action)|"
    r"Claude requested permissions? to .{0,300}?but you haven't granted it yet|"
    r"The user rejected this tool call|"
    r"Permission denied (?:because no interactive user response was available|"
    r"because the assisted approval check did not approve|"
    r"and could not request permission from user))",
    re.I,
)
# Exit-code lines of shell tools: Claude Code's Bash ("Exit code 1"), Codex's exec_command
# ("Process exited with code 1") and shell_command ("Exit code: 1"), Gemini CLI's
# run_shell_command ("Exit Code: 1").
EXIT_CODE = lazy(r"^(?:Exit [Cc]ode:? |Process exited with code )(-?\d+)[ \t]*(?:\n|\Z)", re.M)
# Codex's shell output header ("Chunk ID: ...", "Wall time: ...", "Process running with
# session ID 1444") ends at a line "Output:", the last of a result with no output yet.
OUTPUT_HEADER = lazy(r"\A(?:[A-Z][\w ]*(?:: [^\n]*)?\n)*?Output:(?:\n|\Z)")
TOOL_USE_ERROR = lazy(r"</?tool_use_error>")
# Claude Code's result of AskUserQuestion: the person's answers to the assistant's questions
# (their decisions, in their words), kept up to ANSWER_WIDTH: at NOTE_WIDTH a long question
# left no room for its answer in the gold set's sessions.
ANSWERED = lazy(r"^User has answered your questions?: ?")
# A failed command's first output line that says nothing of why (seen in the gold set):
# a banner ("===== test session starts ====="), a log line ("time=... level=info"), a
# warning, a traceback's or a compiler's location, a lone path. The reason comes later.
UNTELLING = lazy(
    r"^(?:[=\-_*#~]{3,}|time=\S+ level=(?:info|debug)|WARN|\S+$|Traceback \(most recent|"
    r"File \".*\", line \d+|npm (?:warn|notice)|> |yarn run v|Browserslist:)|\w*Warning\b|"
    r"\.{4,}\s*(?:Passed|Skipped|OK)\s*$",  # a hook runner's check that passed (pre-commit)
    re.I,
)
FAILURE_LINE = lazy(
    r"\b(?:errors?|fail(?:ed|s|ure)?|exception|not found|denied|fatal|panic|cannot|"
    r"could not|no such|refused|invalid|missing|unable)\b|错误|失败",
    re.I,
)
# A progress line a tool prints before it fails ("[entire] Pushing session logs to origin...",
# mix's "Compiling 4 files (.ex)", uv's "Resolved 4 packages in 55ms"): it says what was
# being done, not why it failed (5 of the studied sets' cases kept one as their error,
# s32-distill); one that names a failure itself stays telling.
PROGRESS = lazy(r"(?:\.{3}|…)\s*$|^[A-Z][a-z]+ing\b|^[A-Z][a-z]+ed \d+ [a-z]")
# An exception's own line ("ModuleNotFoundError: No module named 'x'"; pytest's
# "E   AssertionError: ..."): a Python traceback ends in it.
EXCEPTION_LINE = lazy(r"^(?:E\s+)?[\w.]*(?:Error|Exception|Interrupt)\b:?")
ANSWER_WIDTH = 1000
# A git commit (``git commit -m "$(cat <<'EOF' …"``, ``git -C repo commit -F - <<EOF``): its
# message is the session's own account of what was done and why, and at NOTE_WIDTH its note
# kept the subject and a few words of the body (s35-fresh9: Claude Code's heredocs); its note
# is kept up to ANSWER_WIDTH, scrubbed like every note.
COMMIT_COMMAND = lazy(r"\bgit\s+(?:-C\s+\S+\s+)?commit(?![\w-])")
# A note is scrubbed on its first 4 KiB, then cut to NOTE_WIDTH: a secret crossing the
# 4 KiB mark lies past the width and is cut away whole (a PEM block is redacted to the end).
NOTE_SCAN = 4096
# Fields of a tool's input that say best what the call did, most telling first.
TOOL_DETAIL_KEYS = (
    "command",
    "cmd",
    "file_path",
    "filePath",
    "notebook_path",
    "path",
    "pattern",
    "glob_pattern",
    "url",
    "query",
    "search_term",
    "description",
    "prompt",
)
# The keys of a file tool's input that hold the text it writes, and the text it replaces:
# Claude Code's Write / Edit / MultiEdit (``edits``) / NotebookEdit, Gemini CLI's
# write_file / replace, OpenCode's write / edit, Amp's create_file / edit_file, Copilot
# CLI's create (``file_text``) / edit.
WRITTEN_KEYS = ("new_string", "newString", "new_str", "content", "new_source", "file_text")
REPLACED_KEYS = ("old_string", "oldString", "old_str")
# A file tool's note keeps the start of the lines it wrote that were not there before (what
# a rename or a new setting says: "store as `Summary_[YYYY-MM]`"), at most this many
# characters after its path: twice a note's width, a few lines, never the whole file; the
# message stays one of tool notes only, so it weighs TOOL_NOTES_FACTOR and is never alone
# a clear match (retrieve/run.py).
WRITTEN_WIDTH = 2 * NOTE_WIDTH
PATCH_START = "*** Begin Patch"  # Codex's apply_patch format
PATCH_MOVE = lazy(r"^\*\*\* Move to: (\S+)")  # Codex's patch: the file an update moves to
# A file whose name says it holds credentials, as the tools that keep them document it:
# dotenv files (their templates, ``.env.example`` and the like, hold none), direnv's
# ``.envrc``, SSH and TLS private keys and key stores, npm's, PyPI's, netrc's, PostgreSQL's,
# git's, htpasswd's, Docker's, Vault's, AWS's, RubyGems' and kubectl's credential files,
# Terraform's variables and state, and ``*credentials.json`` / ``client_secret*.json`` /
# ``secrets.yaml``; Cloudflare Wrangler's ``.dev.vars`` and act's ``.secrets`` (dotenv
# files by other names), s3cmd's ``.s3cfg``, boto's ``.boto``, MySQL's ``.my.cnf``,
# Terraform's ``.terraformrc``, GitHub CLI's ``gh/hosts.yml`` and a Google Cloud service
# account's key file (``*service-account*.json``), the Azure CLI's token caches
# (``~/.azure/accessTokens.json``, ``msal_token_cache.json``), hub's ``~/.config/hub``, a
# secret Docker or Kubernetes mounts (``/run/secrets/``, a service account's token under
# ``/var/run/secrets/``). A file tool's note keeps such a file's
# path and not what it wrote, and the result of a call naming one keeps no line of its
# output: the scanner knows a secret by its shape or its label, and a line such as
# ``SIGNING=tr0ub4dor-horse-battery`` has neither, where the file's name says what it is.
# A value set in a command naming a credentials file (``echo "SIGNING=x" >> .env``), and
# what it becomes: the scanner's mark for a labelled secret
ASSIGNED_VALUE = lazy(r"(?<![\w-])([A-Za-z_]\w*)=(?!\[REDACTED)[^\s'\"`;|&)]+")
WITHHELD = "[REDACTED:secret]"  # the scanner's mark for a labelled secret
WITHHELD_VALUE = rf"\1={WITHHELD}"
# A quoted string holding a blank: words, not a path a command acts on
QUOTED_PROSE = lazy(r"(['\"])[^'\"\n]*\s[^'\"\n]*\1")
# The name of such a file: dotenv's ``.env`` and its variants (``.env.production``,
# ``.env_prod``, ``.env-local``; not its templates) and ``prod.env``; then the files named
# above. A glob of one (``.env*``, ``.env{,.local}``, ``*.pem``) names it too: a shell reads
# what matches.
# Kept as a string: QUOTED_SECRET_FILE is built from it without compiling it at import.
SECRET_FILE_NAME = (
    r"(?<![^\s/\\'\"`=:<>(])(?:"
    r"\.env(?:[._-](?!(?:example|sample|template|dist|defaults?)\b)[\w.-]+)?|[\w-]+\.env|\.envrc|"
    r"id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|"
    r"[\w.*?-]+\.(?:pem|key|p12|pfx|ppk|jks|keystore|tfvars|tfstate)|"
    r"\.npmrc|\.pypirc|[._]netrc|\.pgpass|\.git-credentials|\.htpasswd|\.dockercfg|"
    r"\.vault-token|(?:\.aws|\.gem)/credentials|\.docker/config\.json|\.kube/config|"
    r"kubeconfig(?:\.ya?ml)?|[\w.-]*credentials\.(?:json|ya?ml|xml|toml)|"
    r"client_secrets?[\w.-]*\.json|[\w.-]*secrets?\.(?:ya?ml|json|toml)|"
    r"\.dev\.vars|\.secrets|\.s3cfg|\.boto|\.my\.cnf|\.terraformrc|gh/hosts\.ya?ml|"
    r"[\w.-]*service[_-]account[\w.-]*\.json|\.azure/(?:accessTokens|msal_token_cache)\.json|"
    r"\.config/hub|(?:/var)?/run/secrets/[\w./-]+"
    r")(?![^\s'\"`;|&)<>,:*?{\[])"
)
SECRET_FILE = lazy(SECRET_FILE_NAME)
PATH_MAX = 4096  # Linux's longest path (limits.h): a longer value is no path
# A credentials file named as a string of code (``open('.env')``, ``readFileSync(".env")``):
# a script names the files it reads so, inside a quoted ``-c`` argument or a heredoc's
# body, where prose names them bare ("ignore .env").
QUOTED_SECRET_FILE = lazy(r"(['\"])[^'\"\s]*?" + SECRET_FILE_NAME + r"\1")
# The line opening a heredoc (``<<EOF``, ``<<-'EOF'``; not a here-string's ``<<<``): the
# lines up to its word are its body, a file's text or a script's, not the command's words.
HEREDOC = lazy(r"(?<!<)<<-?[ \t]*(['\"]?)(\w+)\1")


@dataclass
class Parsed:
    """One message as a parser read it, before privacy and storage."""

    role: Role
    content: str
    created_at: str | None = None
    speaker: str = ""  # who said it, by name, where the transcript or export says


@dataclass
class Tally:
    """What a parse met besides messages: its metadata and what it passed over."""

    session_id: str | None = None
    title: str = ""
    started_at: str | None = None
    cwd: str | None = None  # the directory the session ran in, when the transcript says
    malformed: int = 0
    skipped: int = 0
    nul_bytes: int = 0  # NUL bytes left out of the text (a crashed append, a stray byte)
    cut: int = 0  # sub-agent reports cut to REPORT_KEEP characters
    speakers: int = 0  # lines of a plain-text transcript naming who speaks ("user: ...")
    notes: list[str] = field(default_factory=list)
    # lines kept and passed over, per kind: "kept user", "passed over system", ...
    lines: Counter[str] = field(default_factory=Counter)
    # tool calls by id, when the client gives results an id: their tool's name, and the
    # ids of those that start a sub-agent, and of those that name a credentials file
    calls: dict[str, str] = field(default_factory=dict)
    subagent_calls: set[str] = field(default_factory=set)
    withheld_calls: set[str] = field(default_factory=set)
    # the secrets a call's result note left out (scrubbed, or its output withheld): value ->
    # kind, for capture's scrubber to hide where a later message repeats one bare
    taken: dict[str, str] = field(default_factory=dict)
    # calls whose id was redacted (REDACTED_ID), by the key each was given, oldest first:
    # the client writes results in the order of their calls, so the next result whose id
    # was redacted is the oldest one's
    redacted_calls: deque[str] = field(default_factory=deque)
    # titles waiting for a message of this session: {the message's uuid: title}
    summaries: dict[str, str] = field(default_factory=dict)
    named: bool = False  # the title is the one the session was given, not a summary
    uuids: set[str] = field(default_factory=set)
    # the last turn said, "role: words", so that a client writing each turn twice (Codex:
    # a response item and an event) keeps it once
    last_said: str = ""
    compacting: bool = False  # the transcript is a compaction sub-agent's
    # the whole transcript is a sub-agent's own thread (a Codex or OpenCode sub-agent's
    # file): its turns are marked as Claude Code's sidechain turns are
    subagent: bool = False
    # in a sub-agent's own thread, the turn read now is one the person started (Codex)
    persons_turn: bool = False
    # the transcript is an approval judge's (Codex's guardian): its turns, passed over, quote
    # its parent's transcript again to ask whether one of the parent's actions may run
    judge: bool = False
    # the transcript writes its history again (Gemini CLI's ``$set`` of messages, on a
    # resume or a compression): a message read may be one said before
    restated: bool = False
    # the threads of the sub-agents this transcript started (Codex's ``spawn_agent`` result
    # names each by its id), whose own transcripts the client's hooks never capture
    spawned: list[str] = field(default_factory=list)

    def keep(self, kind: str) -> None:
        self.lines[f"{KEPT}{kind}"] += 1

    def pass_over(self, kind: str) -> None:
        """Count a record that holds no message (metadata, configuration, a repeat)."""
        self.skipped += 1
        self.lines[f"passed over {kind}"] += 1

    def saw_cwd(self, value: Any) -> None:
        if isinstance(value, str) and value.strip() and not self.cwd:
            self.cwd = value.strip()

    def own_thread(self) -> bool:
        """The transcript is a sub-agent's own: every turn of speech kept is marked as one
        (a Codex or OpenCode sub-agent's, Claude Code's sidechain turns in its file)."""
        said = (f" {Role.USER}", f" {Role.ASSISTANT}")
        turns = [kind for kind in self.lines if kind.startswith(KEPT) and kind.endswith(said)]
        return bool(turns) and all(kind.startswith(KEPT_SUBAGENT) for kind in turns)

    def problems(self) -> str | None:
        """One line saying what of the input was left out and why; None when nothing was."""
        parts = []
        if self.malformed:
            where = f" ({'; '.join(self.notes[:3])})" if self.notes else ""
            parts.append(f"{self.malformed} malformed records passed over{where}")
        if self.nul_bytes:
            parts.append(f"{self.nul_bytes} NUL bytes left out")
        if self.cut:
            parts.append(f"{self.cut} sub-agent reports cut to {REPORT_KEEP} characters")
        unknown = [
            f"{key.removeprefix('passed over ')} ×{n}"
            for key, n in sorted(self.lines.items())
            if key.startswith("passed over ")
            and key.removeprefix("passed over ") not in METADATA_KINDS
        ]
        if unknown:
            parts.append(f"records of kinds not read yet passed over: {', '.join(unknown[:5])}")
        return "input: " + ", ".join(parts) if parts else None

    def bad(self, where: str) -> None:
        """Count a malformed record; the first few are named in the report."""
        self.malformed += 1
        self.lines["malformed"] += 1
        if len(self.notes) < 5:
            self.notes.append(where)


def one_line(text: str, width: int = NOTE_WIDTH, close: str = "") -> str:
    """``text`` as one line of at most ``width`` characters, secrets removed *before* cutting.

    Cutting first could leave a secret too short for the scanner to recognise. ``close``
    (a note's ``]``) is added after the scan: a bare secret ending the text would take it.
    """
    cleaned, _ = scrub(text[:NOTE_SCAN])
    flat = " ".join((cleaned + close).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def tool_detail(arguments: Any) -> str:
    """The most telling part of a tool call's input, as text."""
    if isinstance(arguments, str):
        try:
            arguments = json_value(arguments)
        except ValueError:
            return arguments
    if isinstance(arguments, dict):
        for key in TOOL_DETAIL_KEYS:
            value = arguments.get(key)
            if isinstance(value, str | list) and value:
                return " ".join(value) if isinstance(value, list) else value
    return json.dumps(arguments, ensure_ascii=False) if arguments else ""


def called(tally: Tally, call_id: Any, name: str, arguments: Any) -> None:
    """Remember a call's tool by its id, so its result can say whose it is (and keep no
    line of a credentials file it read, nor of memctl's answer: ``withholds``), and the
    secrets its note leaves out (``tally.taken``); a redacted id is given a key of its own,
    its result's in turn (``result_call``)."""
    if call_id == REDACTED_ID:
        call_id = f"{REDACTED_ID}#{len(tally.calls)}"
        tally.redacted_calls.append(call_id)
    if isinstance(call_id, str) and call_id:
        tally.calls[call_id] = name
        if is_subagent_call(name, arguments):
            tally.subagent_calls.add(call_id)
        if withholds(arguments):
            tally.withheld_calls.add(call_id)
    _taken_by_call(tally, name, arguments)


def took(tally: Tally, name: str, arguments: Any, output: Any, note: str, withheld: bool) -> None:
    """Into ``tally.taken``, the secrets a call's note and its result's ``note`` left out,
    for a transcript that writes a call and its result together, with no id to pair them
    by (OpenCode's tool part, Gemini CLI's ``toolCalls``, SpecStory's tool blocks): as
    ``called`` and ``call_result_note`` do for the others; ``output`` None: no result."""
    _taken_by_call(tally, name, arguments)
    if output is not None:
        _taken_by_result(tally, output, note, withheld)


def _taken_by_call(tally: Tally, name: str, arguments: Any) -> None:
    detail = tool_detail(arguments)[:NOTE_SCAN]
    found = _found_values(detail) if has_label(detail) else {}  # a scan: only when it may find
    tally.taken |= (
        found | _stored_values(detail) | _withheld_values(_secret_written(name, arguments))
    )


def _secret_written(name: str, arguments: Any) -> str:
    """What a call writes into a credentials file (a ``.env``'s lines, a kubeconfig's),
    which its note leaves out as a read's result is left out: a file tool's new text, a
    patch's lines added to such a file, a command's heredoc into one."""
    patch = _patch_of(name, arguments)
    if patch:
        return _added(patch, secret=True)
    if not isinstance(arguments, dict) or not names_secret_file(arguments):
        return ""
    edits = arguments.get("edits")
    written = [
        next((e[k] for k in WRITTEN_KEYS if isinstance(e.get(k), str)), "")[:NOTE_SCAN]
        for e in (edits if isinstance(edits, list) else [arguments])
        if isinstance(e, dict)
    ]
    return "\n".join(written) if any(written) else _secret_heredocs(tool_detail(arguments))


def _taken_by_result(tally: Tally, output: Any, note: str, withheld: bool) -> None:
    if withheld or REDACTED_MARK in note:
        text = (block_text(output) if not isinstance(output, str) else output)[:NOTE_SCAN]
        tally.taken |= _withheld_values(text) if withheld else _found_values(text)


def _stored_values(command: str) -> dict[str, str]:
    """The words of a command line storing a credential (``stores_secret``) but its
    options and the words naming where it goes: the value, given or piped in."""
    found: dict[str, str] = {}
    for line in _command_lines(command):
        stored = stores_secret(line)
        if stored is not None:
            words = line.replace(stored[0], " ", 1).split()
            found |= {w.rpartition("=")[2].strip("'\""): "secret" for w in words if w[0] != "-"}
    return found


def withholds(arguments: Any) -> bool:
    """A call whose result keeps its outcome and no line of its output: one naming a
    credentials file (``names_secret_file``), one running a command that prints a
    credential (``secret_commands.prints_secret``: ``gh auth token``, ``op read``) or stores
    one (``stores_secret``: ``heroku config:set`` and ``doppler secrets set`` print what
    they set), or a
    command line running memctl's own ``recall`` (and the like: memories/told_back.py),
    whose output is memctl's memories read back, kept out as its MCP tools' answers are
    (``tool_result_note``)."""
    detail = tool_detail(arguments)
    return (
        names_secret_file(arguments)
        or any(prints_secret(line) or stores_secret(line) for line in _command_lines(detail))
        or reads_memctl(detail.split("\n", 1)[0])
    )


def names_secret_file(arguments: Any) -> bool:
    """A call whose input names a credentials file (``SECRET_FILE``): its most telling part
    (its file, a patch's files, its command), any other value that is a path or a glob
    (one word: ``{"include": [".env"]}``, ``"glob": ".env*"``) but the text a file tool
    writes, or a file a script's code names in quotes. Of a command, each line but the
    body of a heredoc no shell reads, without quoted prose: such a body and a commit's
    message ("add .envrc to .gitignore") are text, not files the call reads; a command may name the
    file on its second line (``cd app &&`` / ``echo X=1 >> .env``)."""
    detail = tool_detail(arguments)
    if QUOTED_SECRET_FILE.search(detail[:NOTE_SCAN]) or any(
        SECRET_FILE.search(QUOTED_PROSE.sub("", line)) for line in _command_lines(detail)
    ):
        return True
    values = arguments.items() if isinstance(arguments, dict) else []
    return any(
        SECRET_FILE.search(word)
        for key, value in values
        if key not in WRITTEN_KEYS + REPLACED_KEYS
        for word in (value if isinstance(value, list) else [value])
        if isinstance(word, str) and _one_word(word)
    )


def _one_word(text: str) -> bool:
    """A path or a glob: one word, no longer than a path may be."""
    return len(text) <= PATH_MAX and len(text.split()) == 1


def _command_lines(command: str) -> list[str]:
    """The lines of a command (its first ``NOTE_SCAN`` characters) but its heredocs'
    bodies, unless a shell reads the body (``runs_shell``: ``bash <<EOF`` / ``op read``)."""
    return [line for line, opening in _heredoc_lines(command) if not opening or runs_shell(opening)]


def _secret_heredocs(command: str) -> str:
    """The bodies of a command's heredocs whose opening line names a credentials file
    (``cat > .env <<EOF``)."""
    lines = _heredoc_lines(command)
    return "\n".join(line for line, opening in lines if opening and SECRET_FILE.search(opening))


def _heredoc_lines(command: str) -> Iterator[tuple[str, str]]:
    """Each line of a command (its first ``NOTE_SCAN`` characters) but a heredoc's closing
    one, with the line that opened the heredoc whose body it is ('' for none)."""
    ends, opening = "", ""
    for line in command[:NOTE_SCAN].splitlines():
        if ends:
            if line.strip() == ends:
                ends = ""
            else:
                yield line, opening
            continue
        yield line, ""
        opened = HEREDOC.search(line)
        ends, opening = (opened.group(2), line) if opened else ("", "")


def result_call(tally: Tally, call_id: Any) -> str:
    """The call a result answers: by its id, or, the id redacted, the oldest call whose id
    was redacted and that has no result yet."""
    if call_id == REDACTED_ID:
        return tally.redacted_calls.popleft() if tally.redacted_calls else ""
    return str(call_id)


def next_result_call(tally: Tally, call_id: Any) -> str:
    """The call a result answers, as ``result_call`` says, without taking it."""
    if call_id == REDACTED_ID:
        return tally.redacted_calls[0] if tally.redacted_calls else ""
    return str(call_id)


def call_result_note(tally: Tally, call_id: Any, output: Any, is_error: bool = False) -> str:
    """The result of the call ``call_id`` as a note, named by its tool, without a line of
    its output when the call named a credentials file; what it left out goes to
    ``tally.taken``."""
    call = result_call(tally, call_id)
    withheld = call in tally.withheld_calls
    note = tool_result_note(output, is_error, tally.calls.get(call, ""), withheld)
    _taken_by_result(tally, output, note, withheld)
    return note


# The value a line of a withheld output shows: the line itself (``op read``'s password), or
# what follows a name and ``=`` / ``:`` (a dotenv's line, YAML, JSON) or a table's blanks
# (``vault kv get``'s ``signing    VALUE``).
SHOWN_VALUE = lazy(
    r"^[ \t]*(?:[\"']?[\w.-]+[\"']?[ \t]*[:=][ \t]*|[\w.-]+[ \t]{2,})?"
    r"[\"']?([^\s\"']+?)[\"']?,?[ \t]*$",
    re.M,
)
REDACTED_MARK = "[REDACTED"


def _withheld_values(text: str) -> dict[str, str]:
    return {found.group(1): "secret" for found in SHOWN_VALUE.finditer(text)}


def _found_values(text: str) -> dict[str, str]:
    return {text[hit.start : hit.end]: hit.kind for hit in find_secrets(text)}


def tool_use_note(name: str, arguments: Any) -> str:
    """A tool call reduced to one line: ``[tool Bash: git status]``; a file tool's with
    the start of what it wrote: ``[tool Edit: src/app.py + retries = 3]``; a patch's
    (Codex's ``apply_patch``) by its files and its added lines."""
    patch = _patch_of(name, arguments)
    if patch:
        files = " ".join(found.group(0) for found in PATCH_FILE.finditer(patch))
        note, wrote = _call_note(name, files or patch), _added(patch)
    elif (stored := _stored_secret(arguments)) is not None:  # where it went, not what
        note, wrote = _call_note(name, stored), ""
    elif names_secret_file(arguments):  # its path, a command's first line, no value
        detail = tool_detail(arguments).split("\n", 1)[0]
        note, wrote = _call_note(name, ASSIGNED_VALUE.sub(WITHHELD_VALUE, detail)), ""
    else:
        note, wrote = _call_note(name, tool_detail(arguments)), _written(name, arguments)
    if not wrote or note.endswith("…"):
        return note
    # another note's opening inside the text would split this one (tools.read_calls)
    return f"{note[:-1]} + {NOTE_START.sub('(tool ', one_line(wrote, WRITTEN_WIDTH))}]"


def _stored_secret(arguments: Any) -> str | None:
    """A command line of the call storing a credential (``secret_commands.stores_secret``)
    as the words naming where it goes and the names it sets, no value: ``vault kv put
    secret/app signing=[REDACTED:secret]``; None when no line stores one."""
    for line in _command_lines(tool_detail(arguments)):
        stored = stores_secret(line)
        if stored is not None:
            named = [f"{m.group(1)}={WITHHELD}" for m in ASSIGNED_VALUE.finditer(stored[1])]
            return " ".join([stored[0], *(named or [WITHHELD])])
    return None


def _call_note(name: str, detail: str) -> str:
    """``[tool NAME: detail]`` as one line; too long for NOTE_WIDTH, its long paths by
    their last part, cut at NOTE_WIDTH (a commit's with its message: ANSWER_WIDTH,
    ``COMMIT_COMMAND``)."""
    head = f"[tool {name or '?'}"
    note = one_line(f"{head}: {detail}" if detail else head, close="]")
    if not note.endswith("…"):
        return note
    width = ANSWER_WIDTH if COMMIT_COMMAND.search(detail) else NOTE_WIDTH
    return one_line(f"{head}: {LONG_PATH.sub(SHORT_PATH, detail)}", width, "]")


def _written(name: str, arguments: Any) -> str:
    """The lines a file tool's call writes that the text it replaces did not hold."""
    if not isinstance(arguments, dict) or not writes_files(name):
        return ""
    edits = arguments.get("edits")
    lines: list[str] = []
    for edit in edits if isinstance(edits, list) else [arguments]:
        if isinstance(edit, dict):
            old = set(_text_of(edit, REPLACED_KEYS).splitlines())
            new = _text_of(edit, WRITTEN_KEYS).splitlines()
            lines += [line for line in new if line.strip() and line not in old]
    return "\n".join(lines)


def _patch_of(name: str, arguments: Any) -> str:
    """The patch a file tool's call applies (its input, or its input's one text that is a
    patch), '' for any other call."""
    if not writes_files(name):
        return ""
    if isinstance(arguments, str):
        try:
            arguments = json_value(arguments)
        except ValueError:
            pass
    texts = arguments.values() if isinstance(arguments, dict) else [arguments]
    return next((t for t in texts if isinstance(t, str) and PATCH_START in t), "")


def _added(patch: str, secret: bool = False) -> str:
    """A patch's added lines (scrubbed first, as ``_text_of``), without their ``+``; none
    of a credentials file's (``SECRET_FILE``), nor of a file moved to one; with ``secret``,
    only theirs, as written (what the note leaves out)."""
    added, in_secret = [], False
    for line in (patch[:NOTE_SCAN] if secret else scrub(patch[:NOTE_SCAN])[0]).splitlines():
        header, moved = PATCH_FILE.match(line), PATCH_MOVE.match(line)
        if header:
            in_secret = bool(SECRET_FILE.search(header.group(2)))
        elif moved:  # an update's lines go to the file it moves to
            in_secret = in_secret or bool(SECRET_FILE.search(moved.group(1)))
        elif line.startswith("+") and line[1:].strip() and in_secret == secret:
            added.append(line[1:])
    return "\n".join(added)


def _text_of(arguments: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The first of ``keys`` that holds text, scrubbed *before* its lines are compared: a
    private block whose tags the old text holds too must not leave its inside behind."""
    text = next((arguments[k] for k in keys if isinstance(arguments.get(k), str)), "")
    return scrub(text[:NOTE_SCAN])[0]


# A test run's closing summary that counts failures: pytest's "==== 5 failed, 6 passed in
# 0.37s ====", Jest's and Vitest's "Tests: 2 failed, 40 passed", unittest's "FAILED
# (failures=2)", bun's " 1 fail" (a line of its own). A run piped through `tail` exits 0;
# its summary still says it failed.
TESTS_FAILED = lazy(
    r"^=*\s*(?:\d+ passed, )?\d+ failed\b[^\n]*\bin [\d.]+s\b[^\n]*$|"
    r"^\s*Tests:?\s+\d+ failed\b[^\n]*$|^FAILED \((?:failures|errors)=\d+[^\n]*$|"
    r"^\s*[1-9]\d* fail[ \t]*$",
    re.M,
)


# A test run's closing summary that counts what passed: pytest's "==== 12 passed, 1 skipped
# in 0.37s ====", Jest's and Vitest's "Tests: 40 passed", cargo's "test result: ok. 12
# passed", unittest's and bun's "Ran 48 tests ...", RSpec's and ExUnit's "12 examples, 0
# failures": what the run found, where its first line is a banner.
TESTS_PASSED = lazy(
    r"^=*\s*\d+ passed\b[^\n]*\bin [\d.]+s\b[^\n]*$|^\s*Tests:?\s+\d+ passed\b[^\n]*$|"
    r"^test result: \w+\. \d+ passed\b[^\n]*$|^Ran \d+ tests?\b[^\n]*$|"
    r"^\d+ (?:tests?|examples?), \d+ failures?\b[^\n]*$",
    re.M,
)
# A successful result keeps its telling lines up to this many characters: what a search
# found, what a read showed, a run's output (a file's one line "Sphinx of black quartz"
# was past a read's first line, s25-miss's f44). Twice a note's width, as the text a file
# tool wrote (WRITTEN_WIDTH): a few lines, never a whole file; the message stays one of
# tool notes only, so it weighs TOOL_NOTES_FACTOR and is never alone a clear match.
RESULT_WIDTH = 2 * NOTE_WIDTH
RESULT_LINES = " · "  # joins a result's lines, which one line of text would run together
# Tools whose result is their own receipt ("The file … has been updated. Here's the result
# of running `cat -n` on a snippet", "Todos have been modified"): their first line says it;
# what they wrote is their call's note (``tool_use_note``).
RECEIPT_TOOLS = lazy(r"todo|plan", re.I)
# A read's line numbers: Claude Code's Read ("    12→text", cat -n), OpenCode's read
# ("00040| text").
LINE_NUMBER = lazy(r"^\s*\d+(?:→|\| |\t)")
BANNER = "= \t\r"  # what a line of output is wrapped in: "===== 3 passed in 0.02s ====="
# A line that says nothing on its own: punctuation only ("{", "=====", "```"), a lone tag
# ("<file>").
BARE_LINE = lazy(r"^(?:[^\w]*|</?[\w-]+>)$")


# Output that shows a credentials file's lines though the call named none: a diff's section
# of one (``git diff``, ``git show``, ``git log -p``, ``diff -u``, a Codex patch), opened by
# a header naming it and closed by the next header; a search's hit in one, its path before
# its first colon (``grep -rn``: ``app/.env:3:SIGNING=...``), or under its path on a line
# of its own (``rg --heading``: ``3:SIGNING=...``).
DIFF_HEADER = lazy(r"^(?:diff |Index: |\*\*\* (?:Add|Update|Delete) File: |--- \S.*\n\+\+\+ )")
SEARCH_PATH = lazy(r"^([^\s:]+):")
NUMBERED_HIT = lazy(r"^\d+[:-]")


def without_secret_lines(text: str) -> str:
    """``text`` without the lines it shows of a credentials file (``DIFF_HEADER``,
    ``SEARCH_PATH``, ``NUMBERED_HIT``), their headers and paths kept."""
    if not SECRET_FILE.search(text):
        return text
    lines = text.split("\n")
    kept: list[str] = []
    diff = heading = False
    for at, line in enumerate(lines):
        if DIFF_HEADER.match("\n".join(lines[at : at + 2])):
            diff = bool(SECRET_FILE.search(line))
        elif PATCH_MOVE.match(line):
            diff = diff or bool(SECRET_FILE.search(line))
        elif diff or _search_hit_in_secret_file(line):
            continue
        elif len(line.split()) == 1 and SECRET_FILE.search(line):  # ``rg --heading``'s path
            heading = True
        elif not line.strip():
            heading = False
        elif heading and NUMBERED_HIT.match(line):
            continue
        kept.append(line)
    return "\n".join(kept)


def _search_hit_in_secret_file(line: str) -> bool:
    found = SEARCH_PATH.match(line)
    return found is not None and bool(SECRET_FILE.search(found.group(1)))


def tool_result_note(
    output: Any, is_error: bool = False, tool: str = "", withheld: bool = False
) -> str:
    """A tool's output reduced to one line with its outcome: ``[tool result: 3 files
    changed]``, ``[tool error Bash: exit 1: pytest: command not found]`` or ``[tool
    refused ...]`` when the person said no at the permission prompt; named by its ``tool``
    when the client ties results to calls. A shell's exit code decides. What one of
    memctl's own tools answered is memctl's memories read back: like its
    ``<memctl-context>`` block (memories/privacy.py), never stored again, so a memory
    deleted for good leaves no copy in the session that read it, and recall does not
    answer with its own echo. A ``withheld`` output (a credentials file's, by the call's
    ``SECRET_FILE``) keeps its outcome and exit code, and no line of it."""
    if tool and not is_error and memctl_tool(tool):
        return f"[tool result {tool}]"
    whole = block_text(output) if not isinstance(output, str) else output
    text = TOOL_USE_ERROR.sub("", whole[:NOTE_SCAN])
    code = EXIT_CODE.search(text)
    if code:
        is_error = is_error or code.group(1) != "0"
        text = EXIT_CODE.sub("", text)
    text = without_secret_lines(OUTPUT_HEADER.sub("", text.lstrip()))
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    summary = None if is_error else TESTS_FAILED.search(whole[-NOTE_SCAN:])
    if summary is not None:  # the tests failed, whatever the pipe's exit code says
        is_error, first = True, summary.group(0).strip("= ")
    elif is_error and not REFUSED.match(first):
        first = _telling(text, whole)
    width = ANSWER_WIDTH if ANSWERED.match(first) else NOTE_WIDTH
    if width == NOTE_WIDTH and not is_error and _keeps_lines(tool) and not REFUSED.match(first):
        first, width = _result_lines(text, whole), RESULT_WIDTH
    if withheld and not REFUSED.match(first):
        first = ""
    if code and code.group(1) != "0":
        first = f"exit {code.group(1)}: {first}" if first else f"exit {code.group(1)}"
    label = "tool refused" if REFUSED.match(first) else "tool error" if is_error else "tool result"
    label += f" {tool}" if tool and ":" not in tool and "]" not in tool else ""
    return one_line(f"[{label}: {first}" if first else f"[{label}", width, close="]")


def _keeps_lines(tool: str) -> bool:
    """A named tool whose result is more than its receipt (not a file tool's or a todo
    list's), so its telling lines are kept, not its first line only."""
    return bool(tool) and not writes_files(tool) and not RECEIPT_TOOLS.search(tool)


def _result_lines(head: str, whole: str) -> str:
    """A successful result's lines on one line, scrubbed of secrets and private blocks
    first: a test run's closing summary first, then its lines in order, without a read's
    line numbers, reminders, lines that say nothing (``BARE_LINE``) or a note's opening
    (which would split it, as ``tool_use_note``); absolute paths by their last parts when
    the lines run past ``RESULT_WIDTH``."""
    lines = [
        LINE_NUMBER.sub("", line).strip(BANNER)
        for line in without_reminders(scrub(head)[0]).splitlines()
    ]
    kept = [NOTE_START.sub("(tool ", line) for line in lines if not BARE_LINE.match(line)]
    if TESTS_PASSED.search(whole[-NOTE_SCAN:]):  # scrubbed only when there is one to find
        summary = TESTS_PASSED.search(scrub(whole[-NOTE_SCAN:])[0])
        said = summary.group(0).strip(BANNER) if summary else ""
        kept = [said, *(line for line in kept if line != said)] if said else kept
    text = " ".join(RESULT_LINES.join(kept).split())
    if len(text) > RESULT_WIDTH:
        text = LONG_PATH.sub(SHORT_PATH, text)
    # cut past the width (one_line cuts it to the width): one_line scrubs it again, short
    return text[: RESULT_WIDTH + 1]


def _telling(head: str, whole: str) -> str:
    """The line of a failure's output that says why: its first line, unless that one says
    nothing (``UNTELLING``); then, in its first and last ``NOTE_SCAN`` characters, the last
    exception line, else the first other line naming a failure, else the first line that
    does say something, else the first line."""
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    if not lines or not _untelling(lines[0]):
        return lines[0] if lines else ""
    tail = TOOL_USE_ERROR.sub("", whole[-NOTE_SCAN:]) if len(whole) > NOTE_SCAN else ""
    tail = without_secret_lines(tail)
    lines += [line.strip() for line in tail.splitlines() if line.strip()]
    exceptions = [line for line in lines if EXCEPTION_LINE.match(line)]
    if exceptions:
        return exceptions[-1]
    telling = (line for line in lines if FAILURE_LINE.search(line) and not _untelling(line))
    return next(telling, next((line for line in lines if not _untelling(line)), lines[0]))


def _untelling(line: str) -> bool:
    """The line says nothing of why a call failed: ``UNTELLING``, or a progress line
    (``PROGRESS``) that names no failure."""
    return bool(UNTELLING.search(line)) or (
        bool(PROGRESS.search(line)) and not FAILURE_LINE.search(line)
    )


def session_summary(text: str) -> str:
    """A compaction summary as a message: ``SESSION_SUMMARY`` and its <summary> part (the
    text without its <analysis> part when it has none)."""
    found = SUMMARY_PART.search(text)
    body = found.group(1) if found else ANALYSIS_PART.sub("", text)
    return SESSION_SUMMARY + body.strip()


def is_subagent_call(name: str, arguments: Any) -> bool:
    """A call that starts a sub-agent: by the tool's name or by its input's shape."""
    return name.strip().lower() in SUBAGENT_TOOLS or (
        isinstance(arguments, dict) and "subagent_type" in arguments
    )


def subagent_report(output: Any, is_error: bool = False, tool: str = "") -> str:
    """A sub-agent's final report, kept whole up to ``REPORT_KEEP`` characters, as a tool
    message: ``[subagent report]`` and the text; a failed call is an ordinary error note."""
    text = block_text(output) if not isinstance(output, str) else output
    if is_error or not text.strip() or LAUNCHED.match(text):
        return tool_result_note(output, is_error, tool)
    framed = HANDBACK.match(text)
    text = REPORT_TRAILER.sub("", text[framed.end() :] if framed else text)
    text = textwrap.dedent(text) if framed else text
    cleaned, _ = scrub(text[:REPORT_KEEP])
    cut = f"\n{REPORT_CUT}" if len(text) > REPORT_KEEP else ""
    return f"{SUBAGENT_REPORT}\n{cleaned.strip()}{cut}"


def block_text(content: Any) -> str:
    """Text of a content value: a string, or a list of blocks with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    if isinstance(content, dict):
        return block_text(content.get("content") or content.get("text") or "")
    return ""


def timestamp(value: Any) -> str | None:
    """An ISO string or epoch (s or ms) as memctl's timestamp format; None if unreadable."""
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds = value / 1000 if value > 1e11 else value
            return format_time(datetime.fromtimestamp(seconds, UTC))
        if isinstance(value, str) and value:
            return format_time(parse_time(value))
    except (ValueError, OverflowError, OSError):
        pass
    return None


SYSTEM_REMINDER = lazy(r"<system-reminder>.*?</system-reminder>", re.S)


# Claude Code's IDE extension copies into the person's turn a file they @-mention
# (``<context ref="file:///…/docs/x.md">`` and its text: a real fresh2 session) and the
# lines they select (``<ide_selection>The user selected the lines 1 to 3 from PATH:`` and
# the lines). A credentials file's copy keeps its tag and path, not its text, as the
# result of a call reading one does: ``SIGNING=tr0ub4dor-horse-battery`` has no shape or
# label the scanner knows.
IDE_FILE_COPY = lazy(
    r'(?P<head><context\s+ref="(?P<ref>[^"]*)"\s*>|<ide_selection>[^\n<]*?\bfrom\s+'
    r"(?P<path>[^\n<]+?):[ \t]*\n)(?P<text>.*?)(?P<close></context\s*>|</ide_selection\s*>|\Z)",
    re.S,
)


def without_secret_file_copies(text: str, tally: Tally) -> str:
    """``text`` with the copy of a credentials file an IDE put in it (``IDE_FILE_COPY``)
    withheld; its values go into ``tally.taken``, hidden where the conversation repeats
    them."""
    if "<context" not in text and "<ide_selection>" not in text:
        return text

    def withheld(found: re.Match[str]) -> str:
        if not SECRET_FILE.search(found.group("ref") or found.group("path")):
            return found.group(0)
        tally.taken |= _withheld_values(found.group("text"))
        return f"{found.group('head')}{WITHHELD}{found.group('close')}"

    return IDE_FILE_COPY.sub(withheld, text)


def without_reminders(text: str) -> str:
    """Claude Code and others inject ``<system-reminder>`` blocks: not what anyone said."""
    return SYSTEM_REMINDER.sub("", text)
