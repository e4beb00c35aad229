"""Privacy: what never reaches the database, its WAL, or a log.

Applied in this order to every message, on the fast path and again on the
slow path (it is idempotent):

1. ``<memctl-context>...</memctl-context>`` blocks, which memctl itself
   injected into the conversation, are removed: recalled memories are never
   ingested again.
2. ``<private>...</private>`` becomes ``[REDACTED]``; an unclosed tag hides
   the rest of the message.
3. A secret scanner replaces API keys, tokens, private keys and passwords in
   their common formats with ``[REDACTED:<kind>]`` and counts them by kind.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

REDACTED = "[REDACTED]"
CONTEXT_BLOCK = re.compile(r"<memctl-context\b[^>]*>.*?(?:</memctl-context\s*>|\Z)", re.S | re.I)
PRIVATE_BLOCK = re.compile(r"<private\s*>.*?(?:</private\s*>|\Z)", re.S | re.I)
# Values already redacted are not redacted (and counted) again.
_NOT_REDACTED = r"(?!\[REDACTED)"
# A secret's name: the match starts at the telling word (whatever prefixes it, as in
# AWS_SECRET_ACCESS_KEY, stays in the text), so the scan never backtracks over long words.
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|credentials?)[A-Za-z0-9_-]*"
)
_QUOTED_OR_BARE = (
    rf"(?:(?P<q>[\"'`]){_NOT_REDACTED}[^\"'`\n]{{3,200}}(?P=q)"
    rf"|{_NOT_REDACTED}(?![0-9]+\b)[^\s\"'`,;]{{4,}})"
)


@dataclass(frozen=True)
class SecretPattern:
    """A kind of secret: the pattern runs only on text holding one of its ``anchors``
    (lower-cased), which keeps scanning megabytes of ordinary text cheap. The groups
    ``keep`` (before), ``q`` (a quote, around) and ``tail`` (after) stay in the text, so
    `password = "x"` becomes `password = "[REDACTED:password]"`."""

    kind: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]


SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        ("private key",),
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    SecretPattern(
        "aws-access-key",
        ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa"),
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b"),
    ),
    SecretPattern(
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ),
    SecretPattern("gitlab-token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    SecretPattern("anthropic-key", ("sk-ant-",), re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    SecretPattern(
        "openai-key", ("sk-",), re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")
    ),
    SecretPattern("slack-token", ("xox",), re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    SecretPattern(
        "stripe-key", ("_live_", "_test_"), re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")
    ),
    SecretPattern("google-api-key", ("aiza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    SecretPattern(
        "jwt",
        ("eyj",),
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}"),
    ),
    SecretPattern(
        "connection-string",
        ("://",),
        re.compile(
            r"(?P<keep>\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@\"'<>]+:)"
            + _NOT_REDACTED
            + r"[^\s@/\"'<>]+(?P<tail>@)",
            re.I,
        ),
    ),
    SecretPattern(
        "bearer-token",
        ("bearer", "basic"),
        re.compile(
            r"(?P<keep>\b(?:bearer|basic)\s+)" + _NOT_REDACTED + r"[A-Za-z0-9._~+/=-]{16,}",
            re.I,
        ),
    ),
    SecretPattern(
        "password",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        re.compile(rf"(?P<keep>{_SECRET_NAME}[\"']?\s*(?:=|:|=>)\s*){_QUOTED_OR_BARE}", re.I),
    ),
    SecretPattern(
        "password",
        ("pass",),
        re.compile(
            r"(?P<keep>\b(?:password|passphrase|passwd)\s+(?:is|was)\s+)" + _QUOTED_OR_BARE, re.I
        ),
    ),
)


@dataclass
class Redactions:
    """What privacy removed: blocks, and secrets by kind."""

    context_blocks: int = 0
    private_blocks: int = 0
    secrets: Counter[str] = field(default_factory=Counter)

    def add(self, other: Redactions) -> None:
        self.context_blocks += other.context_blocks
        self.private_blocks += other.private_blocks
        self.secrets.update(other.secrets)

    @property
    def secret_count(self) -> int:
        return sum(self.secrets.values())

    def to_dict(self) -> dict[str, object]:
        return {
            "memctl_context_blocks": self.context_blocks,
            "private_blocks": self.private_blocks,
            "secrets": self.secret_count,
            "secrets_by_kind": dict(sorted(self.secrets.items())),
        }


def redact_secrets(text: str, found: Counter[str] | None = None) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``."""
    lowered = text.lower()
    for secret in SECRET_PATTERNS:
        if not any(anchor in lowered for anchor in secret.anchors):
            continue

        def replace(match: re.Match[str], kind: str = secret.kind) -> str:
            if found is not None:
                found[kind] += 1
            groups = {k: v or "" for k, v in match.groupdict().items()}
            quote = groups.get("q", "")
            return (
                f"{groups.get('keep', '')}{quote}[REDACTED:{kind}]{quote}{groups.get('tail', '')}"
            )

        text = secret.pattern.sub(replace, text)
    return text


def scrub(text: str) -> tuple[str, Redactions]:
    """The text as memctl may keep it, and what was taken out."""
    found = Redactions()
    text, found.context_blocks = CONTEXT_BLOCK.subn("", text)
    text, found.private_blocks = PRIVATE_BLOCK.subn(REDACTED, text)
    text = redact_secrets(text, found.secrets)
    return text, found


# Blocks a piece of a stream may open and a later piece close, as (opening, closing) tags.
_BLOCKS = (
    (re.compile(r"<memctl-context\b[^>]*>", re.I), re.compile(r"</memctl-context\s*>", re.I)),
    (re.compile(r"<private\s*>", re.I), re.compile(r"</private\s*>", re.I)),
    (
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ),
)
# A block still open after this many characters is redacted up to its close unseen.
HOLD_CHARS = 1 << 20


def open_block(text: str) -> re.Pattern[str] | None:
    """The closing tag of a block ``text`` opens last and leaves open, if any."""
    for opening, closing in _BLOCKS:
        opened = list(opening.finditer(text))
        if opened and not closing.search(text, opened[-1].end()):
            return closing
    return None


def scrub_stream(pieces: Iterable[str], found: Redactions) -> Iterator[str]:
    """Scrub a text that arrives in pieces (cut between lines), adding to ``found``.

    A ``<private>`` block, injected context or private key opened in one piece
    and closed in a later one is held until it closes, so it is removed whole;
    one still open after ``HOLD_CHARS`` is redacted to the end of what is held
    (as an unclosed tag is), and what follows is dropped until it closes.
    """
    held, hiding = "", None
    for piece in pieces:
        if hiding is not None:
            end = hiding.search(piece)
            if end is None:
                continue
            piece, hiding = piece[end.end() :], None
        text = held + piece
        closing = open_block(text)
        if closing is not None and len(text) < HOLD_CHARS:
            held = text
            continue
        held, hiding = "", closing
        clean, got = scrub(text)
        found.add(got)
        yield clean
    if held:
        clean, got = scrub(held)
        found.add(got)
        yield clean


def nothing_left(text: str) -> bool:
    """True when a scrubbed text holds nothing but redaction marks and blanks."""
    return not re.sub(r"\[REDACTED(?::[a-z-]+)?\]", "", text).strip()


def safe_line(text: str, width: int = 300) -> str:
    """One line fit for a log or an error message: secrets and private text removed."""
    cleaned, _ = scrub(text)
    flat = " ".join(cleaned.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
