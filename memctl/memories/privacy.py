"""Privacy: what never reaches the database, its WAL, an export, or a log.

Applied in this order to every message, document piece and memory, on every
way in (ingest's fast and slow paths, file import, ``remember``, ``update``,
memctl's JSONL and YAML import), and again on export (it is idempotent):

1. ``<memctl-context>...</memctl-context>`` blocks, which memctl itself
   injected into the conversation, are removed: recalled memories are never
   ingested again.
2. ``<private>...</private>`` becomes ``[REDACTED]``; an unclosed tag hides
   the rest of the text, and in a conversation or a document read in pieces
   every later part up to the closing tag (``memories.scrubber``).
3. A secret scanner replaces API keys, tokens, private keys, passwords and
   unlabelled high-entropy strings with ``[REDACTED:<kind>]`` and counts them
   by kind (``DETECTORS``; the provider formats follow detect-secrets' plugins,
   ported because that package takes ~150 ms to import and scans ~65 KB/s, far
   past the capture hook's budget). A secret cut in two, across two messages
   or two pieces of a file, is found on their seam.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from memctl.errors import NotFoundError
from memctl.lazy_re import lazy

REDACTED = "[REDACTED]"
# A tag quoted in backticks is prose about the tag ("mark it `<private>`"), not a block.
PROSE_TAG = "(?<!`)"
# memctl's context block as a client hands it back: as written, or HTML-escaped (Gemini CLI
# 0.61 escapes a hook's additionalContext before it puts it in the prompt it records)
_CONTEXT_OPEN = r"(?:<memctl-context\b[^>]*>|&lt;memctl-context&gt;)"
_CONTEXT_CLOSE = r"(?:</memctl-context\s*>|&lt;/memctl-context&gt;)"
CONTEXT_BLOCK = lazy(PROSE_TAG + _CONTEXT_OPEN + r".*?(?:" + _CONTEXT_CLOSE + r"|\Z)", re.S | re.I)
# A private block as written, or HTML-escaped as a client or an export hands it back
# (Cursor's and SpecStory's Markdown escape a tag, Gemini CLI a hook's context): the user
# marked it private either way.
_PRIVATE_OPEN = r"(?:<private\s*>|&lt;private\s*&gt;)"
_PRIVATE_CLOSE = r"(?:</private\s*>|&lt;/private\s*&gt;)"
PRIVATE_BLOCK = lazy(PROSE_TAG + _PRIVATE_OPEN + r".*?(?:" + _PRIVATE_CLOSE + r"|\Z)", re.S | re.I)
_PRIVATE_TAG = lazy(_PRIVATE_OPEN + "|" + _PRIVATE_CLOSE, re.I)
PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
PEM_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
MARK = lazy(r"\[REDACTED(?::[a-z0-9-]+)?\]")
# Values already redacted are not redacted (and counted) again.
_NOT_REDACTED = r"(?!\[REDACTED)"
# A URL's password as memctl shows it (``config.urls.shown_url``): masked already.
_NOT_MASKED = r"(?!\*\*\*@)"

# --- labelled secrets ------------------------------------------------------------------
# A label's telling word must stand whole in a name: `DB_PASSWORD`, `apiKey`, `auth-token`
# and `secrets` count; `tokenizer` and `passport` do not. Matching starts at the telling
# word (whatever prefixes it stays), so the scan never backtracks over long words.
_NAME_TAIL = r"(?:[sS]\b|[_-][A-Za-z0-9]+|[A-Z][a-z0-9]+)*"
# Where a telling word may start: not inside a word, but at a camel-case or CAPS boundary.
_NAME_START = r"(?:(?<![A-Za-z])|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z]{3}))"
# and the word in Chinese, Japanese and Korean, which a full-width colon follows
_PASSWORD_WORD = (
    _NAME_START
    + r"(?i:password|passwd|passphrase|pwd|passcode|pin|密码|密碼|口令|パスワード|비밀번호)"
)
_PASSWORD_ANCHORS = "pass pwd pin 密码 密碼 口令 パスワード 비밀번호"
_KEY_WORD = _NAME_START + (
    r"(?i:secret|token|api[ _-]?key|access[ _-]?key|auth[ _-]?key|private[ _-]?key|"
    r"client[ _-]?secret|credentials?|signing[ _-]?key|encryption[ _-]?key)"
)
# full-width `：` and `＝` are what a CJK keyboard types
_ASSIGN = r"[\"'\]]{0,2}[ \t]*(?:=|:=|:|=>|==|：|＝)[ \t]*@?"
_QUOTED = rf"(?P<q>[\"'`]){_NOT_REDACTED}(?P<v>[^\"'`\n]{{1,300}})(?P=q)"
_BARE = rf"{_NOT_REDACTED}(?P<b>[^\s\"'`]{{1,300}})"
_PROSE = r"[ \t]+(?:is|was|=|:|：)[ \t]+(?:now[ \t]+)?"
# what a password is for, said between the word and its value ("the password for the
# staging db is V"): up to three words, after a word for a password only (the lookbehind:
# password, passwd, pwd, passphrase, passcode), not `pin` ("the pin on the board is red")
_FOR_WHAT = r"(?:(?<=(?i:ord|swd|pwd|ase|ode))[ \t]+(?:for|of|on|to)(?:[ \t]+[\w.@/-]+){1,3}?)?"

# A value alone on the line after the one naming it: a YAML key with its value on the
# next line (``password:`` / ``  Birch3Cedar7Ash``), "my password is" and the value under
# it, a question answered with the value alone ("What is the staging db password?" and
# the reply; across two messages through the scrubber's seam). The value is the line's one
# word, not a key of its own (``password:`` / ``  from: vault`` holds a space,
# ``  nested:`` ends in a colon).
_ALONE = (
    rf"[ \t]*\r?\n[ \t]*(?:{_QUOTED}|{_NOT_REDACTED}(?P<b>[^\s\"'`]{{1,300}}(?<!:)))"
    r"[ \t]*(?=\r?\n|\Z)"
)
# the line naming it ends at its label: an assignment or "is" (the value as it comes)
_LABEL_ENDS = rf"{_NAME_TAIL}(?:{_ASSIGN}|{_FOR_WHAT}[ \t]+(?:is|was)(?:[ \t]+now)?)"
# or asks for it (a question, or a prompt's "for ...:" as ssh-keygen's "Enter passphrase
# for key ...:"): only a value that looks made is taken then ("Which token limit applies?"
# answered "4096" is a count)
_LABEL_ASKS = rf"{_NAME_TAIL}(?![A-Za-z])(?:[^\n?]{{0,60}}\?|{_FOR_WHAT}[ \t]*[:：])"
_ASKED_WORD = _NAME_START + r"(?i:password|passwd|passphrase|passcode)"
# What ends every line those detectors start on (``_ASSIGN``, "is", a question): they run
# only on such a line holding an anchor, with the line after it.
LABEL_LINE_ENDS = (":", "=", ">", "@", "?", "：", "＝", " is", " was", " now")

# Values a label is often followed by that are not secrets: types, references, prose.
NOT_VALUES = frozenset(
    """none null nil true false undefined str string bytes int optional required secret
    password token the a an is was not set empty missing correct wrong incorrect invalid
    expired stored saved changed reset hashed encrypted weak strong still too also being
    needed used same different here there ok fine and or of to for in on at by with
    from if then this that it be when via as see redacted yes no on off enabled disabled
    pwd passwd passphrase key keys tokens secrets api_key apikey value""".split()
)
# A passphrase of words after its label (``horse battery staple``): the lower-case words
# after a value to the line's end, none of them prose (``NOT_VALUES``), one or more after
# a value that is a word itself, two or more after any other (an env's made value keeps
# the command after it). So the rest an older memctl left beside a first word's mark is
# found again (two words or more), and a text scrubbed today is scrubbed the same a second
# time: a mark tells nothing of the value it hides.
_PHRASE_WORD = r"[a-z]{3,12}"
_WORD = lazy(_PHRASE_WORD)
_LINE_END = r"[ \t]*(?=\r?\n|\Z)"
_WORDS_TO_END = lazy(rf"(?:[ \t]+{_PHRASE_WORD}){{1,5}}{_LINE_END}")
_TWO_WORDS_TO_END = rf"{_PHRASE_WORD}(?:[ \t]+{_PHRASE_WORD}){{1,4}}{_LINE_END}"


def _no_prose(words: str) -> bool:
    return not any(word in NOT_VALUES for word in words.split())


# An attribute path's part is a name: letters, digits at its end, words joined by
# underscores (``settings.db_password``, ``self.token_v2``, ``hashlib.sha256``), where a
# made value mixes them (kubeadm's ``kubeadmtoken.q7w8e9r0t1y2u3i4``, s27-leak's miss)
_ATTRIBUTE = r"_*[a-z]+[0-9]*(?:_[a-z0-9_]*)?"
REFERENCE = lazy(
    r"^(?:\$\{?\w+\}?|%\(\w+\)s|\{\{.*\}\}|<[\w-]+>|[A-Za-z_][\w.]*[(\[].*|"
    + _ATTRIBUTE
    + r"(?:\."
    + _ATTRIBUTE
    + r")+)$"
)
IDENTIFIER = lazy(r"[A-Za-z][a-z_]*")
# A package script's name: lowercase words joined by colons, npm's convention
# (`format:check`, `test:unit`), named after a repository's name as a label
# (`cyspbot-app-token-action: \`format:check\``), never a token.
SCRIPT_NAME = lazy(r"[a-z]+(?::[a-z]+)+")
# Names a label may be followed by that hold no secret (s44-leads, met in a real Codex
# session): an OAuth URN of words (RFC 8693's ``token_type=urn:ietf:params:oauth:token-
# type:access_token``; a URN with a random part stays a secret) and a constant's or an
# environment variable's name in capitals (``secrets: GITHUB_APP_PRIVATE_KEY``: the name
# of a secret, not its value). A value of lowercase words (``subject_token:
# "oidc-token"``) stays hidden: a test's placeholder and a weak real secret
# (``secret: dev-secret``) look alike, and hiding a placeholder loses nothing.
URN = lazy(r"urn:[a-z0-9-]+(?::[A-Za-z0-9._-]+)+", re.I)
CONSTANT_NAME = lazy(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_NAME_WORD = lazy(r"[A-Z]?[a-z]+[0-9]{0,4}|[A-Z]+[0-9]{0,4}|[0-9]{1,4}")
FORMAT = lazy(r"%[sdr]|\{\w*\}")


# What ends a sentence or a bracket after a bare value ("the password is V."), not the value.
VALUE_END = ",;.:)]}"


def _any_value(value: str) -> bool:
    """A password: anything of 3 characters or more (4 digits or more) but a type name,
    a reference, prose or markup (``<strong>Reading tokens:</strong>``, a placeholder's
    ``<your-token>``)."""
    bare = value.rstrip(VALUE_END)
    return (
        len(bare) >= (4 if bare.isdigit() else 3)
        and bare[0] not in "[{(<"
        and bare.lower() not in NOT_VALUES
        and not _reference(bare)
        and not FORMAT.search(bare)
    )


# The words an option's name may hold before its telling word, joined by dashes or
# underscores: ``--admin_password``, ``--master-user-password``, ``--client-secret``,
# ``--user_pass`` (WP-CLI), ``--console-password`` (MinIO).
_OPTION_WORDS = r"(?:[A-Za-z0-9]+[-_]){0,3}"
# A value that names a file rather than holding the secret (``--private-key ~/.ssh/id``,
# ``--token-file``'s kin given to ``--token``: ``./token.txt``).
FILE_VALUE = lazy(
    r"^[\"']?(?:~|\.{0,2}/|[\w.-]+/)|\.(?:pem|key|json|txt|crt|p12|pfx|ya?ml|env|asc|gpg|pub)$"
)


def _option_value(value: str) -> bool:
    """A credential given by its option: any value (``_any_value``) but a file's name or
    the next option (``--two-pass --verbose``: that one takes no value)."""
    return (
        _any_value(value)
        and not value.startswith("-")
        and not FILE_VALUE.search(value.rstrip(VALUE_END))
    )


def _alone(check: Callable[[str], bool]) -> Callable[[str], bool]:
    """``check`` for a value alone on its line: a link or a file's path there is what the
    line above points to (a reset page's link under "Reset your password"), not the secret."""
    return lambda value: check(value) and "://" not in value and not FILE_VALUE.search(value)


def _answer(value: str) -> bool:
    """A value answering a question that names a password or a key: it looks made, and is
    not hex alone (a commit's short hash answers "what SHA-shaped tokens ...?")."""
    return _secretish(value) and not _HEX.fullmatch(value.rstrip(VALUE_END))


def _reference(value: str) -> bool:
    """A variable, attribute or template reference, not a value: mostly letters
    (``settings.db_password``, ``${DB_PASS}``), where ``_0000000123._4`` is a password."""
    letters = sum(c.isalpha() for c in value)
    return bool(REFERENCE.match(value)) and letters * 2 >= len(value.strip("${}()<>%"))


def _named(value: str) -> bool:
    """A name, not a value: a URN or a constant's name, each of words (``URN``,
    ``CONSTANT_NAME``)."""
    if not (URN.fullmatch(value) or CONSTANT_NAME.fullmatch(value)):
        return False
    return all(_NAME_WORD.fullmatch(word) for word in re.split(r"[-_.:]+", value) if word)


def _keyish(value: str) -> bool:
    """A token or key: at least 6 characters, not a count (``max_tokens: 4096``), a
    variable's name (``token = next_token``), a package script's (``format:check``) nor
    another name (``_named``)."""
    bare = value.rstrip(VALUE_END)
    return (
        len(bare) >= 6
        and not bare.isdigit()
        and not IDENTIFIER.fullmatch(bare)
        and not SCRIPT_NAME.fullmatch(bare)
        and not _named(bare)
        and _any_value(bare)
    )


def _secretish(value: str) -> bool:
    """A value named in prose ("the secret is ..."): it looks made, not written."""
    bare = value.rstrip(VALUE_END)
    return _keyish(bare) and (
        any(c.isdigit() for c in bare) or (bare != bare.lower() and bare != bare.upper())
    )


Cut = tuple[int, int]

# --- unlabelled high-entropy strings --------------------------------------------------
ENTROPY_MIN_CHARS = 20
# Random base64 of n characters has a Shannon entropy above 0.8 * log2(min(n, 64)) bits a
# character in 99% of draws (benchmarks/secret_scan.py measures it); written words stay below.
ENTROPY_RATIO = 0.8
# A part of a name made of words and short numbers: `Base64HighEntropy`, `x86`, `r1954052`.
# Atomic and possessive: the alternatives overlap, and backtracking through them took hours
# on a 60-digit hex part ending in one letter (a real transcript's line).
_WORDS = lazy(r"(?>[A-Z]?[a-z]{2,}|[A-Z]+(?![a-z])|[a-z]{0,2}[0-9]{1,4})++")
_PARTS = lazy(r"[-_./+=]+")
_HEX = lazy(r"[0-9a-f-]+|[0-9A-F-]+")
# The name Python's tempfile gives a file or a folder: `tmp` and 8 of [a-z0-9_].
_TEMP_NAME = lazy(r"(?<![A-Za-z0-9])tmp[a-z0-9_]{8}(?![A-Za-z0-9_])")
# OpenCode's ids of sessions, messages and parts: a prefix, 12 hex digits of time, 14 random
# characters (`ses_6a1f3c2b9ffeQ2mXlR7tZpWk4N`). They name things; they open nothing.
OPENCODE_ID = lazy(r"(?:ses|msg|prt)_[0-9a-f]{12}[A-Za-z0-9]{14}")


def shannon_entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _plain_part(part: str) -> bool:
    """A part of a name that is a word or a hex id (a hash in a path or a file name, left
    alone as whole hex tokens are)."""
    return bool(len(part) <= 4 or _WORDS.fullmatch(part) or _HEX.fullmatch(part))


def _wordy(token: str) -> bool:
    return all(_plain_part(part) for part in _PARTS.split(_TEMP_NAME.sub("", token)))


def high_entropy(token: str) -> bool:
    """A token that looks random: letters and digits mixed, no words, not a hash in hex.

    Hex strings (commit ids, digests, memctl's own ids) are left alone unless labelled.
    """
    core = token.rstrip("=")
    if len(core) < ENTROPY_MIN_CHARS or _HEX.fullmatch(core) or _wordy(core):
        return False
    if OPENCODE_ID.fullmatch(core):
        return False
    if not (any(c.isdigit() for c in core) and any(c.isalpha() for c in core)):
        return False
    return shannon_entropy(core) >= ENTROPY_RATIO * math.log2(min(len(core), 64))


# A piece of a folder's or file's name in a path: `srv`, `Users`, `v2`, `x86`, `64`. Lower
# case or capitalised only: a random part upper case alone is as likely as any.
_PATH_WORD = lazy(r"[A-Z]?[a-z]+[0-9]{0,4}|[0-9]{1,4}")
_NAME_PARTS = lazy(r"[-_.]+")  # not base64's `+` and `=`: they join no names
# A folder's name shorter than this is kept hidden: random base64 holds `/` one character
# in 64, so a short run of letters before one is as likely as a word.
PATH_WORD_MIN = 3


def _path_word(segment: str) -> bool:
    """A folder's or file's name of words (`srv`, `my-app`, `cfg.yaml`): kept in sight."""
    return len(segment) >= PATH_WORD_MIN and all(
        _PATH_WORD.fullmatch(part) for part in _NAME_PARTS.split(segment) if part
    )


def _random_part(token: str) -> Cut:
    """The span of ``token`` left once the folders and file names of words before and
    after it are taken off (`/srv/app/<random>/cfg`): base64 holds `/`, so the match ran
    over a whole path, and the path was hidden with the token. What is left is vetted
    again on its own (``find_secrets``): a short folder's name (mktemp's `tmp.SvCwX5Kyc1`)
    was hidden beside a long file's name and shown beside a short one."""
    segments = token.split("/")
    last = len(segments)
    first = 1 if segments[0] == "" and last > 1 else 0  # the root of an absolute path
    while first < last - 1 and _path_word(segments[first]):
        first += 1
    while last - 1 > first and _path_word(segments[last - 1]):
        last -= 1
    start = sum(len(s) + 1 for s in segments[:first])
    return start, start + len("/".join(segments[first:last]))


@dataclass(frozen=True)
class Detector:
    """A kind of secret. The pattern runs only on text holding one of its ``anchors``
    (lower-cased; none means always), which keeps scanning megabytes of ordinary text
    cheap. The group ``v`` (else the whole match) is what is replaced; the rest of the
    match (a label, quotes) stays. ``check`` vets the value."""

    kind: str
    anchors: tuple[str, ...]
    source: str
    flags: int = 0
    check: Callable[[str], bool] | None = None
    # a pattern that may span lines runs over the whole text, the others over the lines
    # holding an anchor
    multiline: bool = False
    # a match is dropped when this is found earlier on its line (within UNLESS_CHARS)
    unless_before: re.Pattern[str] | None = None
    # the part of a vetted value that is replaced (its span within the value)
    narrow: Callable[[str], Cut] | None = None
    # a match is kept only when this is found earlier on its line (its command)
    only_after: re.Pattern[str] | None = None
    # the value stands on the line after its anchor's: only a line holding an anchor and
    # ending as a label does is scanned, with the next one (``_label_lines``)
    next_line: bool = False
    # a value runs on over the words ending its line (``_phrase_end``)
    phrase: bool = False

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: a text wakes a few detectors, and a command that scans
        nothing (most commands import this module) compiles none."""
        return re.compile(self.source, self.flags)


def _d(
    kind: str,
    anchors: str,
    pattern: str,
    check: Callable[[str], bool] | None = None,
    flags: int = 0,
    multiline: bool = False,
    unless_before: re.Pattern[str] | None = None,
    narrow: Callable[[str], Cut] | None = None,
    only_after: re.Pattern[str] | None = None,
    next_line: bool = False,
    phrase: bool = False,
) -> Detector:
    return Detector(
        kind,
        tuple(anchors.split()),
        pattern,
        flags,
        check,
        multiline or bool(flags & re.S),
        unless_before,
        narrow,
        only_after,
        next_line,
        phrase,
    )


# --- a password given on a command line ----------------------------------------------------
# Programs whose password option has a name of its own, from their manuals: curl's
# ``-u USER:PASSWORD``, a registry login's ``-p`` (docker, podman, buildah, skopeo, nerdctl,
# oras, helm, oc, az, Cloud Foundry's cf), redis-cli's ``-a``, OpenSSL's ``pass:PASSWORD``,
# zip's ``-P`` and 7-Zip's ``-pPASSWORD``, keytool's ``-storepass`` / ``-keypass``,
# ssh-keygen's ``-N`` / ``-P``, Samba's ``-U USER%PASSWORD``, the OpenLDAP tools' ``-w``,
# the MongoDB tools' ``-p``, sqlcmd's and bcp's ``-P``, ``htpasswd -b FILE USER PASSWORD``,
# and a value piped into a ``--password-stdin``. Nothing labels the value as a password.
_VALUE = rf"(?:{_QUOTED}|{_BARE})"
# what may follow a password given by its place on a Windows command line: a switch, the
# line's end, the end of a quote or of a tool's note
_SWITCH_OR_END = r"(?=[ \t]*(?:[\r\n]|$|/|[\"'\]]))"
# the last word of a command: its line, a quote, a pipe, a tool's note or a bracket ends
_LAST_WORD = r"(?=[ \t]*(?:[\r\n]|$|[\"'\\|;&()\]]))"
# Commands that read a password from their standard input: a registry login's
# ``--password-stdin``, ``sudo -S``, ``passwd --stdin`` (Red Hat's) and ``chpasswd``
# (``USER:PASSWORD`` lines).
_READS_A_PASSWORD = (
    r"(?:--password-stdin\b|\bsudo\b[^\n|;&]*?[ \t]-S\b|\bpasswd\b[^\n|;&]*?--stdin\b|\bchpasswd\b)"
)
_PASSWORD_OPTIONS = (
    _d(
        "password",
        "curl",
        r"\bcurl\b[^\n]*?[ \t](?:-u|--user|--proxy-user)[ \t]*[\"']?[^\s:\"'$]+:"
        rf"{_NOT_REDACTED}(?P<v>[^\s\"']{{1,300}})",
        _any_value,
    ),
    _d(
        "password",
        "login",
        r"\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm|oc|az|cf)\b[^\n]*?\blogin\b(?!-)[^\n]*?"
        rf"[ \t]-p[ \t]*{_VALUE}",
        _any_value,
    ),
    _d("password", "redis-cli", rf"\bredis-cli\b[^\n]*?[ \t]-a[ \t]+{_VALUE}", _any_value),
    _d("password", "pass", rf"[ \t]-pass(?:in|out)?[ \t]+pass:{_VALUE}", _any_value),
    _d("password", "zip", rf"\b(?:un)?zip\b[^\n]*?[ \t]-P[ \t]*{_VALUE}", _any_value),
    _d("password", "7z", rf"\b7z[az]?\b[^\n]*?[ \t]-p{_VALUE}", _any_value),
    _d(
        "password",
        "pass",
        rf"[ \t]-(?:src|dest)?(?:store|key)pass[ \t]+{_VALUE}",
        _any_value,
    ),
    _d("password", "ssh-keygen", rf"\bssh-keygen\b[^\n]*?[ \t]-[NP][ \t]*{_VALUE}", _any_value),
    _d(
        "password",
        "smb rpcclient cifs",
        r"\b(?:smbclient|rpcclient|smbmap|smbcacls|mount\.cifs)\b[^\n]*?[ \t](?:-U|--user=?)"
        rf"[ \t]*[\"']?[^\s%\"']+%{_NOT_REDACTED}(?P<v>[^\s\"']{{1,300}})",
        _any_value,
    ),
    _d("password", "ldap", rf"\bldap\w*\b[^\n]*?[ \t]-w[ \t]*{_VALUE}", _any_value),
    _d("password", "mongo", rf"\bmongo\w*\b[^\n]*?[ \t]-p[ \t]+{_VALUE}", _any_value),
    _d("password", "sqlcmd bcp", rf"\b(?:sqlcmd|bcp)\b[^\n]*?[ \t]-P[ \t]*{_VALUE}", _any_value),
    _d(
        "password",
        "pass",
        r"\bhtpasswd\b(?:[ \t]+-[a-zA-Z]+)*[ \t]+-[a-zA-Z]*b[a-zA-Z]*(?:[ \t]+-[a-zA-Z]+)*"
        rf"[ \t]+\S+[ \t]+\S+[ \t]+{_VALUE}",
        _any_value,
    ),
    _d(
        "password",
        "pass sudo",
        rf"\b(?:echo|printf)[ \t]+(?:-n[ \t]+)?{_VALUE}[ \t]*\|[^\n]*{_READS_A_PASSWORD}",
        _any_value,
    ),
    # the same value given as a here-string (``sudo -S <<< V``, ``gh auth login --with-token
    # <<< V``) to those, or to a password manager's or key agent's prompt
    _d(
        "password",
        "<<<",
        rf"(?:{_READS_A_PASSWORD}|--with-token|\bop[ \t]+signin|\bkeepassxc-cli|\bssh-add|"
        r"\b(?:smb|vnc)passwd|\bkinit|\belasticsearch-reset-password)"
        rf"[^\n|;&]*?<<<[ \t]*{_VALUE}",
        _any_value,
    ),
    _d("password", "openssl", rf"\bopenssl\b[^\n]*?[ \t]-k[ \t]+{_VALUE}", _any_value),
    _d("password", "mosquitto", rf"\bmosquitto_\w+\b[^\n]*?[ \t]-P[ \t]+{_VALUE}", _any_value),
    _d(
        "password",
        "cqlsh influx",
        rf"\b(?:cqlsh|influx)\b[^\n]*?[ \t]-p[ \t]+{_VALUE}",
        _any_value,
    ),
    _d("password", "/p:", rf"\b\w*freerdp\b[^\n]*?[ \t]/p:{_VALUE}", _any_value),
    _d(
        "password",
        "lftp",
        rf"\blftp\b[^\n]*?[ \t]-u[ \t]+[\"']?[^\s,\"']+,{_NOT_REDACTED}(?P<v>[^\s\"']{{1,300}})",
        _any_value,
    ),
    _d(
        "password",
        "add_user change_password",
        rf"\brabbitmqctl\b[^\n]*?[ \t](?:add_user|change_password)[ \t]+\S+[ \t]+{_VALUE}",
        _any_value,
    ),
    _d(
        "password",
        "pass",
        r"\bhtpasswd\b(?:[ \t]+-[a-zA-Z]+)*[ \t]+-[a-zA-Z]*n[a-zA-Z]*b[a-zA-Z]*"
        rf"(?:[ \t]+-[a-zA-Z]+)*[ \t]+\S+[ \t]+{_VALUE}",
        _any_value,
    ),
    _d(
        "password",
        "initial-password",
        rf"\bset-initial-password[ \t]+{_VALUE}",
        _any_value,
    ),
    # a password hashed for a system's users (``openssl passwd -6 V``, ``mkpasswd -m
    # sha-512 V``): the value is the account's password
    _d(
        "password",
        "passwd",
        r"\b(?:openssl[ \t]+passwd|mkpasswd)\b(?>(?:[ \t]+-(?:salt|[mSR])[ \t]+\S+|[ \t]+-\S+)*)"
        rf"[ \t]+{_VALUE}",
        _any_value,
    ),
    _d("password", "unlock", rf"\bbw[ \t]+unlock[ \t]+(?!-){_VALUE}", _any_value),
    _d(
        "secret",
        "vault authtoken",
        r"\b(?:vault[ \t]+login|ngrok[ \t]+(?:config[ \t]+add-)?authtoken)"
        rf"[ \t]+(?!-){_VALUE}",
        _keyish,
    ),
    # Windows' ``net use [D:] \\SERVER\SHARE PASSWORD [/user:U]`` (the password may follow
    # the switches) and ``net user NAME PASSWORD [/add]``; ``*`` prompts for it
    _d(
        "password",
        "net",
        r"\b(?i:net[ \t]+use)\b[^\n]*?[ \t]\\\\\S+(?:[ \t]+/\S+)*[ \t]+(?![/*]|\\\\)"
        rf"{_VALUE}{_SWITCH_OR_END}",
        _any_value,
    ),
    _d(
        "password",
        "net",
        r"(?<![A-Za-z] )\b(?i:net[ \t]+user)[ \t]+(?![/*])\S+[ \t]+(?![/*])"
        rf"{_VALUE}{_SWITCH_OR_END}",
        _any_value,
    ),
    # the password of a login tried or run remotely by its option (their manuals): THC
    # Hydra's and Medusa's ``-p`` (``-P`` names a file of them), NetExec's (CrackMapExec's)
    # and Evil-WinRM's ``-p``, rabbitmqadmin's ``-p``, ipmitool's ``-P``
    _d(
        "password",
        "hydra medusa crackmapexec nxc netexec evil-winrm rabbitmqadmin",
        r"\b(?:hydra|medusa|crackmapexec|cme|nxc|netexec|evil-winrm|rabbitmqadmin)\b[^\n]*?"
        rf"[ \t]-p[ \t]+{_VALUE}",
        _option_value,
    ),
    _d("password", "ipmitool", rf"\bipmitool\b[^\n]*?[ \t]-P[ \t]+{_VALUE}", _any_value),
    # Redis's ``AUTH [USERNAME] PASSWORD``, the command's last word: given to redis-cli (in
    # any case), or in capitals typed at its prompt (``> AUTH V``) or sent in quotes
    # (``echo 'AUTH V' | nc``); a line that only begins with it may be prose
    _d(
        "password",
        "auth",
        rf"\bredis-cli\b[^\n]*?[ \t](?i:auth)[ \t]+(?:[\w.@-]+[ \t]+)?{_VALUE}{_LAST_WORD}",
        _any_value,
    ),
    _d(
        "password",
        "auth",
        rf"(?:>[ \t]*|[\"'])AUTH[ \t]+(?:[\w.@-]+[ \t]+)?{_VALUE}{_LAST_WORD}",
        _any_value,
    ),
    # a password option glued to what it is for (WP-CLI's ``--dbpass``, ``--dbpassword``)
    _d(
        "password",
        "pass",
        r"(?<![\w-])--(?:db|sql|admin|root|smtp|ftp|http|proxy|bind|mail|ldap|sa)"
        rf"(?:pass|passwd|password)(?:=|[ \t]+){_VALUE}",
        _option_value,
    ),
    # ``mysqladmin ... password NEW``; Windows' ``/pass:`` (cmdkey) and ``/password:``
    _d("password", "mysqladmin", rf"\bmysqladmin\b[^\n]*?[ \t]password[ \t]+{_VALUE}", _any_value),
    _d("password", "/pass", rf"[ \t]/pass(?:word)?:{_VALUE}", _any_value, re.I),
    # Impacket's targets ``[DOMAIN/]USER:PASSWORD@HOST`` (its scripts: ``psexec.py``, ...);
    # SQL*Plus's ``USER/PASSWORD[@DB]``
    _d(
        "password",
        "impacket exec.py secretsdump mssqlclient getuserspns getnpusers",
        r"\b(?:impacket-\w+|(?:\w*exec|secretsdump|mssqlclient|GetUserSPNs|GetNPUsers)\.py)\b"
        r"[^\n]*?[ \t][\"']?(?:[\w.-]+/)?[\w.$-]+:"
        rf"{_NOT_REDACTED}(?P<v>[^\s@\"']{{1,300}})@",
        _any_value,
    ),
    _d(
        "password",
        "sqlplus",
        r"\bsqlplus\b[^\n]*?[ \t][\"']?[\w$#]+/"
        rf"{_NOT_REDACTED}(?P<v>[^\s@/\"']{{1,300}})(?=@|[\s\"']|$)",
        _any_value,
    ),
    # Metasploit's options holding a password (``set PASSWORD V``, ``setg SMBPass V``)
    _d(
        "password",
        "pass",
        r"\bsetg?[ \t]+(?:PASSWORD|PASS|SMBPass|HttpPassword|FTPPASS|DBPASS)"
        rf"[ \t]+{_VALUE}",
        _any_value,
    ),
)


# --- keys given to a program by their place, and cookies -----------------------------------
# rclone's ``config create NAME TYPE KEY VALUE ...`` (and ``update``, ``password``) takes a
# remote's settings as pairs, ``KEY VALUE`` or ``KEY=VALUE``; the names are its backends'
# sensitive options (rclone.org/docs, each backend's "Standard options": ``pass``, ``key``,
# ``secret_access_key``, ``client_secret``, ``token``...), and ``rclone obscure`` takes the
# password itself. MinIO's ``mc alias set`` (``mc config host add`` before it) takes an
# alias, a URL, the access key and the secret key, in that order (min.io/docs, "mc alias
# set"). No label says what those values are.
_RCLONE_KEYS = (
    r"pass(?:word2?)?|key|key_pem|key_file_pass|secret_access_key|session_token|client_secret|"
    r"token|bearer_token|sas_url|api_key|app_key|service_account_credentials"
)
RCLONE_CONFIG = lazy(r"\brclone\b[^\n]*?\bconfig[ \t]+(?:create|update|password)\b")
# A Cookie header's value (RFC 6265: ``name=value`` pairs separated by ``; ``) is a session's
# credential; so is curl's ``-b`` / ``--cookie`` of pairs (of one word without ``=``: a file).
COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "secure", "httponly", "samesite", "partitioned"}
)


_COOKIE_PAIRS = r"[^\s;=\"'`]+=[^\s;\"'`]*(?:;[ \t]*[^\s;\"'`]+)*"


def _cookies(value: str) -> bool:
    """Pairs (``_COOKIE_PAIRS``; of curl's option, checked here), one a value."""
    parts = [p.strip() for p in value.strip().rstrip(";").split(";")]
    pairs = [p.partition("=") for p in parts]
    return all(p and not any(c.isspace() for c in p) for p in parts) and any(
        eq and name.lower() not in COOKIE_ATTRIBUTES and _any_value(v) for name, eq, v in pairs
    )


_PLACED_KEYS = (
    _d(
        "secret",
        "rclone",
        rf"(?<![\w-])(?:{_RCLONE_KEYS})(?:=|[ \t]+){_VALUE}",
        _any_value,
        only_after=RCLONE_CONFIG,
    ),
    _d("password", "obscure", rf"\brclone\b[^\n]*?[ \t]obscure[ \t]+{_VALUE}", _any_value),
    # ``npm config set //registry/:_authToken VALUE`` (npm's docs, "npmrc": a legacy token
    # is a UUID, no shape), ``aws configure set aws_secret_access_key VALUE``; twine's ``-p``
    _d(
        "secret",
        "config set configure set",
        r"\b(?:npm|yarn|pnpm|aws)\b[^\n]*?\bconfig(?:ure)?[ \t]+set[ \t]+\S*"
        rf"(?:_authToken|_auth|_password|secret_access_key|session_token)[ \t]+{_VALUE}",
        _any_value,
    ),
    _d("password", "twine", rf"\btwine\b[^\n]*?[ \t]-p[ \t]*{_VALUE}", _any_value),
    _d(
        "secret",
        "alias host user add",
        r"\bmc\b[^\n]*?[ \t](?:(?:alias[ \t]+set|config[ \t]+host[ \t]+add)(?:[ \t]+\S+){3}|"
        r"admin[ \t]+user[ \t]+add(?:[ \t]+\S+){2})[ \t]+" + _VALUE,
        _any_value,
    ),
    _d(
        "cookie",
        "cookie",
        rf"\b(?:set-)?cookie[\"']?[ \t]*:[ \t]*{_NOT_REDACTED}(?P<v>{_COOKIE_PAIRS})",
        _cookies,
        re.I,
    ),
    _d(
        "cookie",
        "curl",
        rf"\bcurl\b[^\n]*?[ \t](?:-b|--cookie)(?:=|[ \t]+){_VALUE}",
        _cookies,
    ),
)


# --- credential files by their format ----------------------------------------------------
# A `.env` line: an upper-case name whose last word (or any word, for SECRET / PASSWORD)
# tells a secret, `=`, a value: `SMTP_PASS=`, `SESSION_SALT=`, `DJANGO_SECRET_KEY=`,
# `GITHUB_PAT=` (a personal access token).
_ENV_TELLS = (
    r"PASS|PASSWORD|PASSWD|PWD|PASSPHRASE|SECRET|TOKEN|KEY|APIKEY|SALT|PEPPER|CREDENTIALS?|PAT|"
    r"REDISCLI_AUTH"
)
_ENV_NAME = (
    rf"(?<![\w$.-])(?:export[ \t]+)?(?:[A-Z][A-Z0-9]*_)*(?:{_ENV_TELLS})"
    r"(?:_(?:SECRET|PASSWORD|KEY|BASE|TOKEN|VALUE|HASH|B64|BASE64))*"
)
# `.pgpass`: host:port:database:user:password on one line (the host has a letter, a dot or *).
_PGPASS = (
    r"(?<![\w:./-])(?!\d{4}-\d\d-\d\dT)(?=[\w.*-]*[A-Za-z.*])[\w.*-]+:(?:\d{1,5}|\*):"
    r"[\w.*$-]+:[\w.*@$-]+:(?P<v>[^\s:\"'`]+)(?=[\s\"'`]|\Z)"
)
# `.netrc`: `machine HOST [login USER] [account A] password PASSWORD`, over lines or on one.
_NETRC = (
    r"\b(?:machine[ \t]+\S+|default|login[ \t]+\S+)(?:\s+(?:login|account|port)[ \t]+\S+)*"
    rf"\s+password[ \t]+{_NOT_REDACTED}(?P<v>\S+)"
)
# A bare 32-64 character hex secret (a Twilio auth token) right after a credential's name.
_HEX_SECRET = (
    r"(?i:\b(?:auth|token|secret|password|passwd|credentials?|api[ _-]?key|access[ _-]?key|"
    r"secret[ _-]?key|signing[ _-]?key))\b[^\n]{0,40}?(?<![\w-])"
    rf"{_NOT_REDACTED}(?P<v>[0-9a-f]{{32,64}}|[0-9A-F]{{32,64}})\b"
)


# A bare 64-digit hex string is a 256-bit key (a webhook's signing key, an HMAC key, a
# seed) unless its line names it a digest: a SHA-256 in prose, `sha256sum`'s output
# (hex, two blanks, a name), a Docker digest or a path part is left alone.
_HEX_KEY = (
    r"(?<![\w:@=/.+#-])(?=[0-9a-fA-F]{64}(?![\w-]))(?P<v>[0-9a-f]{64}|[0-9A-F]{64})"
    r"(?![ \t]{2}[*\w./])"
)
DIGEST_WORDS = lazy(
    r"(?i:sha-?(?:2|256|3)|digest|hash|checksum|\bsum\b|commit|\bblob|\bobject|\boid\b|"
    r"etag|integrity|fingerprint|\bimage\b|\blayer|\brev(?:ision)?\b|\bid\b|\bids\b)"
)
# How far back on its line a detector's ``unless_before`` looks.
UNLESS_CHARS = 64


DETECTORS: tuple[Detector, ...] = (
    _d("private-key", "private", rf"{PEM_BEGIN}.*?(?:{PEM_END}|\Z)", flags=re.S),
    _d(
        "private-key",
        "putty-user-key-file",
        r"PuTTY-User-Key-File-\d: .*?(?:Private-MAC: \S+|\Z)",
        flags=re.S,
    ),
    _d(
        "aws-access-key",
        "akia asia abia acca agpa aida aroa anpa a3t",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b",
    ),
    _d(
        "github-token",
        "ghp_ gho_ ghu_ ghs_ ghr_ github_pat_",
        r"\b(?:gh[pousr]_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    _d(
        "gitlab-token",
        "glpat- gldt- glft- glsoat- glrt- glcbt- glimt- glptt- glagent- gloas- gr1348941",
        r"\b(?:(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-|GR1348941)"
        r"[A-Za-z0-9_-]{20,}",
    ),
    _d("anthropic-key", "sk-ant-", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _d("openai-key", "sk-", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    _d(
        "slack-webhook",
        "hooks.slack.com",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+",
        flags=re.I,
    ),
    _d("slack-token", "xox xapp-", r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}"),
    _d("stripe-key", "_live_ _test_ whsec_", r"\b(?:[rsp]k_(?:live|test)_|whsec_)[A-Za-z0-9]{16,}"),
    _d("google-api-key", "aiza", r"\bAIza[0-9A-Za-z_-]{35}"),
    _d(
        "jwt",
        "eyj",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}",
    ),
    _d("sendgrid-key", "sg.", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    _d("npm-token", "npm_", r"\bnpm_[A-Za-z0-9]{36}"),
    _d("pypi-token", "pypi-", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    _d("twilio-key", "", r"\b(?:AC|SK)[0-9a-f]{32}\b"),
    _d("huggingface-token", "hf_", r"\bhf_[A-Za-z0-9]{30,}"),
    # Issue 34's shapes, each in its maker's documented format:
    # DigitalOcean: personal (dop_v1_), OAuth (doo_v1_) and refresh (dor_v1_) tokens,
    # 64 hex digits ("Token prefixes", docs.digitalocean.com/reference/api/).
    _d("digitalocean-token", "_v1_", r"\bdo[por]_v1_[0-9a-f]{64}\b"),
    # HashiCorp Vault 1.10+: service (hvs.), batch (hvb.) and recovery (hvr.) tokens
    # ("Token prefixes", developer.hashicorp.com/vault/docs/concepts/tokens).
    _d("vault-token", "hvs. hvb. hvr.", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"),
    # Mailgun's private API key: `key-` and 32 lower-case letters and digits (Mailgun API
    # reference, "Authentication").
    _d("mailgun-key", "key-", r"(?<![\w-])key-(?=[a-z]*[0-9])[0-9a-z]{32}\b"),
    # Shopify: admin API (shpat_), shared secret (shpss_), custom app (shpca_) and private
    # app (shppa_) tokens, 32 hex digits (shopify.dev, "Access tokens"; GitHub's secret
    # scanning patterns).
    _d("shopify-token", "shp", r"\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}\b"),
    # age: `AGE-SECRET-KEY-1` and 58 characters of Bech32 (age-encryption.org/v1, "X25519
    # recipient type").
    _d(
        "age-secret-key",
        "age-secret-key-1",
        r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        flags=re.I,
    ),
    # Twenty more, in the formats gitleaks' rules (config/gitleaks.toml) take from each
    # maker's documentation: Databricks (dapi + 32 hex), Doppler (dp.pt. and the other
    # kinds), Linear (lin_api_), Postman (PMAK-), Atlassian (ATATT3, ATBB), Grafana (glsa_,
    # glc_), Pulumi (pul-), Terraform Cloud (.atlasv1.), Sentry (sntryu_, sntrys_), New
    # Relic (NRAK-), Notion (ntn_), Docker Hub (dckr_pat_), Tailscale (tskey-), Supabase
    # (sbp_), PlanetScale (pscale_), Figma (figd_), Square (sq0csp-, sq0atp-, EAAA),
    # Discord bots, Microsoft Entra client secrets (Q~) and Mailchimp (-usNN).
    _d("databricks-token", "dapi", r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
    _d("doppler-token", "dp.", r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}"),
    _d("linear-key", "lin_api_", r"\blin_api_[A-Za-z0-9]{40}"),
    _d("postman-key", "pmak-", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b"),
    _d("atlassian-token", "atatt3 atbb", r"\b(?:ATATT3[A-Za-z0-9_=-]{150,}|ATBB[A-Za-z0-9]{32})"),
    _d(
        "grafana-token",
        "glsa_ glc_",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
    ),
    _d("pulumi-token", "pul-", r"\bpul-[0-9a-f]{40}\b"),
    _d("terraform-token", ".atlasv1.", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}"),
    _d(
        "sentry-token",
        "sntry",
        r"\b(?:sntryu_[0-9a-f]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{30,})",
    ),
    _d("newrelic-key", "nrak-", r"\bNRAK-[A-Z0-9]{27}\b"),
    _d("notion-token", "ntn_", r"\bntn_[A-Za-z0-9]{40,}"),
    _d("docker-token", "dckr_pat_", r"\bdckr_pat_[A-Za-z0-9_-]{27,}"),
    _d("tailscale-key", "tskey-", r"\btskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]{20,}"),
    _d("supabase-token", "sbp_", r"\bsbp_[0-9a-f]{40}\b"),
    _d("planetscale-token", "pscale_", r"\bpscale_(?:pw|tkn|oauth)_[A-Za-z0-9_.-]{32,}"),
    _d("figma-token", "figd_", r"\bfigd_[A-Za-z0-9_-]{40,}"),
    _d(
        "square-token",
        "sq0 eaaa",
        r"\b(?:sq0csp-[A-Za-z0-9_-]{43}|sq0atp-[A-Za-z0-9_-]{22}|EAAA[A-Za-z0-9_-]{60})",
    ),
    _d(
        "discord-token",
        "discord bot",
        # the first part is a user id's digits in base64 (`MT`, `Nz`, `OD`...)
        r"\b[MNO][TDjz][A-Za-z0-9_-]{22,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![\w-])",
        lambda value: any(c.isdigit() for c in value.rsplit(".", 1)[-1]),
    ),
    _d(
        "azure-client-secret",
        "q~",
        r"(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
    ),
    _d("mailchimp-key", "-us", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    _d("private-key", "b3blbnnzac1rzxktdje", r"b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]*"),
    _d(
        "private-key",
        "client-key-data",
        r"\bclient-key-data[\"']?[ \t]*:[ \t]*[\"']?(?P<v>[A-Za-z0-9+/=]{8,})",
    ),
    _d("auth-token", "auth token secret pass credential key", _HEX_SECRET),
    _d("hex-key", "", _HEX_KEY, unless_before=DIGEST_WORDS),
    _d("password", "password", _NETRC, _any_value, multiline=True),
    _d("password", ":", _PGPASS, _any_value),
    _d(
        "password",
        "sshpass",
        rf"\bsshpass\b[^\n]*?[ \t]-p[ \t]*(?:{_QUOTED}|{_BARE})",
    ),
    _d("telegram-token", "", r"\b\d{8,10}:[0-9A-Za-z_-]{35}\b"),
    _d("azure-storage-key", "accountkey=", r"AccountKey=(?P<v>[A-Za-z0-9+/=]{40,})", flags=re.I),
    _d(
        "connection-string",
        "://",
        rf"\b[a-z][a-z0-9+.-]{{1,20}}://[^\s:/@\"'<>]*:{_NOT_REDACTED}{_NOT_MASKED}"
        r"(?P<v>[^\s@/\"'<>]+)@",
        flags=re.I,
    ),
    _d(
        "bearer-token",
        "bearer authorization",
        r"(?:\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:basic|bearer|token|digest)?[ \t]*"
        rf"|\bbearer[ \t]+){_NOT_REDACTED}(?P<v>[A-Za-z0-9._~+/=-]{{8,}})",
        _secretish,
        re.I,
    ),
    _d(
        "password",
        "mysql mariadb",
        r"\b(?:mysql|mariadb)[\w-]*\b[^\n]*?[ \t](?:-p|--password=)"
        rf"(?:{_QUOTED}|{_BARE})",
    ),
    _d(
        "password",
        "-pass _pass -token _token -secret _secret -key _key apikey -auth _auth",
        rf"(?<![\w-])--{_OPTION_WORDS}(?:password|passwd|pass|passphrase|token|secret|"
        rf"api[-_]key|apikey|access[-_]key|secret[-_]key|auth[-_]token|"
        rf"(?:encryption|private|signing|master)[-_]key)(?:=|[ \t]+)"
        rf"(?:{_QUOTED}|{_BARE})",
        _option_value,
    ),
    # a single dash's (Go's flag package, InfluxDB 1's ``-password``): a word for a password
    _d(
        "password",
        "pass",
        rf"(?<![\w-])-{_OPTION_WORDS}(?:password|passwd|passphrase)(?:=|[ \t]+)"
        rf"(?:{_QUOTED}|{_BARE})",
        _option_value,
    ),
    *_PASSWORD_OPTIONS,
    *_PLACED_KEYS,
    _d(
        "password",
        _PASSWORD_ANCHORS,
        rf"{_PASSWORD_WORD}{_NAME_TAIL}{_ASSIGN}(?:{_QUOTED}|{_BARE})",
        _any_value,
        phrase=True,
    ),
    # the rest of such a passphrase a memctl older than this stored beside the first word's
    # mark (the rescrub finds it)
    _d(
        "password",
        _PASSWORD_ANCHORS,
        rf"{_PASSWORD_WORD}{_NAME_TAIL}{_ASSIGN}\[REDACTED:password\][ \t]+"
        rf"(?P<v>{_TWO_WORDS_TO_END})",
        _no_prose,
    ),
    _d(
        "password",
        _PASSWORD_ANCHORS,
        rf"{_PASSWORD_WORD}{_FOR_WHAT}{_PROSE}(?:{_QUOTED}|{_BARE})",
        _any_value,
    ),
    _d(
        "secret",
        "secret token key credential",
        rf"{_KEY_WORD}{_NAME_TAIL}{_ASSIGN}(?:{_QUOTED}|{_BARE})",
        _keyish,
    ),
    _d("secret", "secret token key credential", rf"{_KEY_WORD}{_PROSE}{_BARE}", _secretish),
    _d(
        "password",
        _PASSWORD_ANCHORS,
        _PASSWORD_WORD + _LABEL_ENDS + _ALONE,
        _alone(_any_value),
        next_line=True,
    ),
    _d("password", "pass", _ASKED_WORD + _LABEL_ASKS + _ALONE, _alone(_answer), next_line=True),
    _d(
        "secret",
        "secret token key credential",
        _KEY_WORD + _LABEL_ENDS + _ALONE,
        _alone(_keyish),
        next_line=True,
    ),
    _d(
        "secret",
        "secret token key credential",
        _KEY_WORD + _LABEL_ASKS + _ALONE,
        _alone(_answer),
        next_line=True,
    ),
    _d(
        "secret",
        "pass pwd secret token key salt pepper credential _pat= rediscli_auth",
        rf"{_ENV_NAME}[ \t]*=[ \t]*(?:{_QUOTED}|{_BARE})",
        _any_value,
    ),
    # fish's ``set -x NAME VALUE`` (``-gx``, ``-Ux``): the same name, no ``=``
    _d(
        "secret",
        "pass pwd secret token key salt pepper credential _pat= rediscli_auth",
        rf"\bset[ \t]+-[a-zA-Z]*x[a-zA-Z]*[ \t]+{_ENV_NAME}[ \t]+(?:{_QUOTED}|{_BARE})",
        _any_value,
    ),
    # a random 40-character base64 string is taken for an AWS secret key (see _kind)
    _d("high-entropy", "", r"[A-Za-z0-9+/_-]{20,}={0,2}", high_entropy, narrow=_random_part),
)


@dataclass(frozen=True)
class Hit:
    """A secret found: ``start``-``end`` is replaced, ``outer`` is the whole match."""

    start: int
    end: int
    kind: str
    outer: Cut


def _value_span(match: re.Match[str]) -> Cut:
    """The value's span: a bare one without what ends a sentence or a bracket after it
    ("the password is V, and ..." keeps its comma), as it is followed (``VALUE_END``);
    a quoted one whole, its quotes around it."""
    for name in ("v", "b"):
        if name in match.re.groupindex and match.group(name) is not None:
            start, end = match.span(name)
            if "q" in match.re.groupindex and match.group("q") is not None:
                return start, end
            return start, start + (len(_without_end(match.group(name))) or end - start)
    return match.span()


_OPENERS = {")": "(", "]": "[", "}": "{"}


def _without_end(value: str) -> str:
    """``value`` less what ends a sentence or a bracket after it (``VALUE_END``); a closing
    bracket the value opened stays its own (``[YOUR-PASSWORD]``, ``f(x)``)."""
    while value and value[-1] in VALUE_END:
        opener = _OPENERS.get(value[-1])
        if opener and value.count(opener) >= value.count(value[-1]):
            break
        value = value[:-1]
    return value


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# A text longer than this is searched only on the lines holding a detector's anchor.
WINDOW_FROM = 4096
AWS_SECRET = lazy(r"[A-Za-z0-9/+]{40}")


def _lines_with(lowered: str, anchors: tuple[str, ...]) -> list[Cut]:
    """The spans of the lines holding any of ``anchors``, in order, merged."""
    spans: list[Cut] = []
    for anchor in anchors:
        at = lowered.find(anchor)
        while at != -1:
            end = lowered.find("\n", at)
            end = len(lowered) if end == -1 else end
            spans.append((lowered.rfind("\n", 0, at) + 1, end))
            at = lowered.find(anchor, end)
    return _merged(spans)


def _label_lines(lowered: str, anchors: tuple[str, ...]) -> list[Cut]:
    """The spans of the lines holding any of ``anchors`` and ending as a label does
    (``LABEL_LINE_ENDS``), each with the line after it, in order, merged."""
    spans: list[Cut] = []
    for anchor in anchors:
        at = lowered.find(anchor)
        while at != -1:
            end = lowered.find("\n", at)
            if end == -1:
                break
            if lowered[at:end].rstrip().endswith(LABEL_LINE_ENDS):
                after = lowered.find("\n", end + 1)  # with it: a value ends before `\r\n`
                spans.append(
                    (lowered.rfind("\n", 0, at) + 1, len(lowered) if after == -1 else after + 1)
                )
            at = lowered.find(anchor, end)
    return _merged(spans)


def _merged(spans: list[Cut]) -> list[Cut]:
    """``spans`` in order, those that touch or overlap made one."""
    merged: list[Cut] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# The longest first; those of one length in their own order, not a set's (which differs
# between processes): the filter's digest reads this list (``memories.filter_digest``).
ANCHORS = sorted({a for d in DETECTORS for a in d.anchors}, key=lambda a: (-len(a), a))
# Every anchor at each place (a lookahead, so anchors may overlap); an anchor found stands
# for the shorter anchors it starts with, which the regex does not report at the same place.
_ANCHOR_AT = lazy("(?=(" + "|".join(map(re.escape, ANCHORS)) + "))")
_STARTS = {a: frozenset({a[:n] for n in range(1, len(a) + 1)} & set(ANCHORS)) for a in ANCHORS}
# Which detectors (by place in DETECTORS) an anchor wakes; which run on every text.
_BY_ANCHOR = {a: frozenset(i for i, d in enumerate(DETECTORS) if a in d.anchors) for a in ANCHORS}
_ALWAYS = frozenset(i for i, d in enumerate(DETECTORS) if not d.anchors)


def _anchors_in(lowered: str) -> frozenset[str]:
    if len(lowered) > WINDOW_FROM:  # one pass of str.find per anchor is faster on long texts
        return frozenset(a for a in ANCHORS if a in lowered)
    return frozenset().union(*(_STARTS[a] for a in set(_ANCHOR_AT.findall(lowered))))


def _kind(detector: Detector, value: str) -> str:
    if detector.kind == "high-entropy" and AWS_SECRET.fullmatch(value):
        return "aws-secret"
    return detector.kind


def _named_before(text: str, at: int, words: re.Pattern[str]) -> bool:
    """Whether ``words`` occur on ``at``'s line, at most UNLESS_CHARS before it."""
    start = max(text.rfind("\n", 0, at) + 1, at - UNLESS_CHARS)
    return words.search(text, start, at) is not None


def _run_by(text: str, at: int, command: re.Pattern[str]) -> bool:
    """Whether ``command`` occurs on ``at``'s line before it."""
    return command.search(text, text.rfind("\n", 0, at) + 1, at) is not None


def find_secrets(text: str) -> list[Hit]:
    """Every secret in ``text``, as spans that do not overlap, in order; where two
    detectors overlap, the earlier (more specific) one names the kind."""
    lowered = text.translate(_ASCII_LOWER)  # same length as text, unlike str.lower
    present = _anchors_in(lowered)
    marks = _marks(text)
    hits: list[Hit] = []
    whole = [(0, len(text))]
    for index in sorted(_ALWAYS.union(*(_BY_ANCHOR[a] for a in present))):
        detector = DETECTORS[index]
        if detector.next_line:
            spans = _label_lines(lowered, detector.anchors)
        elif detector.anchors and not detector.multiline and len(text) > WINDOW_FROM:
            spans = _lines_with(lowered, detector.anchors)
        else:
            spans = whole
        for start, end in spans:
            for match in detector.pattern.finditer(text, start, end):
                first, last = _value_span(match)
                value = text[first:last]
                if MARK.fullmatch(value) or (detector.check and not detector.check(value)):
                    continue
                if marks and _in_a_mark(match.start(), marks):
                    continue
                if detector.unless_before and _named_before(text, first, detector.unless_before):
                    continue
                if detector.only_after and not _run_by(text, match.start(), detector.only_after):
                    continue
                if detector.phrase and match.group("b") is not None:
                    last = _phrase_end(text, first, last)
                cuts = [(first, last)]
                if detector.narrow:  # the random strings' detector, the last: ``hits`` is full
                    a, b = detector.narrow(value)
                    if (
                        (a, b) != (0, len(value))
                        and detector.check
                        and not detector.check(value[a:b])
                    ):
                        continue  # its random part alone is no secret (``_random_part``)
                    first, last = first + a, first + b
                    cuts = _beside_known(text, (first, last), hits)
                hits += [Hit(a, b, _kind(detector, text[a:b]), match.span()) for a, b in cuts]
    return _disjoint(hits)


def _phrase_end(text: str, first: int, last: int) -> int:
    """Where a value found by its label ends: past the words ending its line when they
    make a passphrase with it (only its first word was hidden)."""
    rest = _WORDS_TO_END.match(text, last)
    if rest is None or not _no_prose(rest.group()):
        return last
    if len(rest.group().split()) < 2 and not _WORD.fullmatch(text, first, last):
        return last
    return last + len(rest.group().rstrip())


def _marks(text: str) -> list[Cut]:
    """The spans of the redaction marks ``text`` holds already."""
    return [m.span() for m in MARK.finditer(text)] if "[REDACTED" in text else []


def _in_a_mark(at: int, marks: list[Cut]) -> bool:
    """Whether ``at`` is inside one of ``marks``: a mark's kind is no label
    (``[REDACTED:auth-token]: scripts/tests`` read ``token]:`` as one, so a stored text
    scrubbed again lost the words after a hidden value)."""
    return any(start < at < end for start, end in marks)


def _beside_known(text: str, cut: Cut, hits: list[Hit]) -> list[Cut]:
    """``cut``, a random string's span, less the secrets of a maker's shape it runs into:
    base64 holds ``/``, so the match ran on over a path (``/home/d/ghp_<token>/app/t``
    lost ``d/`` and ``/app/t``); a part left either side is hidden only if random alone."""
    first, last = cut
    known = sorted(
        (h.start, h.end)
        for h in hits
        if h.kind not in GENERIC_KINDS and h.start < last and first < h.end
    )
    if not known:
        return [cut]
    edges = [first, *(at for span in known for at in span), last]
    kept: list[Cut] = []
    for start, end in zip(edges[::2], edges[1::2], strict=True):
        part = text[start:end].strip("/")
        if high_entropy(part):
            at = text.index(part, start)
            inner_start, inner_end = _random_part(part)
            kept.append((at + inner_start, at + inner_end))
    return kept


# Kinds that say only how a secret was found; a kind naming the secret's maker wins over them.
GENERIC_KINDS = frozenset({"password", "secret", "high-entropy"})


def _disjoint(hits: list[Hit]) -> list[Hit]:
    """Overlapping hits merged into one, named by the first detector's kind (unless it is
    generic and a later one is not)."""
    merged: list[Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            kind = hit.kind if last.kind in GENERIC_KINDS else last.kind
            merged[-1] = Hit(last.start, max(hit.end, last.end), kind, last.outer)
            continue
        merged.append(hit)
    return merged


def _replace(text: str, hits: Iterable[Hit], found: Counter[str] | None) -> str:
    out, at = [], 0
    for hit in hits:
        out += [text[at : hit.start], f"[REDACTED:{hit.kind}]"]
        at = hit.end
        if found is not None:
            found[hit.kind] += 1
    return "".join(out) + text[at:]


def redact_secrets(text: str, found: Counter[str] | None = None) -> str:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``."""
    return _replace(text, find_secrets(text), found)


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


# Blocks a part may open and a later part close: (opening, closing, what replaces it).
_BLOCKS = (
    (lazy(PROSE_TAG + _CONTEXT_OPEN, re.I), lazy(_CONTEXT_CLOSE, re.I)),
    (lazy(PROSE_TAG + _PRIVATE_OPEN, re.I), lazy(_PRIVATE_CLOSE, re.I)),
    (lazy(PEM_BEGIN), lazy(PEM_END)),
)


# Their names, in the same order: how a capture that ends inside one tells the next
# (``store.sessions.open_block``).
BLOCK_NAMES = ("context", "private", "private-key")


def open_block(text: str) -> re.Pattern[str] | None:
    """The closing tag of a block ``text`` opens last and leaves open, if any."""
    for opening, closing in _BLOCKS:
        opened = list(opening.finditer(text))
        if opened and not closing.search(text, opened[-1].end()):
            return closing
    return None


def block_name(closing: re.Pattern[str]) -> str:
    """The name of the block ``closing`` (``open_block``'s) ends."""
    return BLOCK_NAMES[[end for _, end in _BLOCKS].index(closing)]


def closing_of(name: str) -> re.Pattern[str] | None:
    """The closing tag of the block named ``name`` (None: a name of no block)."""
    return _BLOCKS[BLOCK_NAMES.index(name)][1] if name in BLOCK_NAMES else None


def without_blocks(text: str, found: Redactions) -> str:
    """``text`` without injected context blocks and with each private block ``REDACTED``,
    counted in ``found``."""
    text, context = CONTEXT_BLOCK.subn("", text)
    text, private = PRIVATE_BLOCK.subn(REDACTED, text)
    found.context_blocks += context
    found.private_blocks += private
    return text


def private_texts(text: str) -> list[str]:
    """What each ``<private>`` block of ``text`` holds, without its tags (one left open:
    the rest of the text)."""
    if PRIVATE_BLOCK.search(text) is None:  # most texts: no context block to take out first
        return []
    return [
        _PRIVATE_TAG.sub(" ", found.group())
        for found in PRIVATE_BLOCK.finditer(CONTEXT_BLOCK.sub("", text))
    ]


def without_private(text: str) -> str:
    """``text`` with each private block left out, not marked: what a prompt asks is the
    rest of it (a ``[REDACTED]`` mark would be asked as a word, and the private part's own
    words, names no memory mentions, took every prompt holding one its block)."""
    return PRIVATE_BLOCK.sub(" ", text)


# Why a query that is all ``<private>`` is refused (the private part is never searched).
PRIVATE_ONLY = "a private part is never searched, and nothing else is asked"


def asked_query(query: str) -> str:
    """What an explicit query (``memctl recall``, ``sessions grep``, MCP ``memory_search``
    and ``session_search``) asks: ``query`` without its ``<private>`` parts, as the
    per-prompt hook asks a prompt. The user marked them private: searched for, their words
    reached the database's statements (and so its debug log), the embedder (the resident
    process), and the answer's echo."""
    return without_private(query).strip()


def scrub(text: str) -> tuple[str, Redactions]:
    """The text as memctl may keep it, and what was taken out."""
    found = Redactions()
    return redact_secrets(without_blocks(text, found), found.secrets), found


def kept_path(path: str) -> str:
    """A transcript's or file's path or directory as its session keeps it: a secret or
    ``<private>`` text in it (a folder named after a token) scrubbed, as the messages are."""
    return scrub(path)[0]


def has_label(text: str) -> bool:
    """Whether ``text`` holds a label's telling word (``password``, ``token``, ...)."""
    return bool(_anchors_in(text.translate(_ASCII_LOWER)))


def redact_hits(text: str, hits: list[Hit], found: Counter[str]) -> str:
    """``text`` with ``hits`` (``find_secrets``' of it) replaced, counted in ``found``."""
    return _replace(text, hits, found)


def redact_cuts(text: str, cuts: list[Hit]) -> str:
    """``text`` with each of ``cuts`` (the parts of secrets found across a seam, overlapping
    ones merged) replaced by its kind's mark, not counted again."""
    return _replace(text, _disjoint(cuts), None)


def nothing_left(text: str) -> bool:
    """True when a scrubbed text holds nothing but redaction marks and blanks."""
    return not MARK.sub("", text).strip()


def model_text(value: object) -> str:
    """A model's words as memctl may keep them ('' when nothing is left): private text and
    secrets taken out. An LLM sees scrubbed text, but a host model has the whole
    conversation in its own context and may copy from it."""
    kept, _ = scrub(str(value or ""))
    return "" if nothing_left(kept) else kept.strip()


def secret_in_id(value: str) -> str | None:
    """What secret (its kind, or "private text") an id given by hand (``--session-id``,
    ``--agent-id``) holds, None when none. It is read as an id is written, after the word
    "id", so that a UUID or a 64-digit hex id, named an id, stays an id."""
    _, found = scrub(f"id {value}")
    if found.secrets:
        return ", ".join(sorted(found.secrets))
    return "private text" if found.private_blocks or found.context_blocks else None


def safe_line(text: str, width: int = 300) -> str:
    """One line fit for a log or an error message: secrets and private text removed."""
    cleaned, _ = scrub(text)
    flat = " ".join(cleaned.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@functools.lru_cache(maxsize=16)
def kept_text(text: str) -> str:
    """``text`` (a query) as an explanation or a context block may quote it: its secrets
    and private parts hidden (``scrub``); once per text, as its reasons quote it often."""
    return scrub(text)[0]


def quoted_word(text: str, word: str) -> str:
    """``word`` of ``text`` as an explanation may quote it: not a part of a secret the text
    holds (recall's reason quoted the tail of a token typed into the query)."""
    return word if word.lower() in kept_text(text).lower() else "a word"


# How much of a session reference an error quotes (a REF of 50,000 characters was echoed whole).
QUOTED_REF_CHARS = 60


def quoted_ref(ref: str) -> str:
    """A reference as an error quotes it: one line, its start only, secrets hidden."""
    return repr(safe_line(ref, QUOTED_REF_CHARS))


def no_session(wanted: str) -> NotFoundError:
    """The one-line error for a session reference that names no stored session."""
    return NotFoundError(f"no stored session {quoted_ref(wanted)} (see `memctl sessions list`)")
