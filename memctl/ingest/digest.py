"""A session's digest: one episodic memory saying what a coding session did, without an LLM.

Extractive and deterministic: every line of it is cut from the session's own
messages. Its sections:

- Asked: the user's substantive requests (a slash command and its arguments
  count: ``/review the auth module``, ``/init``);
- Decided: decisions, corrections and commitments stated;
- Created, Edited, Ran, Fixed: the files created and edited and the commands run, each only when
  its tool call succeeded (a failed edit or a refused write changed nothing);
  a command that failed and later succeeded is one line, "`X` failed: … →
  fixed by …"; read-only commands (``ls``, ``cat``, ``git status``) are left out;
- Committed, Pushed: the commits git reported making (hash, branch, subject) and where
  it reported pushing them (``git_results``);
- Found: the sub-agents' final reports, headings and conclusions first
  (``digest.report_chars`` of each);
- a compaction summary (``[session summary]``, the client's own account of the
  conversation so far) gives its request when none came before, its errors with their
  fixes (under Fixed) and its pending work (under Left open), see ``summary``;
- Left open: a command still failing at the end, a call refused at the
  permission prompt, a hook of the client's that failed (``HOOK_FAILED_NOTE``), a closing
  question, a last request nobody answered;
- Fetched code: code from the network the session ran (``curl … | sh``) that the user's
  own words did not ask for, named only by its host, never as a command to run again;
- Not done: what the closing answer claims and the tool results deny (a file it says it
  created whose every write was refused or failed, tests it says pass that still fail);
  the claiming sentences leave the outcome;
- Outcome: the closing answer (a short last word, "Committed 5b56300.", after the answer
  before it), without the next steps it announces ("Let me check the logs."): a session
  that ends on one never shows that work done.

Commands that came from fetched content never read as instructions: one that runs
fetched code is listed only under "Fetched code"; one that holds the address of a page
the session fetched (and the user did not write) is marked "(from HOST)". Neither
becomes a fact (``extract_actions``).

A sub-agent's own file (``own_thread``: every turn marked ``[subagent]``) is read as a
session of its own: its calls, and its last answer as the outcome; its "user" is the
parent agent, whose orders are neither requests (the parent's session holds them) nor the
person's rules. The session's title (its first order) and heading say whose it is.

Tool calls are read from the parsers' notes by their shape (a command line, a
file write or patch, a sub-agent), each with the outcome its result note gives.
Injected text (see ``injected``) is left out first. Each section holds at most
``digest.items`` items and the whole digest at most ``digest.max_chars``
characters: the least useful section loses items first (``CUT_ORDER``:
commands, then decisions, the requests between the first and the last, ...);
the first request and the outcome never go. The cost stays linear and the
costly part bounded on huge sessions: decisions are read from the first
``DECISION_SCAN_CHARS`` of said text, and from no sentence longer than a rule
can be (``MAX_CHARS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memctl.ingest.claims import evidence, without_refuted
from memctl.ingest.extract_rules import COMMITMENTS, PATTERNS, match
from memctl.ingest.git_results import commits, pushes
from memctl.ingest.noise import noise_kind
from memctl.ingest.parse.common import (
    HOOK_FAILED_NOTE,
    SESSION_SUMMARY,
    SUBAGENT,
    SUBAGENT_REPORT,
)
from memctl.ingest.rule_sentences import BULLET, MAX_CHARS, QUESTION, sentences, without_lead_in
from memctl.ingest.run_scope import SOURCE_FILE, only_informs
from memctl.ingest.summary import read_summary
from memctl.ingest.tools import (
    CHECKS,
    LIST_ITEM,
    LONG_PATH,
    SHORT_PATH,
    Call,
    Command,
    command_purpose,
    condense,
    found_nothing,
    read_calls,
    shell_command,
    tool_kind,
)
from memctl.lazy_re import lazy
from memctl.memories.injected import strip_injected
from memctl.memories.narration import NEXT_STEP, SENTENCE_BREAK, without_next_steps
from memctl.memories.provenance import fetches_and_runs
from memctl.memories.told_back import memctl_read
from memctl.model import Message, Role

ITEM_WIDTH = 160
REQUEST_MIN_CHARS = 12
# A request that lists its requirements (two short items or more that limit or forbid:
# "max 8 min demo", "no login", "keep the old routes"; a step such as "review the code"
# is not one) keeps each, all within REQUEST_LIST_WIDTH.
REQUEST_MIN_ITEMS = 2
REQUEST_ITEM_WIDTH = 80
REQUEST_LIST_WIDTH = 400
REQUIREMENT = lazy(
    r"\b(?:no|not|never|don't|do not|without|only|max(?:imum)?|min(?:imum)?|minimal|at most|"
    r"at least|must|keep|always|avoid|under|within)\b|\d|只|不要|禁止|必须|最多|最小|"
    r"만|최소|최대|하지 마|必ず|だけ|しないで|最大|最小限",
    re.I,
)
# Said text a digest reads for decisions, from the start: the rule patterns cost ~1 s of CPU a
# MB of short sentences (benchmarks/distil_speed.py), and the gold set's most talkative
# session says 128,000 characters. Past it the session's facts still come from all of it.
DECISION_SCAN_CHARS = 200_000
# "Can you please update these tests?" asks for work; "Can you help me?" asks nothing yet
META_REQUEST_MIN_WORDS = 6
OUTCOME_MIN_CHARS = 60
SHORT_AFTER = "\n\nThen: "  # joins a short closing word to the answer before it
OUTCOME_CHARS = 400
# A closing answer that lists findings (a review's issues, the steps done) keeps each of
# them, condensed, within this; the gold set's /review answer lists five in about 800.
FINDINGS_CHARS = 900
FINDINGS_MIN_ITEMS = 2
ERROR_WIDTH = 70
# A case fact keeps the error's telling line as its tool note does (parse.common.NOTE_WIDTH):
# what was missing or wrong is said last ("missing 1 required positional argument:
# 'library_version'", "No module named 'extract_coderabbit_feedback'"), and a cut at
# ERROR_WIDTH, right for the digest's short lines, loses it from the fact that answers.
CASE_ERROR_WIDTH = 160
COMMAND_WIDTH = 50
# A case fact keeps a path argument the cut at COMMAND_WIDTH falls in whole: the failing
# run's file is what a question names ("`uv run pytest test/test_combined_transcript_link.…`"
# lost it), up to the longest command a command fact keeps (extract_actions.MAX_COMMAND).
CASE_COMMAND_WIDTH = 120
# a report's closing offer, which NEXT_STEP also matches: no work still to do
CLOSING_OFFER = lazy(r"^\W*(?:let me know|feel free|hope this helps)\b", re.I)
AGAIN = "running it again"  # a failure whose fix was only a retry: no case to learn
# the steps of a command line that only change directory before it runs ("cd test && pytest")
OWN_CD = lazy(r"^(?:\s*cd\s+\S+\s*(?:&&|;))+\s*")
# a failure that says a file or directory is not where the command looked
NOT_THERE = lazy(
    r"no such file or directory|file or directory not found|cannot find the path", re.I
)
# kinds of rule match that say what was decided or set right
DECISION_KINDS = frozenset({"decision", "correction", "convention", "rule", "commitment"})
# an address in a command or a tool's input: its host
URL = lazy(r"\b(?:https?|ftp)://([^/\s:'\"`)]+)", re.I)
# tools that bring a page from the network into the session
FETCH_TOOLS = lazy(r"fetch|web|browse|url|http", re.I)
DOWNLOADS = lazy(r"\b(?:curl|wget|http|xh|iwr|invoke-webrequest)\b", re.I)
# files an assistant writes for itself, not for the project (Claude Code's plan mode)
OWN_FILES = lazy(r"/\.claude/plans/")
# the order in which sections lose items when the digest is too long, least useful first:
# (section, the items it keeps at this step). Commits but two, and pushes but one, go right
# after the commands: six commits of a long session took the room of the requests between
# its first and last, which said where its code went (fresh's f15, s31-fresh2).
CUT_ORDER = (
    ("Ran", 0),
    ("Committed", 2),
    ("Pushed", 1),
    ("Decided", 0),
    ("Asked", 2),
    ("Found", 1),
    ("Edited", 2),
    ("Created", 2),
    ("Fixed", 1),
    ("Left open", 1),
    ("Asked", 1),
    ("Edited", 0),
    ("Created", 0),
    ("Found", 0),
    ("Committed", 0),
    ("Pushed", 0),
    ("Fixed", 0),
    ("Left open", 0),
)


@dataclass
class SessionDigest:
    """The sections of a digest, each a list of short lines, in the session's order."""

    requests: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)  # "5c1b231 on main: subject"
    pushed: list[str] = field(default_factory=list)  # "main to REMOTE (old..new)"
    reports: list[str] = field(default_factory=list)
    left_open: list[str] = field(default_factory=list)
    outcome: str = ""
    acted: int = 0  # commands run and files changed, listed or not
    calls: list[Call] = field(default_factory=list)  # every tool call, with its outcome
    fixes: list[tuple[str, Call]] = field(default_factory=list)  # (line, the fixing call)
    fetched: list[str] = field(default_factory=list)  # hosts of fetched code run, unasked
    not_done: list[str] = field(default_factory=list)  # claims the tool results deny
    subagent: bool = False  # a sub-agent's own file (``own_thread``): its "user" is an agent

    def useful(self) -> bool:
        """The session did something (ran a command, changed a file, had a sub-agent
        report), or answered a request at some length; chit-chat makes no digest."""
        if self.acted or self.reports or self.fixed:
            return True
        asked = bool(self.requests) or self.subagent  # a sub-agent is always asked
        return asked and len(self.outcome) >= OUTCOME_MIN_CHARS


def _cut(text: str, width: int = ITEM_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _add(items: list[str], value: str, limit: int) -> None:
    value = value.strip()
    if value and value not in items and len(items) < limit:
        items.append(value)


def _request(text: str) -> str | None:
    """The ask of a user message: its first sentences, or None for "ok", "continue"."""
    if text.startswith("/"):  # a slash command: the command and its arguments
        return _cut(text.splitlines()[0])
    kind = noise_kind(text)
    if kind == "meta-question" and len(text.split()) >= META_REQUEST_MIN_WORDS:
        kind = None  # a polite request: "Can you please update these tests? ..."
    if len(text) < REQUEST_MIN_CHARS or kind:
        return None
    lines = text.splitlines()
    items = [BULLET.sub("", line).strip() for line in lines if BULLET.match(line)]
    rules = [i for i in items if len(i) <= REQUEST_ITEM_WIDTH and REQUIREMENT.search(i)]
    prose = "\n".join(line for line in lines if not BULLET.match(line))
    first = _cut(" ".join(sentences(prose)[:2])) if prose.strip() else ""
    if len(rules) >= REQUEST_MIN_ITEMS:  # the requirements a request lists, each short
        first = f"{first} ({_cut('; '.join(rules), REQUEST_LIST_WIDTH)})".strip()
    elif not first:
        first = _cut(" ".join(sentences(text)[:2]))
    return first or None


def _decisions(text: str, role: Role) -> list[str]:
    patterns = PATTERNS if role == Role.USER else COMMITMENTS
    found = []
    for raw in sentences(text):
        sentence = BULLET.sub("", raw).strip()
        if len(sentence) > MAX_CHARS:  # no rule, as for the facts: and it keeps this linear
            continue
        if QUESTION.search(sentence) or sentence.startswith("[tool"):
            continue
        pattern = match(sentence, patterns)
        if pattern is not None and pattern.kind in DECISION_KINDS:
            found.append(_cut(without_lead_in(sentence)))
    return found


def _prose(text: str) -> str:
    """A message without its tool-note lines."""
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("[tool"))


@dataclass
class _Reading:
    """What a pass over the messages collects before the sections are written."""

    calls: list[Call] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    last_user: str = ""  # the last request, until an answer follows it
    sidechain_report: str = ""
    # reports taken from a sidechain's last words since the last report a call gave back: a
    # background sub-agent's turns (Copilot CLI's) are read between its parent's, so these
    # are its interim words once its report comes
    interim: list[int] = field(default_factory=list)
    user_words: list[str] = field(default_factory=list)  # the user's prose, flattened
    scanned: int = 0  # characters of said text read for decisions
    turn_start: int = 0  # the first call since the user last spoke

    def echoes(self) -> bool:
        """The calls since the user last spoke are all memctl's own reads (a
        ``memory_search``, a ``memctl recall`` in a shell): an answer now tells memctl's
        memories back, no work of the session's."""
        turn = self.calls[self.turn_start :]
        return bool(turn) and all(memctl_read(call.name, call.detail) for call in turn)


def own_thread(messages: list[Message]) -> bool:
    """The messages are a sub-agent's own file (a Claude Code or Cursor ``subagents/`` file,
    a Codex sub-agent rollout, an OpenCode session with a parent): every turn that says
    something is marked ``[subagent]``. Its calls are its own, its "user" is the parent
    agent, and its last answer is its outcome; in a session of its own, marked turns are a
    sub-agent's thread inside it (they end in a report)."""
    said = [
        m.content.startswith(SUBAGENT)
        for m in messages
        if m.role != Role.TOOL
        and (text := strip_injected(m.content.removeprefix(SUBAGENT)).text)
        and _prose(text).strip()
        and not text.startswith((SESSION_SUMMARY, SUBAGENT_REPORT))
    ]
    return bool(said) and all(said)


def _read(messages: list[Message], digest: SessionDigest, limit: int) -> _Reading:
    reading = _Reading()
    for message in messages:
        # a sub-agent's own file is read as a session, its orders as no one's rules
        own = message.content.removeprefix(SUBAGENT) if digest.subagent else message.content
        text = strip_injected(own).text
        if text.startswith(SESSION_SUMMARY):
            _summarised(text.removeprefix(SESSION_SUMMARY), digest, limit)
            continue
        if text.startswith(SUBAGENT_REPORT):
            for at in reversed(reading.interim):
                del reading.reports[at]
            reading.reports.append(text.removeprefix(SUBAGENT_REPORT))
            reading.sidechain_report, reading.interim = "", []  # the sidechain's, ended here
            continue
        subagent = text.startswith(SUBAGENT)
        text = text.removeprefix(SUBAGENT)
        if not subagent:
            known = len(reading.calls)
            read_calls(text, reading.calls)
            for call in reading.calls[known:]:
                call.at = message.created_at or ""
        prose = _prose(text).strip()
        if subagent:
            if message.role == Role.ASSISTANT and prose:
                reading.sidechain_report = prose
            continue
        if reading.sidechain_report:  # back in the main thread: the last words were its report
            reading.interim.append(len(reading.reports))
            reading.reports.append(reading.sidechain_report)
            reading.sidechain_report = ""
        hook = HOOK_FAILED_NOTE.match(text) if message.role == Role.TOOL else None
        if hook:  # a hook of the client's that failed: what it printed is left open
            said = _cut(text[hook.end() :], ERROR_WIDTH)
            _add(digest.left_open, f"{hook.group(1)} hook failed: {said}", limit)
        if not prose or message.role == Role.TOOL:
            continue
        if message.role == Role.USER:
            reading.turn_start = len(reading.calls)
            reading.user_words.append(_flat(prose))
            # a sub-agent's orders are its parent's words, kept in the parent's session (its
            # call): listed here they make its digest answer for the parent's work
            request = None if digest.subagent else _request(prose)
            if request:
                _add(digest.requests, request, limit)
                reading.last_user = request
        elif reading.echoes():  # memctl's results told back: no outcome, no decision
            reading.last_user = ""
            continue
        else:
            # a short last word ("Committed 5b56300.") keeps the answer before it
            if len(prose) < OUTCOME_MIN_CHARS and len(digest.outcome) >= OUTCOME_MIN_CHARS:
                prose = f"{digest.outcome.split(SHORT_AFTER)[0]}{SHORT_AFTER}{prose}"
            digest.outcome, reading.last_user = prose, ""
        if len(digest.decisions) < limit and reading.scanned < DECISION_SCAN_CHARS:
            reading.scanned += len(prose)
            role = Role.ASSISTANT if digest.subagent else message.role
            for decision in _decisions(prose, role):
                _add(digest.decisions, decision, limit)
    if reading.sidechain_report:
        reading.interim.append(len(reading.reports))
        reading.reports.append(reading.sidechain_report)
    for at in reversed(reading.interim):  # a sub-agent that never reported
        if _unfinished(reading.reports[at]):
            del reading.reports[at]
    return reading


def _unfinished(said: str) -> bool:
    """A sub-agent's last words announce its next step ("Base and five commits confirmed,
    tree clean. Let me inspect each diff.": a reviewer still at work when fresh9's Copilot
    CLI session ended): they are where it stood, no report. "Let me know …" closes one."""
    lines = [line for line in said.splitlines() if line.strip()]
    last = SENTENCE_BREAK.split(lines[-1].strip())[-1] if lines else ""
    return bool(NEXT_STEP.match(last)) and not CLOSING_OFFER.match(last)


def _summarised(text: str, digest: SessionDigest, limit: int) -> None:
    """What a compaction summary states (``summary``): its request when none came before,
    each error with its fix, and the work it left pending."""
    said = read_summary(text)
    if said.asked and not digest.requests:
        _add(digest.requests, _cut(said.asked), limit)
    for line in said.fixed:
        _add(digest.fixed, _cut(line), limit)
    for line in said.pending:
        _add(digest.left_open, _cut(f"pending: {line}"), limit)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _host(text: str) -> str:
    found = URL.search(text)
    return found.group(1).lower() if found else ""


def _provenance(calls: list[Call], user_words: list[str]) -> None:
    """Mark the shell calls whose command came from fetched content, not from the user:
    one that runs fetched code, and one that holds the address of a host the session
    fetched a page from. A command the user wrote is the user's."""
    said = "\n".join(user_words)
    fetched: set[str] = set()
    for call in calls:
        kind = tool_kind(call.name, call.detail)
        host = _host(call.detail)
        if kind == "other" and FETCH_TOOLS.search(call.name) and host:
            fetched.add(host)
        if kind != "shell" or _flat(shell_command(call.detail).text) in said:
            continue
        call.runs_fetched_code = fetches_and_runs(call.detail)
        if call.runs_fetched_code or (host in fetched and host not in said.lower()):
            call.fetched_from = host or "an unnamed host"
        elif host and DOWNLOADS.search(call.detail):  # a page read with curl or wget
            fetched.add(host)


def _short(command: str) -> str:
    """A command as a digest line shows it: absolute paths by their last part, so that the
    width goes to what was run ("git -C …/repiq commit --no-verify")."""
    return LONG_PATH.sub(SHORT_PATH, command)


def _case_command(command: str) -> str:
    """A failing command as its case shows it: cut at COMMAND_WIDTH, or after the path
    argument that cut falls in (see CASE_COMMAND_WIDTH)."""
    flat = " ".join(command.split())
    if len(flat) <= COMMAND_WIDTH:
        return flat
    start = flat.rfind(" ", 0, COMMAND_WIDTH - 1) + 1
    end = flat.find(" ", COMMAND_WIDTH - 1)
    end = len(flat) if end < 0 else end
    word = flat[start:end]
    if end > CASE_COMMAND_WIDTH or not ("/" in word or SOURCE_FILE.search(word)):
        return _cut(flat, COMMAND_WIDTH)
    return flat[:end] + (" …" if end < len(flat) else "")


def _error(call: Call, width: int = ERROR_WIDTH) -> str:
    return _cut((call.error or "an error").replace("\\n", " "), width)


def _changes(digest: SessionDigest, calls: list[Call], limit: int) -> None:
    """Files and commands that succeeded; failures paired with what fixed them."""
    failing: dict[str, tuple[Call, int]] = {}  # a failing command's key: it, and where
    for n, call in enumerate(calls):
        kind = tool_kind(call.name, call.detail)
        if memctl_read(call.name, call.detail):  # memctl's store read back: no work done
            continue
        if kind == "file" and call.succeeded:
            digest.acted += 1
            for created, path in call.files():
                if not OWN_FILES.search(path):
                    _add(digest.created if created else digest.edited, path, limit)
        elif kind == "shell" and call.runs_fetched_code:
            digest.acted += 1
            how = "refused" if call.refused else "ran" if call.succeeded else "failed"
            _add(digest.fetched, f"from {call.fetched_from} ({how})", limit)
        elif kind == "shell":
            command = shell_command(call.detail)
            digest.acted += 1
            if call.succeeded:
                _git_made(digest, command, call, limit)
            if call.refused:
                _add(digest.left_open, f"`{_cut(command.text, 80)}` refused", limit)
            elif not call.succeeded and command.key:
                failing[command.key] = failing.get(command.key, (call, n))
            elif call.succeeded and (done := _retried(command.keys, failing)):
                failed, since = failing.pop(done)
                fix = _fix(calls[since + 1 : n], call, failed)
                text = _short(shell_command(failed.detail).text)
                line = f"`{_cut(text, COMMAND_WIDTH)}` failed: "
                _add(digest.fixed, f"{line}{_error(failed)} → fixed by {fix}", limit)
                if fix != AGAIN and not call.fetched_from:
                    case = f"`{_case_command(text)}` failed: {_error(failed, CASE_ERROR_WIDTH)}"
                    digest.fixes.append((f"{case} → fixed by {fix}", call))
            elif call.succeeded and not command.read_only:
                mark = f" (from {call.fetched_from})" if call.fetched_from else ""
                _add(digest.commands, _cut(command.text, 100) + mark, limit)
        elif kind == "file" and call.refused:
            named = " ".join([call.name, *call.detail.split()[:1]])
            _add(digest.left_open, f"{named} refused", limit)
    for failed, _ in failing.values():
        if found_nothing(failed):  # a search with no match: nothing failing to leave open
            continue
        text = _cut(_short(shell_command(failed.detail).text), COMMAND_WIDTH)
        _add(digest.left_open, f"`{text}` still failing: {_error(failed)}", limit)


def _git_made(digest: SessionDigest, command: Command, call: Call, limit: int) -> None:
    """The commits and pushes a succeeding command line's git steps report (``git_results``)."""
    steps = {" ".join(key.split()[:2]) for key in command.keys}
    if "git commit" in steps:
        for made in commits(call.error):
            _add(digest.committed, made, limit)
    if "git push" in steps:
        for went in pushes(call.error):
            _add(digest.pushed, went, limit)


def _retried(keys: tuple[str, ...], failing: dict[str, tuple[Call, int]]) -> str:
    """The failing command a succeeding one ran again: its first step's key, or a later
    step's when every step runs the same program ("git pull --rebase && git push" runs a
    failed "git push" again; "rm out && sed ..." is not a rerun of a failed sed)."""
    if keys and keys[0] in failing:
        return keys[0]
    programs = {key.split()[0] for key in keys}
    return next((key for key in keys[1:] if key in failing and len(programs) == 1), "")


def _checks(command: str) -> bool:
    """A test, build, type check or lint run (not one asked to fix): it looks, it mends
    nothing, so it is never what fixed a failure."""
    purpose = command_purpose(command)
    lint = purpose is not None and purpose[0] == "lint runs" and "--fix" not in command
    return lint or purpose is not None and purpose[0] in CHECKS


def _fix(between: list[Call], success: Call, failure: Call) -> str:
    """What came between a failure and the success of its command: the files changed and
    other commands run in the same place (not ``git -C`` another repository), else the flags
    it finally ran with and had not ("adding `--no-verify`"), else the command as it
    finally ran."""
    failed = shell_command(failure.detail).text
    files = [
        p
        for c in between
        if c.succeeded and tool_kind(c.name, c.detail) == "file"
        for _, p in c.files()
    ]
    place = _place(shell_command(failed).key)
    commands = [
        shell_command(c.detail).text
        for c in between
        if c.succeeded and tool_kind(c.name, c.detail) == "shell" and not c.runs_fetched_code
    ]
    commands = [
        c
        for c in commands
        if not shell_command(c).read_only
        and not _checks(c)
        and _place(shell_command(c).key) == place
    ]
    parts = [f"`{_cut(_short(c), COMMAND_WIDTH)}`" for c in commands[:2]]
    if files:
        names = dict.fromkeys(p.rsplit("/", 1)[-1] for p in files)
        parts.insert(0, "editing " + ", ".join(list(names)[:3]))
    final = shell_command(success.detail).text
    if only_informs(final) and not only_informs(failed):  # "pytest --markers" printed
        return AGAIN
    added = [w for w in final.split() if w.startswith("-") and w not in failed.split()]
    if added and _same_head([w for w in final.split() if w not in added], failed.split()):
        # the same command with a flag more: the flag is the fix
        parts.insert(0, "adding " + " ".join(f"`{_cut(w, COMMAND_WIDTH)}`" for w in added[:3]))
    elif not parts and final != failed and not _elsewhere(final, failed, failure.error or ""):
        parts.append(f"`{_cut(_short(final), COMMAND_WIDTH)}`")
    return " and ".join(parts) if parts else AGAIN


def _elsewhere(final: str, failed: str, error: str) -> bool:
    """The final command is the failed one run from another place, and what failed was
    where it stood (``NOT_THERE``): without the failed one's own ``cd``, its paths written
    from elsewhere (``pytest test/a.py`` failed, ``pytest /repo/test/a.py`` ran), or, when it
    never got past its ``cd``, an inline script written anew. Where the shell stood is no
    lesson of the project (4 of the 121 facts of the studied sessions, s30-distill)."""
    if not NOT_THERE.search(error):
        return False
    moved = OWN_CD.sub("", failed)
    one, other = _base_names(final), _base_names(moved)
    quoted = any(w[:1] in "\"'" or "$(" in w for w in one + other)
    return one == other or moved != failed and quoted and _same_head(one, other)


def _base_names(command: str) -> list[str]:
    """The command's words, a path reduced to its last part."""
    return [word.rstrip("/").rsplit("/", 1)[-1] for word in command.split()]


def _place(key: str) -> str:
    """The directory a command's key names (``git commit @../shop``), "" for none."""
    return key.rpartition(" @")[2] if " @" in key else ""


def _same_head(one: list[str], other: list[str]) -> bool:
    """Two commands' words agree up to the first quoted or substituted argument of either
    (a commit message written another way), or to where the shorter note was cut."""
    ends = [len(one), len(other)]
    for words in (one, other):
        ends += [n for n, w in enumerate(words) if w[:1] in "\"'" or "$(" in w][:1]
    end = min(ends)
    return end >= 1 and one[:end] == other[:end]


def build_digest(messages: list[Message], limit: int, report_chars: int) -> SessionDigest:
    """The digest of a session's messages (oldest first), at most ``limit`` items a section
    and ``report_chars`` characters of each sub-agent's report."""
    digest = SessionDigest(subagent=own_thread(messages))
    reading = _read(messages, digest, limit)
    digest.calls = reading.calls
    _provenance(reading.calls, reading.user_words)
    _changes(digest, reading.calls, limit)
    for report in reading.reports:
        _add(digest.reports, condense(report, report_chars), limit)
    if reading.last_user:
        _add(digest.left_open, f"unanswered: {reading.last_user}", limit)
    closing = sentences(digest.outcome)
    if closing and QUESTION.search(closing[-1]):
        _add(digest.left_open, f"asked: {_cut(closing[-1])}", limit)
    _check_claims(digest, limit)
    return digest


def _check_claims(digest: SessionDigest, limit: int) -> None:
    """Tool results outrank claims (``claims``): a closing sentence saying a file was made
    whose writes were refused or failed, or a clause saying tests pass while a command
    still fails, leaves the outcome, and "Not done" says what happened; a sub-agent's
    report loses such claims the same way."""
    found = evidence(digest.calls, digest.left_open)
    if not found:
        return
    outcome, happened = without_refuted(digest.outcome, found)
    reports = [without_refuted(r, found) for r in digest.reports]
    for line in happened + [h for _, said in reports for h in said]:
        _add(digest.not_done, line, limit)
    if happened:
        digest.outcome = outcome
    digest.reports = [
        r if said else report for (r, said), report in zip(reports, digest.reports, strict=True)
    ]


def _paths(paths: list[str]) -> list[str]:
    """Several paths relative to the directory they all share, when they share one."""
    folders = [p.rsplit("/", 1)[0] for p in paths if p.startswith("/") and "/" in p[1:]]
    if len(folders) < len(paths) or len(folders) < 2:
        return paths
    root = folders[0]
    for folder in folders[1:]:
        while root and not (folder == root or folder.startswith(root + "/")):
            root = root.rsplit("/", 1)[0]
    return [p[len(root) :].lstrip("/") if root and p.startswith(root + "/") else p for p in paths]


def render(digest: SessionDigest, heading: str, max_chars: int) -> str:
    """The digest as text, one section a line, within ``max_chars``: the least useful
    section loses items first (``CUT_ORDER``); the request and the outcome stay."""
    sections = {
        "Asked": list(digest.requests),
        "Decided": list(digest.decisions),
        "Created": _paths(digest.created),
        "Edited": _paths(digest.edited),
        "Ran": list(digest.commands),
        "Committed": list(digest.committed),
        "Pushed": list(digest.pushed),
        "Fixed": list(digest.fixed),
        "Found": list(digest.reports),
        "Left open": list(digest.left_open),
        "Not done": list(digest.not_done),
        "Fetched code, not asked for": list(digest.fetched),
    }
    outcome = _outcome(digest.outcome, OUTCOME_CHARS)

    def text() -> str:
        lines = [heading] + [f"{k}: " + "; ".join(v) for k, v in sections.items() if v]
        return "\n".join(lines + ([f"Outcome: {outcome}"] if outcome else []))

    for section, keep in CUT_ORDER:
        while len(text()) > max_chars and len(sections[section]) > keep:
            # requests lose their middle first: the first says what the session was for,
            # the last is where it ended (often a correction of what was done)
            sections[section].pop(-2 if section == "Asked" and keep >= 2 else -1)
    if len(text()) > max_chars:  # one long request and a long outcome: both shortened
        room = max(40, (max_chars - len(heading)) // 2 - 20)
        sections["Asked"] = [_cut(a, room) for a in sections["Asked"]]
        outcome = _outcome(digest.outcome, room)
    return text()[:max_chars]


def _outcome(text: str, chars: int) -> str:
    """The closing answer in ``chars`` characters, without the next steps it announces
    (``without_next_steps``); one that lists findings keeps each of them, condensed (in up
    to FINDINGS_CHARS), not the first few whole and the rest cut."""
    text = without_next_steps(text)
    items = sum(bool(LIST_ITEM.match(line)) for line in text.splitlines())
    if items >= FINDINGS_MIN_ITEMS:
        chars = max(chars, FINDINGS_CHARS) if chars >= OUTCOME_CHARS else chars
    return condense(text, chars)
