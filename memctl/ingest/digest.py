"""A session's digest: one episodic memory saying what a coding session did, without an LLM.

Extractive and deterministic: every line of it is cut from the session's own
messages. It lists the substantive requests of the user, the decisions,
corrections and commitments stated (by the user or the assistant), the files
created and edited and the commands run (from the tool calls), the errors
met and what came next, the sub-agents' final reports, and the outcome (the
closing answer). Injected text (see ``injected``) is left out first. Each
section holds at most ``digest.items`` items and the whole digest at most
``digest.max_chars`` characters. It is dated by the session's first message
and its source names the range of messages it covers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memctl.ingest.extract_rules import BULLET, COMMITMENTS, PATTERNS, QUESTION, match, sentences
from memctl.ingest.injected import strip_injected
from memctl.ingest.noise import noise_kind
from memctl.ingest.parse.common import SUBAGENT
from memctl.model import Message, Role

DIGEST_TAG = "digest"
ITEM_WIDTH = 160
REQUEST_MIN_CHARS = 12
OUTCOME_MIN_CHARS = 60
# kinds of rule match that say what was decided or set right
DECISION_KINDS = frozenset({"decision", "correction", "convention", "rule", "commitment"})
# one or more notes on a line: "[tool Write: a.py] [tool result: ok]"
TOOL_NOTE = re.compile(r"\[tool ([^:\]]+)(?::\s*(.*?))?\](?=\s*\[tool |\s*$)")
TOOL_ERROR = re.compile(r"\[tool error(?::\s*(.*?))?\](?=\s*\[tool |\s*$)")
CREATING_TOOLS = frozenset({"write", "create", "create_file", "write_file"})
EDITING_TOOLS = frozenset(
    {"edit", "multiedit", "str_replace_based_edit_tool", "notebookedit", "patch", "apply_patch"}
)
SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell", "run_terminal_cmd"})
PATCH_FILE = re.compile(r"\*\*\* (Add|Update|Delete) File: (\S+)")
SHELL_WRAPPER = re.compile(r"^(?:ba|z)?sh -l?c\s+")


@dataclass
class SessionDigest:
    """The sections of a digest, each a list of short lines, in the session's order."""

    requests: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    outcome: str = ""

    def useful(self) -> bool:
        """A request and something done about it: files, commands, errors, a sub-agent's
        report or a closing answer of some length (chit-chat makes no digest)."""
        acted = self.created or self.edited or self.commands or self.errors or self.reports
        return bool(self.requests) and bool(acted or len(self.outcome) >= OUTCOME_MIN_CHARS)


def _cut(text: str, width: int = ITEM_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _add(items: list[str], value: str, limit: int) -> None:
    value = value.strip()
    if value and value not in items and len(items) < limit:
        items.append(value)


def _request(text: str) -> str | None:
    """The ask of a user message: its first sentences, or None for "ok", "continue"."""
    if len(text) < REQUEST_MIN_CHARS or noise_kind(text):
        return None
    first = " ".join(sentences(text)[:2])
    return _cut(first) if first else None


def _decisions(text: str, role: Role) -> list[str]:
    patterns = PATTERNS if role == Role.USER else COMMITMENTS
    found = []
    for raw in sentences(text):
        sentence = BULLET.sub("", raw).strip()
        if QUESTION.search(sentence) or sentence.startswith("[tool"):
            continue
        pattern = match(sentence, patterns)
        if pattern is not None and pattern.kind in DECISION_KINDS:
            found.append(_cut(sentence))
    return found


def _shorten(path: str, root: str) -> str:
    return path[len(root) :].lstrip("/") if root and path.startswith(root + "/") else path


def _tool(digest: SessionDigest, name: str, detail: str, limit: int) -> None:
    tool = name.strip().lower()
    if tool in CREATING_TOOLS and detail:
        _add(digest.created, detail.split()[0], limit)
    elif tool in EDITING_TOOLS:
        patched = PATCH_FILE.findall(detail)
        for action, path in patched:
            _add(digest.created if action == "Add" else digest.edited, path, limit)
        if not patched and detail:
            _add(digest.edited, detail.split()[0], limit)
    elif tool in SHELL_TOOLS and detail:
        _add(digest.commands, _cut(SHELL_WRAPPER.sub("", detail), 100), limit)


def _tool_lines(digest: SessionDigest, text: str, limit: int) -> None:
    for line in text.splitlines():
        line = line.strip()
        error = TOOL_ERROR.search(line)
        if error:
            _add(digest.errors, _cut(error.group(1) or "a tool failed", 120), limit)
        for note in TOOL_NOTE.finditer(line):
            if note.group(1) not in ("result", "error"):
                _tool(digest, note.group(1), (note.group(2) or "").rstrip("…"), limit)


def _prose(text: str) -> str:
    """A message without its tool-note lines."""
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("[tool"))


def build_digest(messages: list[Message], limit: int) -> SessionDigest:
    """The digest of a session's messages (oldest first), at most ``limit`` items a section."""
    digest = SessionDigest()
    report = ""
    for message in messages:
        text = strip_injected(message.content).text
        subagent = text.startswith(SUBAGENT)
        text = text.removeprefix(SUBAGENT)
        _tool_lines(digest, text, limit)
        prose = _prose(text).strip()
        if subagent:
            report = prose if message.role == Role.ASSISTANT and prose else report
            continue
        if report:  # back in the main thread: the sub-agent's last words were its report
            _add(digest.reports, _cut(report), limit)
            report = ""
        if not prose or message.role == Role.TOOL:
            continue
        if message.role == Role.USER:
            request = _request(prose)
            if request:
                _add(digest.requests, request, limit)
        else:
            digest.outcome = prose
        for decision in _decisions(prose, message.role):
            _add(digest.decisions, decision, limit)
    if report:
        _add(digest.reports, _cut(report), limit)
    return digest


def _paths(paths: list[str]) -> list[str]:
    """Several paths relative to the directory they all share, when they share one."""
    folders = [p.rsplit("/", 1)[0] for p in paths if p.startswith("/") and "/" in p[1:]]
    if len(folders) < len(paths) or len(folders) < 2:
        return paths
    root = folders[0]
    for folder in folders[1:]:
        while root and not (folder == root or folder.startswith(root + "/")):
            root = root.rsplit("/", 1)[0]
    return [_shorten(p, root) for p in paths]


def render(digest: SessionDigest, heading: str, max_chars: int) -> str:
    """The digest as text, one section a line, cut to ``max_chars``."""
    lines = [heading]
    sections = (
        ("Asked", digest.requests),
        ("Decided", digest.decisions),
        ("Created", _paths(digest.created)),
        ("Edited", _paths(digest.edited)),
        ("Ran", digest.commands),
        ("Errors", digest.errors),
        ("Sub-agents reported", digest.reports),
    )
    for label, items in sections:
        if items:
            lines.append(f"{label}: " + "; ".join(items))
    if digest.outcome:
        lines.append("Outcome: " + _cut(digest.outcome, 400))
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
