"""Facts of what a session's files are for, without an LLM: "`src/auth.ts`: the JWT middleware".

Read from the closing answer and the sub-agents' reports, in any language, in the two
shapes such summaries take: a list item naming a file and saying what it is
("- `src/auth.ts` – JWT middleware", "- **parser.py**: 把日志解析成事件"), and a sentence
saying what a file in backticks does ("`tokenizer.js` renders the ruby markup"). Only a
file the session's tool calls touched and that succeeded counts (a file an answer only
mentions may not exist), at most ``MAX_FILE_ROLES`` a session, the first said first.
"""

from __future__ import annotations

import re

from memctl.ingest.facts import Fact
from memctl.ingest.tools import Call
from memctl.lazy_re import lazy
from memctl.model import Category

FILE = r"(?P<path>(?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})"
LINES = r"(?::\d+(?:-\d+)?)?"  # "tokenizer.js:101-108"
# "- `src/auth.ts` – JWT middleware", "1. **parser.py**: 解析日志"; the colon of a line number
# is no separator: "- `pkg/cmd/login.go:75` → `baseURL + "/cli-login"`" places code, it says
# what no file is for (fresh3's getspecstory session kept "`login.go`: 75 → baseURL …")
LIST_ROLE = lazy(
    r"^[ \t]*(?:[-*•]|\d+[.)])\s+(?:\*\*)?`?" + FILE + LINES + r"`?(?:\*\*)?\s*"
    r"(?:[:：](?!\d+(?:-\d+)?`)|[–—]|\s-\s)\s*(?:\*\*)?(?P<role>\S.*)$",
    re.M,
)
# "`tokenizer.js` renders the ruby markup", "`api.py` now handles retries"
VERBS = (
    r"is|are|now|handles?|holds?|contains?|defines?|implements?|renders?|provides?|manages?|"
    r"stores?|exports?|configures?|wires?|registers?|runs?|reads?|writes?|builds?|checks?|"
    r"parses?|serves?|keeps?|owns?|exposes?|loads?|maps?|routes?|sets? up"
)
SENTENCE_ROLE = lazy(
    r"`" + FILE + LINES + r"`\s*(?P<role>(?:(?:" + VERBS + r")\b[^.\n。]{8,}|"
    r"(?:负责|用于|处理|包含|定义|实现|提供|存放|は|では|が|는|은|가|에서)[^.\n。]{4,}))"
)
# a heading or a bold label naming a file, its changes listed under it:
# "## JavaScript changes (`tokenizer.js:101-108`)" then "- Replaced … with <ruby>". A bold
# label holds the file and ends before its sentence could: "**Both Majors are documentation,
# one clause each, both in `docs/setup.md`.** Nothing needs a redesign." is a sentence made
# bold, and the list after it no changes of setup.md (fresh9's 548526c8 kept "`docs/setup.md`:
# Both Majors are documentation, …" as what the file is)
BOLD_LABEL = (
    r"\*\*(?=[^`\n*]*`" + FILE.replace("?P<path>", "?:") + LINES + r"`[^\n*.!?]*\*\*"
    r"|[^*`\n]{1,40}[:：]\*\*[ \t]*`)"  # or a label of its own before the file: "**Files:** `a.py`"
)
HEADING_FILE = lazy(
    r"^[ \t]*(?:#{1,6}[ \t]+|" + BOLD_LABEL + r")(?P<label>[^`\n]*)`" + FILE + LINES + r"`[^\n]*$",
    re.M,
)
LIST_LINE = lazy(r"^\s*(?:[-*•]|\d+[.)])\s+(?P<item>\S.*)$")
MAX_FILE_ROLES = 5
ROLE_MIN_CHARS = 6
ROLE_WIDTH = 160
ROLE_IMPORTANCE = 0.6
# what the session said of a file it touched: less certain than a tool result, more than a
# sentence a rule matched in passing
ROLE_CONFIDENCE = 0.75
MARKUP = lazy(r"\*\*|`")
# A Japanese or Korean sentence's role goes on from the file's name with its particle
# ("`system-rules.md`가 다른 15개의 가이드 문서들과 …"): cut at the name and joined by a colon
# it read "`system-rules.md`: 가 다른 …", half a sentence (fresh2's agentstuff, s32-distill)
PARTICLE = lazy(r"^(?:では|は|が|는|은|가|에서)")
ITEM_MARK = lazy(r"^(?:[-*•]|\d+[.)])\s+")


def _touched(calls: list[Call]) -> set[str]:
    """The base names of the files the session's successful tool calls name."""
    names: set[str] = set()
    for call in calls:
        if call.succeeded:
            names |= {m.group("path").rsplit("/", 1)[-1] for m in re.finditer(FILE, call.detail)}
    return names


def _role(text: str) -> str:
    """The role as a fact says it: without markup, and without the list mark of an item
    quoted under a heading ("- 문서 템플릿 전체 한국어 번역", "2. Updated: …")."""
    flat = " ".join(MARKUP.sub("", text).split()).rstrip(" .;,。")
    flat = ITEM_MARK.sub("", flat)
    return flat if len(flat) <= ROLE_WIDTH else flat[: ROLE_WIDTH - 1] + "…"


def _under_headings(text: str) -> list[tuple[str, str]]:
    """(path, its heading's words and the first item listed under it) for each heading
    naming a file."""
    lines = text.splitlines()
    found = []
    for heading in HEADING_FILE.finditer(text):
        at = text.count("\n", 0, heading.start())
        following = [line for line in lines[at + 1 : at + 3] if line.strip()]
        item = LIST_LINE.match(following[0]) if following else None
        if item:
            label = heading.group("label").strip(" (*:#")
            found.append((heading.group("path"), f"{label}: {item.group('item')}".lstrip(": ")))
    return found


def file_roles(texts: list[str], calls: list[Call], source: str, at: str) -> list[Fact]:
    """The roles ``texts`` give the files ``calls`` touched, one fact a file."""
    touched = _touched(calls)
    found: dict[str, str] = {}
    for text in texts:
        said = [(m.group("path"), m.group("role")) for m in LIST_ROLE.finditer(text)]
        said += _under_headings(text)
        said += [(m.group("path"), m.group("role")) for m in SENTENCE_ROLE.finditer(text)]
        for path, raw in said:
            role, name = _role(raw), path.rsplit("/", 1)[-1]
            if name in touched and len(role) >= ROLE_MIN_CHARS and name not in found:
                found[name] = f"`{path}`{'' if PARTICLE.match(role) else ': '}{role}"
    return [
        Fact(
            content=content,
            category=Category.ENTITIES,
            tags=["file"],
            importance=ROLE_IMPORTANCE,
            confidence=ROLE_CONFIDENCE,
            source=source,
            created_at=at or None,
        )
        for content in list(found.values())[:MAX_FILE_ROLES]
    ]
