"""Capture's privacy stage: the parsed messages scrubbed as one conversation (secrets
and ``<private>`` blocks), and each secret an earlier capture of the session hid where it
was repeated hidden again (``memories.followed``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from memctl.config.files import forget_key
from memctl.context import Context
from memctl.ingest.capture_report import CaptureReport
from memctl.ingest.parse import Transcript
from memctl.ingest.parse.common import Parsed
from memctl.memories.followed import Followed, digests
from memctl.memories.privacy import nothing_left
from memctl.memories.scrubber import MESSAGE_JOINS, Scrubber
from memctl.store.database import Database
from memctl.store.sessions import add_followed_digests, followed_digests


def scrubbed(
    transcript: Transcript, report: CaptureReport, scrubber: Scrubber[Parsed] | None = None
) -> Iterator[Parsed]:
    """The parsed messages with privacy applied by ``scrubber`` (``new_scrubber``'s by
    default), as one conversation (a secret or a ``<private>`` block may run on into the
    next message); messages left with nothing are dropped."""
    scrubber = scrubber or new_scrubber(transcript, report)
    for parsed in _read(transcript, report):
        yield from _kept(scrubber.push(parsed.content, parsed), report)
    yield from _kept(scrubber.close(), report)


def new_scrubber(transcript: Transcript, report: CaptureReport) -> Scrubber[Parsed]:
    """A scrubber of the transcript's messages, hiding where they repeat it each secret the
    parser's notes left out (``tally.taken``, filled as the parser reads), and a password of
    letters no word list knows (``swordfish``)."""
    return Scrubber(report.redactions, MESSAGE_JOINS, transcript.tally.taken, _known_word)


def _known_word(word: str) -> bool:
    # imported here: the word lists (~10 ms) load only when a password of letters is found
    from memctl.ingest.entities import known_word

    return known_word(word)


def _kept(scrubbed: Iterator[tuple[str, Parsed]], report: CaptureReport) -> Iterator[Parsed]:
    for text, parsed in scrubbed:
        if nothing_left(text):
            report.private_messages_dropped += 1
            continue
        yield Parsed(parsed.role, text.strip(), parsed.created_at, parsed.speaker)


def followed_before(db: Database, key: bytes | None, session_id: str) -> Followed | None:
    """The secrets earlier captures of the session hid where they were repeated
    (``memories.followed``), by keyed digest; None when there are none."""
    kinds = followed_digests(db, session_id) if key is not None else {}
    return Followed(key, kinds) if key is not None and kinds else None


def followed_hidden(ctx: Context, session_id: str | None, value: Any) -> Any:
    """``value`` (a text, or a model's JSON answer: every text in it) with each value the
    session's captures hid where it was repeated (a secret found by its label, a
    ``<private>`` block's values: ``memories.followed``) hidden: a host model had the
    conversation whole in its context, private blocks too, and may copy a value into a
    fact, a tag, a triple or a memory it stores."""
    from memctl.config.files import known_forget_key

    key = known_forget_key(ctx.settings.home) if session_id else None
    earlier = followed_before(ctx.db, key, session_id) if session_id else None
    if earlier is None:
        return value
    counts: Counter[str] = Counter()

    def hidden(each: Any) -> Any:
        if isinstance(each, str):
            return earlier.hide(each, counts)
        if isinstance(each, list | tuple):
            return type(each)(hidden(part) for part in each)
        if isinstance(each, dict):
            return {name: hidden(part) for name, part in each.items()}
        return each

    return hidden(value)


def hider(earlier: Followed | None, counts: Counter[str]) -> Callable[[str], str] | None:
    """What hides in a text each secret an earlier capture of the session hid (``earlier``),
    counted in ``counts``; None when there is none."""
    return None if earlier is None else partial(earlier.hide, counts=counts)


def hidden_title(
    title: str, scrubber: Scrubber[Parsed], earlier: Followed | None, counts: Counter[str]
) -> str:
    """A transcript's own title (the client's summary of the conversation, which may name
    a value the conversation hid: "Rotated SIGNING to ...") with each secret the messages'
    scrubber followed, and each an earlier capture hid, hidden too."""
    title = scrubber.hidden(title)
    return earlier.hide(title, counts) if earlier is not None else title


def keep_followed(ctx: Context, session_id: str, values: dict[str, str]) -> None:
    """Keep the digests of the secrets this capture hid where they were repeated, for the
    session's next capture (the home's ``forget.key`` made when there is none)."""
    if values:
        add_followed_digests(ctx.db, session_id, digests(forget_key(ctx.settings.home), values))


def _read(transcript: Transcript, report: CaptureReport) -> Iterator[Parsed]:
    for parsed in transcript.messages:
        report.messages_read += 1
        yield parsed
