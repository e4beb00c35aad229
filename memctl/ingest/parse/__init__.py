"""Transcript parsers, one module per client format, and the sniffing that picks one.

``read_transcript`` returns the messages as a lazy iterator: a file is read
as its messages are consumed, never whole. Malformed lines are counted in the
transcript's ``tally`` and skipped; they are never fatal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memctl.config.safe_load import TOO_DEEP, json_value
from memctl.errors import InputError, UsageError
from memctl.ingest.parse import (
    claude,
    codex,
    copilot,
    cursor,
    gemini,
    generic,
    opencode,
    specstory,
)
from memctl.ingest.parse.common import REPORT_CUT, SUBAGENT, Parsed, Tally, one_line
from memctl.ingest.source import SNIFF_BYTES, Input, json_members
from memctl.memories.injected import all_injected
from memctl.model import TRANSCRIPT_CLIENTS, Role

CLIENTS = TRANSCRIPT_CLIENTS
SNIFF_LINES = 20
PATH_WIDTH = 60  # a path named in an error, cut as long quoted references are

# A record of an unexpected shape (a list where a string belongs, a number where an
# object does) or nested deep enough to parse but too deep to walk: malformed, counted.
SHAPE_ERRORS = (TypeError, AttributeError, KeyError, ValueError, RecursionError)

RecordParser = Callable[[Any, Tally], list[Parsed]]
MemberParser = Callable[[str | None, Any, Tally], list[Parsed]]


@dataclass
class Transcript:
    client: str
    shape: str  # jsonl, json or text
    messages: Iterator[Parsed]
    tally: Tally
    guessed: bool = False  # its client was guessed from its content, not given


def shape_of(source: Input) -> str:
    """``json`` (one document), ``jsonl`` (a record a line) or ``text``."""
    text = source.head_text.lstrip()
    if text[:1] == "[":
        return "json"
    if text[:1] != "{":
        return "text"
    first, newline, rest = text.partition("\n")
    if not newline and len(source.head) >= SNIFF_BYTES:
        return "jsonl"  # a first line longer than the sniffed head
    try:
        value = json_value(first)
    except ValueError:
        # a pretty-printed document (its first line is not JSON alone), or JSONL whose
        # first line is broken: then the lines after it are JSON objects
        return "jsonl" if _objects_follow(rest) else "json"
    return (
        "json" if isinstance(value, dict) and isinstance(value.get("messages"), list) else "jsonl"
    )


def _objects_follow(text: str) -> bool:
    """Most of the first lines of ``text`` are whole JSON objects (JSONL, not the inside
    of a pretty-printed document, where an element line ends with a comma)."""
    lines = [line for line in text.splitlines()[:SNIFF_LINES] if line.strip()]
    return bool(lines) and 2 * sum(map(_is_object, lines)) > len(lines)


def _is_object(line: str) -> bool:
    try:
        return isinstance(json_value(line), dict)
    except ValueError:
        return False


def guess_client(source: Input, shape: str) -> str:
    """The client whose format the sniffed head shows; generic when none is clear."""
    if shape == "json":
        head = source.head_text
        if '"parts"' in head and '"info"' in head:
            return "opencode"
        # a hook's dump of a Claude Code transcript as one array (logs/chat.json)
        return "claude-code" if '"parentUuid"' in head and '"sessionId"' in head else "generic"
    if shape == "jsonl":
        for line in source.head_text.splitlines()[:SNIFF_LINES]:
            try:
                record = json_value(line)
            except ValueError:
                continue
            carried = record.get("transcript") if isinstance(record, dict) else None
            for one in carried[:SNIFF_LINES] if isinstance(carried, list) else [record]:
                try:
                    if isinstance(one, dict) and claude.looks_like(one):
                        return "claude-code"
                    if isinstance(one, dict) and codex.looks_like(one):
                        return "codex"
                    if isinstance(one, dict) and cursor.looks_like(one):
                        return "cursor"
                    if isinstance(one, dict) and gemini.looks_like(one):
                        return "gemini"
                    if isinstance(one, dict) and copilot.looks_like(one):
                        return "copilot"
                except SHAPE_ERRORS:
                    continue
    return "generic"


def hook_payload(record: dict[str, Any]) -> bool:
    """A hook's payload, one a line (a Stop hook's log): it carries its transcript's
    records in ``transcript``, or names the file in ``transcript_path``."""
    carried = record.get("transcript")
    return isinstance(carried, list | str) or (
        "transcript_path" in record and "hook_event_name" in record
    )


def _objects(source: Input, tally: Tally) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line's JSON object, with its number; a line that is not one is counted."""
    for number, line in enumerate(source.lines(), start=1):
        if not line.strip():
            continue
        try:
            record = json_value(line)
        except ValueError:
            tally.bad(f"line {number}: not JSON")
            continue
        if not isinstance(record, dict):
            tally.bad(f"line {number}: not a JSON object")
            continue
        yield number, record


def _jsonl(source: Input, tally: Tally, parse: RecordParser) -> Iterator[Parsed]:
    for number, record in _objects(source, tally):
        try:
            parsed = (
                array_member(None, record, tally) if hook_payload(record) else parse(record, tally)
            )
        except SHAPE_ERRORS as error:
            tally.bad(f"line {number}: {_shape(error)}")
            continue
        yield from parsed


def _copilot_log(source: Input, tally: Tally) -> Iterator[Parsed]:
    """A Copilot Chat session log, replayed whole (a later line may change any turn),
    then read as the session document it describes."""
    entries = []
    for number, line in enumerate(source.lines(), start=1):
        try:
            entry = json_value(line) if line.strip() else None
        except ValueError:
            tally.bad(f"line {number}: not JSON")
            continue
        if isinstance(entry, dict):
            entries.append((number, entry))
    for key, value in generic.replay(iter(entries), tally).items():
        yield from generic.member(key, value, tally)


def _shape(error: Exception) -> str:
    return TOO_DEEP if isinstance(error, RecursionError) else "not the expected shape"


def _document(source: Input, tally: Tally, parse: MemberParser) -> Iterator[Parsed]:
    found = 0
    try:
        for key, value in json_members(source.chunks(), "messages"):
            try:
                messages = parse(key, value, tally)
            except SHAPE_ERRORS as error:
                tally.bad(f"a member: {_shape(error)}")
                continue
            found += len(messages)
            yield from messages
    except ValueError as exc:
        if not found:
            raise InputError(f"{source.name} is not a valid JSON transcript: {exc}") from None
        tally.bad(f"the JSON document breaks off after {found} messages: {exc}")


def _record_parser(record: dict[str, Any]) -> RecordParser | None:
    """The parser of a known client's transcript record, None for a plain message."""
    if claude.looks_like(record):
        return claude.messages
    if codex.looks_like(record):
        return codex.messages
    return None


def array_member(key: str | None, value: Any, tally: Tally) -> list[Parsed]:
    """A member of a JSON document. An element of a top-level array may be a message, a
    record of a Claude Code or Codex transcript (a hook that dumps the transcript as one
    array: logs/chat.json), or a hook payload carrying the records in ``transcript``."""
    if key is not None or not isinstance(value, dict):
        return generic.member(key, value, tally)
    transcript = value.get("transcript")
    if isinstance(transcript, str):
        transcript = [json_value(line) for line in transcript.splitlines() if line.strip()]
    if isinstance(transcript, list):
        if isinstance(value.get("session_id"), str):
            tally.session_id = tally.session_id or value["session_id"]
        return [m for r in transcript if isinstance(r, dict) for m in array_member(None, r, tally)]
    if isinstance(value.get("transcript_path"), str) and "hook_event_name" in value:
        # a Stop hook's log of its payloads: they name the transcript, they do not hold it
        path = one_line(value["transcript_path"], PATH_WIDTH)
        tally.bad(f"a hook payload naming its transcript: ingest {path}")
        return []
    parser = _record_parser(value)
    return parser(value, tally) if parser else generic.member(key, value, tally)


def read_transcript(source: Input, client: str | None) -> Transcript:
    """The messages of ``source`` in ``client``'s format (guessed when None)."""
    if client is not None and client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}: expected one of {', '.join(CLIENTS)}")
    shape = shape_of(source)
    guessed = client is None
    client = client or guess_client(source, shape)
    tally = Tally()
    if client == "gemini":  # its files name no folder: the one beside them does
        tally.saw_cwd(gemini.project_root(source.name))
    messages: Iterator[Parsed]
    if shape == "text" and specstory.looks_like(source.head_text):
        # whatever client wrote the chat: SpecStory's Markdown is read alike
        speaker = specstory.speaker_pattern(source.head_text)
        messages = specstory.messages(source.lines(), source.name, tally, speaker)
    elif client == "opencode":
        messages = _document(source, tally, opencode.member)
    elif client == "gemini" and shape == "jsonl":  # its older sessions: one JSON document
        messages = gemini.messages((r for _, r in _objects(source, tally)), tally)
    elif shape == "json":  # any client's: a document, or an array of records or payloads
        messages = _document(source, tally, array_member)
    elif client == "claude-code":
        messages = _jsonl(source, tally, claude.parser(source.name))
    elif client == "codex":
        messages = _jsonl(source, tally, codex.messages)
    elif client == "cursor":
        messages = _jsonl(source, tally, cursor.parser(source.name, tally))
    elif client == "copilot":
        messages = _jsonl(source, tally, copilot.messages)
    elif shape == "jsonl" and generic.COPILOT_LOG.match(source.head_text):
        messages = _copilot_log(source, tally)
    elif shape == "jsonl":
        messages = _jsonl(source, tally, generic.jsonl_record)
    else:
        messages = generic.text_messages(source.lines(), tally)
    return Transcript(client, shape, _counting(messages, source, tally), tally, guessed)


def _counting(messages: Iterator[Parsed], source: Input, tally: Tally) -> Iterator[Parsed]:
    """The messages; one the transcript leaves undated takes the time of the message
    before it, else the time its file was last written (not the time it is read). A
    session its reader found no start time for (a Copilot Chat document dates its turns
    only) started at its first message's. A user turn that holds only what a client
    injected (Codex's AGENTS.md and environment, memctl's own blocks, Gemini CLI's
    session context: ``memories.injected``) is the client's, a system message, not the
    person's words. The tally counts the reports cut among them and, once they are read,
    the NUL bytes left out of them."""
    last_time = None
    for message in messages:
        tally.cut += message.content.count(REPORT_CUT)
        if message.role is Role.USER and all_injected(message.content.removeprefix(SUBAGENT)):
            message.role = Role.SYSTEM
        if message.created_at is None and (last_time or source.written_at):
            message.created_at = last_time or source.written_at
        tally.started_at = tally.started_at or message.created_at
        last_time = message.created_at
        yield message
    tally.nul_bytes = source.nul_bytes
