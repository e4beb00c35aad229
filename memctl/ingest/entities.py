"""Entities and triples in a memory's text, by rules (no model).

Entities: files and paths, repositories (``owner/name``, a GitHub URL), commands (in
backticks, or after ``$``), the tools and services of ``VOCABULARY`` (their aliases
folded: "Postgres" and "PostgreSQL 16" are one entity) and of ``software.txt`` ("Oban",
"Elixir"), dates, places (a capitalised name after "in", "to", "from", ...), projects
("the X project", "project X") and people (other capitalised names, not of everyday words
only; the speaker of a ``Name: ...`` line, not a label such as "Next Steps: ..."). In Chinese,
Japanese and Korean text the Latin-script entities are found the same way, plus
names marked by a suffix (さん, 씨, 先生, 市, 公司, ...), titles in 《》 or 「」 and
katakana words.

Triples: ``subject → predicate → object`` where a sentence says so: the speaker (or
"user", who speaks in the first person) and what follows a verb of ``PREDICATES``
("I moved to Sweden" → Caroline → moved to → Sweden), and two entities joined by a
short verb phrase ("memctl uses SQLite").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from memctl.lazy_re import lazy
from memctl.memories.lines import SPEAKER, line_speaker
from memctl.retrieve.query import SENTENCE_END, STOPWORDS, cjk_count, names
from memctl.retrieve.vocabulary import is_term

# The version of these rules. Raise it with a change that alters what they find in a
# stored text: the next ``maintain`` reads every memory again (ingest/graph.py), taking
# back what older rules stated and keeping what an LLM, the host or a sync gave.
# 1: the rules before the developer-text ones (2f89a50); 2: capitals in developer text
# (paths, compounds, labels, list items, headings, code identifiers) name no one; 3: a
# katakana word is a thing, not a tool; 4: the software names of ``software.txt`` are tools
# (not people or places); a speaker label or a would-be person of everyday words only
# ("Next Steps: ...", "Log Levels") names no one; "Dr. Smith: ..." is a speaker; 5: an
# alias that is an everyday word ("react", "node", "cursor") names a tool only when
# written as a name (capitalised, or in code); 6: a command the digest cut short ("…")
# names nothing; 7: a digest's heading (its day, its client) names nothing; 8: the day of a
# check's template ("(passed on 2026-02-12)") names nothing, nor a code span that is only
# a flag (`--no-verify`), nor the assistant a message greets ("Hey Claude"); a capitalised
# run holding a software name ("Github Action", "Python CLI") is a thing, not a person; a
# place is never everyday words or capitals only ("Always", "IN PROGRESS"); a digest's
# absolute path inside its project is the project's relative path; a word the digest cut
# ("Musi…") or one after a log level ("[ERROR] Cowardly refusing") names no one; 9: a
# plural weekday ("Fridays") or an acronym's plural ("UUIDs") names no one; 10: a code span
# or a digest's line of files and commands names no person, place or tool by its capitals
# ("`Things to Avoid`", "-t \"Compaction Config\""), a build file without an extension
# ("Justfile") is a file, and a name owning something after "in" ("in Steve Yegge's
# writing") is a person, not a place; a repository's clone URL ("a/b.git") names a/b; a
# throwaway or a worktree's directory names no project (ingest/graph.py ``project_of``); a
# "; " inside a command's brackets is the command's own ("(cd web; npm test)"); 11: a
# quotation of capitalised words only is a title, as code is ("\"Bass Enhancer\""); a
# capitalised word after a software name starting its sentence is a thing named with it
# ("· Claude Max", "| Cursor Bugbot"); what follows "via" or "using" is a thing ("via Shim"),
# and so is a name in a list beside a software name ("PyTorch, TensorFlow or Flax");
# a run of capitals after or starting with an everyday participle ("Supported Providers") or
# before a capitalised function word ("(See Also)") is a heading, no one;
# a file a memory names by its absolute path in its project is its path there (the absolute
# one its alias), as a digest's files were since 8; "`mix test`" names Elixir and "`go test`"
# Go (``RUN_BY``).
RULES_VERSION = 11

# Canonical name -> (kind, aliases): the tools and services whose several spellings name
# one thing. Versions are stripped before the look-up ("PostgreSQL 16" -> postgresql).
VOCABULARY: dict[str, tuple[str, tuple[str, ...]]] = {
    "PostgreSQL": ("service", ("postgres", "postgresql", "psql", "pg")),
    "MySQL": ("service", ("mysql", "mariadb")),
    "SQLite": ("service", ("sqlite", "sqlite3")),
    "Redis": ("service", ("redis",)),
    "Nginx": ("service", ("nginx",)),
    "Kubernetes": ("service", ("kubernetes", "k8s", "kubectl")),
    "Docker": ("tool", ("docker", "docker compose", "docker-compose")),
    "GitHub": ("service", ("github", "gh")),
    "GitHub Actions": ("service", ("github actions",)),
    "GitLab": ("service", ("gitlab",)),
    "AWS": ("service", ("aws", "amazon web services")),
    "S3": ("service", ("s3",)),
    "Ollama": ("service", ("ollama",)),
    "Git": ("tool", ("git",)),
    "Python": ("tool", ("python", "python3", "cpython")),
    "Node.js": ("tool", ("node", "nodejs", "node.js")),
    "TypeScript": ("tool", ("typescript", "ts")),
    "JavaScript": ("tool", ("javascript", "js")),
    "Rust": ("tool", ("rust", "cargo")),
    "Go": ("tool", ("golang",)),
    "pytest": ("tool", ("pytest",)),
    "ruff": ("tool", ("ruff",)),
    "mypy": ("tool", ("mypy",)),
    "npm": ("tool", ("npm",)),
    "pnpm": ("tool", ("pnpm",)),
    "uv": ("tool", ("uv",)),
    "pip": ("tool", ("pip", "pip3")),
    "Django": ("tool", ("django",)),
    "FastAPI": ("tool", ("fastapi",)),
    "Flask": ("tool", ("flask",)),
    "React": ("tool", ("react", "reactjs")),
    "Vue": ("tool", ("vue", "vuejs")),
    "Terraform": ("tool", ("terraform",)),
    "Make": ("tool", ("makefile", "gnu make")),
    "Bash": ("tool", ("bash", "shell script")),
    "Vim": ("tool", ("vim", "neovim", "nvim")),
    "VS Code": ("tool", ("vs code", "vscode")),
    "Claude Code": ("tool", ("claude code",)),
    "Codex": ("tool", ("codex",)),
    "Cursor": ("tool", ("cursor",)),
    "OpenCode": ("tool", ("opencode",)),
    "Slack": ("service", ("slack",)),
    "Jira": ("service", ("jira",)),
}
ALIASES = {alias: name for name, (_, aliases) in VOCABULARY.items() for alias in aliases}
# An alias in code, lower case (``{0}`` is the alias): after a backtick (a code span, a
# fence's language) or a slash (a program's path, "/bin/bash"), alone in parentheses
# ("(cursor)"), joined to a package or file name ("react-dom",
# "react@18", "react/jsx-runtime"), before a version ("react 18"), a flag ("python -m")
# or a file ("node index.js").
CODE_NAME = (
    r"(?<=[`/]){0}(?!\w)|\({0}\)|(?<![\w.-]){0}"
    r"(?:[-@/]\w|\s+v?\d|\s+-{{1,2}}\w|\s+[\w./-]+\.[a-z]{{1,4}}\b)"
)
# A language's own command-line tool, run as a command: "`mix test`" is Elixir's, "`go test
# ./...`" Go's (as "cargo" is Rust's above). Anywhere else the word is everyday English ("go
# ahead", "mix the two"), so it names the language only as a command's first word.
RUN_BY = {"go": "Go", "mix": "Elixir"}
# More names of software, languages and services (simple-icons, GitHub linguist; the file's
# header names the sources and their licences), kind "tool": one found in any case, or,
# when an English word or a first name ("=Windows"), only as written. ``VOCABULARY`` wins.
SOFTWARE_FILE = Path(__file__).with_name("software.txt")
SOFTWARE_KIND = "tool"
# The tag of ``software.txt``'s rows from simple-icons (its header names the sources):
# brands of every trade, not only software.
BRAND_SOURCE = "si"
# Everyday English words (SCOWL, less first names): a speaker label of them is a heading.
COMMON_WORDS_FILE = Path(__file__).with_name("common_words.txt")
VERSION = lazy(r"\s*v?\d+(?:\.\d+)*$", re.I)
VERSION_AFTER = r"(?:\s*v?\d+(?:\.\d+)*)?(?!\w)"

# Build and tool files named without an extension (GitHub linguist's "filenames" of their
# languages): a file, not a person ("├── Justfile"). Makefile and Dockerfile are their
# tools in ``VOCABULARY`` and ``software.txt``.
EXTENSIONLESS = (
    "Justfile|Gemfile|Rakefile|Procfile|Vagrantfile|Jenkinsfile|Containerfile|Brewfile|"
    "Podfile|Pipfile|Earthfile|Tiltfile|Guardfile|Berksfile|Snakefile|Caddyfile"
)
FILE = lazy(
    rf"(?<![\w/.-])(?:(?:~|\.{{1,2}})?/?(?:[\w.-]+/)*(?:{EXTENSIONLESS})(?![\w-]|\.\w)|"
    r"(?:~|\.{1,2})?/?(?:[\w.-]+/)*[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|json|"
    r"ya?ml|toml|md|rst|txt|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|sh|sql|css|html|ini|"
    r"cfg|lock|env|conf|ipynb|swift)\b)"
)
REPOSITORY = lazy(
    r"(?:github\.com/|gitlab\.com/|\brepo(?:sitory)? (?![\w-]+\.\w+/))([\w.-]+/[\w.-]*[\w-])"
)
GIT_SUFFIX = ".git"
COMMAND = lazy(r"`([^`\n]{2,80})`|(?:^|\n)\s*\$ ([^\n]{2,80})")
DATE = lazy(
    r"\b(?:\d{4}-\d{2}-\d{2}|\d{1,2} (?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December),? \d{4}|(?:January|February|March|April|May|"
    r"June|July|August|September|October|November|December) \d{1,2},? \d{4})\b"
)
PLACE_BEFORE = lazy(r"\b(?:in|to|from|near|visited|visit|country,?)\s+$", re.I)
# A name owning what follows ("Steve Yegge's writing"): someone's, after "in" too.
POSSESSIVE = lazy(r"['’]s\b")
ORGANISATION_BEFORE = lazy(r"\b(?:at|for|joined)\s+$", re.I)
# What a thing is reached by, not a person or a place ("chain-loaded via Shim", "signed
# using Sigstore"): a thing.
THING_BEFORE = lazy(r"\b(?:via|using)\s+$", re.I)
# A name in a list beside a software name is of its kind, not a person ("None of PyTorch,
# TensorFlow >= 2.0, or Flax have been found"): a thing. The item before (its version too)
# and the item after, each joined by a comma, "or", "and" or "&".
ITEM_BEFORE = lazy(r"([\w.+#-]+)(?:\s*[<>=!~^]=?\s*v?\d[\w.]*)?\s*(?:,|,?\s+(?:or|and|&))\s*$")
ITEM_AFTER = lazy(r"\s*(?:,|,?\s+(?:or|and|&))\s+([\w.+#-]+)")
# A software name that starts its sentence, just before a capitalised word: a part or a
# plan of that software ("· Claude Max", "| Cursor Bugbot |"), a thing named with it. The
# sentence's first word is no name by itself, so the word after it was read alone.
SOFTWARE_LEAD = lazy(r"(?<![\w.-])([A-Z][\w.+-]*) $")
PROJECT = lazy(r"\b(?:the ([A-Z][\w.-]+) project|project ([A-Z][\w.-]+))")
# Capitalised words that name no one: days (and their plurals: "deploys on Fridays" named
# a person Fridays in the README's example graph), months, greetings, pronouns and the like.
NOT_NAMES = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays january february march april
    may june july august september october november december hey hi hello thanks thank yes
    no yeah wow oh ok okay sure great cool nice awesome i im ive id ill lol omg haha we they he
    now then here there also still just
    she you it the this that our my their his her""".split()
)
# Where a clause starts, so its first capital marks no name: a label's colon ("Key
# points: Uses ..."), a list's bullet or number, a heading's mark, an emoji.
CLAUSE_START = lazy(
    r"(?::|\[[A-Z]{2,}\]|(?<![\w.])\d+[.)]|[-*#>|•·▪–—\u2190-\u21ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff])\s+"
)
# A capital inside a word: a code identifier ("SessionLive") or a brand ("YouTube"), a
# thing rather than a person or a place.
INNER_CAPITAL = lazy(r"[a-z][A-Z]")
HEADING_WORD = lazy(r"[^\W_][\w'-]*")
# One word shaped as an ordinary word: a past tense, a gerund, an abstract noun
# ("Removed", "Linting", "Verification"). Names of that shape ("Fred", "Ming", "Trinity")
# are short or kept by other rules (a speaker, "works at").
WORD_FORM = lazy(r"^[A-Z][a-z]{3,}(?:ed|ing|tion|sion|ment|ness|ance|ence|ure|ize|ise)s?$")
MAX_NAME_WORDS = 3  # "Mary Ann Smith"; a longer run of capitals is a heading
# Title case: a heading's run of capitals starts with an everyday participle ("Supported
# Providers", "Getting Started": the first word of a sentence is read as none of a name, so
# "Supported Provider..." named a person Provider), or goes on with a capitalised function
# word of two letters or more ("(See Also)", "Back To Top"). Names do neither.
PARTICIPLE = lazy(r"^[A-Z][a-z]{2,}(?:ed|ing)$")
TITLE_WORD = lazy(r"\s+([A-Z][a-z]+)\b")
# Words that end a first-person object without being part of it ("a class yesterday").
# An object that is only an adverb or a quantity ("studied hard", "learned a lot") is none.
VAGUE = frozenset("hard lot bit more much well too so really few together weeks days".split())
TRAILING = frozenset("yesterday today tonight tomorrow now recently lately again ago too".split())
PUNCTUATION = lazy(r"[^\w.+#\s-]|\.(?=\s|$)")
# First-person verbs whose object is worth a triple: "I moved to X" -> (speaker, moved to, X).
PREDICATES = (
    "work at|work as|work for|works at|works as|works for|worked at|worked as|worked for|"
    "working at|working as|working on|work on|works on|"
    "moved to|moved from|move to|moving to|live in|lives in|lived in|living in|grew up in|"
    "use|uses|used|using|prefer|prefers|switched to|switched from|migrated to|"
    "love|loves|like|likes|enjoy|enjoys|hate|hates|"
    "joined|started|signed up for|went to|visited|bought|adopted|read|reading|wrote|"
    "writing|built|building|painted|painting|play|plays|played|playing|learned|learning|"
    "studied|study|studying|research|researched|researching|volunteer at|volunteered at|"
    "volunteering at|became|deploy to|deploys to|deployed to|depends on|depend on|"
    "runs on|run on|written in|maintain|maintains"
)
# Words between a subject and its verb ("I have just moved", "Bob also works").
ADVERBS = (
    r"(?:'ve|'m| am| are| is| has| have| had| just| also| really| recently| finally| still| now|"
    r" always| usually| often| never)"
)
STATEMENT = rf"{ADVERBS}{{0,2}} ({PREDICATES})\s+([^.,;:!?()\n]{{2,60}})"
FIRST_PERSON = lazy(rf"\b(?:I|We|we|[Tt]he user|User|my family|our team){STATEMENT}")
# A sentence's first capitalised word(s) doing something of ``THIRD_PERSON``: a person
# ("Alice works at Acme"; not "Sounds like fun", "Just started yoga").
THIRD_PERSON = (
    "works at|works as|works for|lives in|moved to|moved from|uses|prefers|maintains|"
    "joined|depends on|runs on|deploys to|switched to|migrated to|grew up in|became"
)
SUBJECT = lazy(rf"(?:^|[.!?]\s+)([A-Z][a-z]+(?: [A-Z][a-z]+)?) (?:{THIRD_PERSON})\b")
# The facts the rules distil from a session's tool calls (ingest/extract_actions.py).
RUNS_WITH = lazy(
    r"^(tests|the build|lint|type checks|formatting) runs? with `([^`\n]+)`", re.I | re.M
)
FIXED_BY = lazy(r"^`([^`\n]+)` failed: [^\n]*?→ fixed by ([^\n]+)", re.M)
BACKTICKED = lazy(r"`([^`\n]+)`")
# A session digest's lines of work (ingest/digest.py ``render``): the files created and
# edited and the commands run, "; " between items. Only a whole line (a newline after
# it) is read: the digest's last line may be cut at its length.
DIGEST_WORK = lazy(r"^(Created|Edited|Ran): ([^\n]+)\n", re.M)
DIGEST_KINDS = {"Created": "file", "Edited": "file", "Ran": "command"}
# A digest's items are joined by "; " (ingest/digest.py render); one inside brackets or a
# code span is the item's own ("(uses XML; 7 rules)", "`$a = 1; $b = 2`"), and "…; "
# always ends one (an item the digest cut may leave a bracket open).
ITEM_SEPARATOR = "; "
OPENING, CLOSING = "([{", ")]}"
CUT_ITEM = "…; "
# What is code, not prose, for the capitals of names: a code span and a digest's lines of
# files and commands (the last one too, cut or not). Their capitals name no one: a
# heading quoted for translation ("`Things to Avoid`"), a test's name ("-t \"Compaction
# Config\"").
# A quotation of capitalised words only is a title, a setting's or a heading's, quoted as
# code is ("adding a \"Bass Enhancer\" or \"Loudness\" effect"); a quoted sentence is not.
CODE_TEXT = lazy(
    r"`[^`\n]+`|^(?:Created|Edited|Ran): [^\n]*|\"[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3}\"|"
    r"“[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3}”",
    re.M,
)
# What stands in for code in prose: a word in lower case, so the capitals on either side
# make no one run of a name ("Ann `x` Lee" is not "Ann Lee").
CODE_MARK = " _ "
# A digest's other section labels: "Decided: ..." is no one speaking.
DIGEST_LABELS = frozenset(
    {
        *DIGEST_KINDS,
        "Asked",
        "Decided",
        "Committed",
        "Pushed",
        "Fixed",
        "Found",
        "Left open",
        "Not done",
        "Outcome",
    }
)
# A digest's heading (ingest/pipeline.py): "Session of 2026-02-12 (claude-code) — …". Its
# day and client are memctl's template, not what the session said: they name nothing (the
# title after the dash is the session's first request, and is read).
DIGEST_HEAD = lazy(r"^Session of \d{4}-\d{2}-\d{2} \([^)\n]*\)(?: — )?", re.M)
# The day a check fact's template adds (ingest/extract_actions.py: "tests run with `mix
# test` (passed on 2026-02-12)"): when memctl saw it pass, not a date the session named.
CHECK_DAY = lazy(r" \((?:passed|succeeded) on \d{4}-\d{2}-\d{2}\)")
# A greeting or thanks before a name: the one spoken to. When that name is software, it is
# the assistant the user talks to ("Hey Claude, can you ..."), not a tool the work uses.
ADDRESSED = lazy(r"\b(?:hey|hi|hello|thanks|thank you),?\s+([A-Z][\w-]*)\b", re.I)
CUT = "…"  # an item or a command shortened by the digest names nothing whole
BETWEEN = lazy(rf"^\s*(?:is |are |was )?({PREDICATES})(?: (?:a|an|the))?\s*$")
ARTICLES = lazy(r"^(?:a|an|the|my|our|some|this|that|these|those|his|her|their)\s+", re.I)
OBJECT_WORDS = 4  # a first-person object is cut at this many words
# Kinds whose name, at the start of an object, is the object ("Sweden four years ago").
NAMED_KINDS = frozenset(
    "place organisation service tool repository file project command date".split()
)
# An object ends before these words ("pottery and painting": the first is the object).
OBJECT_END = lazy(
    r"\s(?:and|but|because|which|who|that|so|when|while|with|for|to|it's|as|if|or|-|last|at|in|on|"
    r"from|since|by|"
    r"this|next|every|yesterday|today|ago)\s.*$",
    re.I,
)
# An object starting with these is a clause, not a thing ("love how you ...").
CLAUSE = frozenset("how what that it this when where why who which if to".split())
# CJK: names marked by a suffix, titles in brackets, katakana words.
CJK_PERSON = lazy(r"([\u4e00-\u9fff\u3040-\u30ff]{1,4})(?:さん|様|先生|くん|ちゃん|老师|先生)")
KOREAN_PERSON = lazy(r"([\uac00-\ud7af]{2,4})\s?(?:씨|님|선생님)")
# Characters that start no name: particles and pronouns (的, 在, 我们, ...).
CJK_STARTS_NO_NAME = "的在是了我你他她们和与用从到为这那去来往住回はがをにでと"
CJK_NAME = rf"(?:(?![{CJK_STARTS_NO_NAME}])[\u4e00-\u9fff\u30a0-\u30ff])"
CJK_PLACE = lazy(rf"({CJK_NAME}{{1,3}}(?:市|省|县|区|国|府|県|町|村))")
# 都 ends a place name in Japanese (東京都); in Chinese it is mostly "all" (个测试都 "the
# tests all ..."), so it counts only in text holding kana.
JAPANESE_CAPITAL = lazy(rf"({CJK_NAME}{{1,3}}都)")
KANA = lazy(r"[\u3040-\u30ff]")
CJK_ORG = lazy(rf"({CJK_NAME}{{2,8}}(?:公司|大学|银行|会社|大学校))")
# A boundary between Latin letters and CJK text ("Redis를"): the rules see a space there.
SCRIPT_EDGE = lazy(r"(?<=[A-Za-z0-9])(?=[^\x00-\x7f])|(?<=[^\x00-\x7f])(?=[A-Za-z0-9])")
CJK_TITLE = lazy(r"[《「『]([^》」』]{1,30})[》」』]")
KATAKANA = lazy(r"[\u30a1-\u30fa\u30fc]{3,}")


@dataclass(frozen=True)
class Entity:
    name: str
    kind: str  # person, organisation, project, repository, file, service, tool, command, place,
    # date or thing
    spelled: tuple[str, ...] = ()  # how the text wrote it, when not as ``name``


@dataclass(frozen=True)
class Triple:
    subject: Entity
    predicate: str
    object: Entity


def key(name: str) -> str:
    """How an alias is looked up: case folded, spaces collapsed."""
    return " ".join(name.casefold().split())


@dataclass(frozen=True)
class Software:
    """``software.txt`` read: canonical names by key (any case), by spelling (as written
    only), the first words of the keys of several words, the most words a key has, and
    the names only simple-icons gives."""

    by_key: dict[str, str]
    as_written: dict[str, str]
    heads: frozenset[str]
    longest: int
    brands: frozenset[str]  # names only simple-icons gives (``BRAND_SOURCE``)


@functools.cache
def software() -> Software:
    """The shipped software names (read once a process, when first needed)."""
    by_key: dict[str, str] = {}
    as_written: dict[str, str] = {}
    sources: dict[str, set[str]] = {}
    for line in SOFTWARE_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        source, _, names = line.partition("\t")
        spellings = [s.strip() for s in names.split(" | ")]
        name = spellings[0].lstrip("=")
        sources.setdefault(name, set()).add(source)
        for spelled in spellings:
            if spelled.startswith("="):
                as_written.setdefault(spelled[1:], name)
            elif key(spelled) not in ALIASES:
                by_key.setdefault(key(spelled), name)
    heads = frozenset(k.split()[0] for k in by_key if " " in k)
    brands = frozenset(n for n, found in sources.items() if found == {BRAND_SOURCE})
    return Software(by_key, as_written, heads, max(len(k.split()) for k in by_key), brands)


def brand_only(name: str) -> bool:
    """Whether ``name`` is a tool only because simple-icons lists it: a brand, a
    developer's (Sentry, Vercel) or a consumer's (YouTube, Nike, Netflix); the list cannot
    tell. The hand-written ``VOCABULARY``, linguist's languages and memctl's own rows are
    developers' tools."""
    return name not in VOCABULARY and name in software().brands


@functools.cache
def common_words() -> frozenset[str]:
    """The everyday English words of ``common_words.txt``."""
    lines = COMMON_WORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(w for w in lines if w and not w.startswith("#"))


@functools.cache
def _names() -> frozenset[str]:
    """Every spelling of a tool, language or service (the vocabulary's and
    ``software.txt``'s), case folded."""
    found = software()
    return frozenset(ALIASES) | found.by_key.keys() | {k.casefold() for k in found.as_written}


def known_word(word: str) -> bool:
    """An everyday English word or a tool's name (``postgres``, ``vagrant``): a password of
    one, said again, is more often the word than the password."""
    folded = word.casefold()
    return folded in common_words() or folded in _names()


def canonical(name: str) -> Entity | None:
    """The vocabulary's entity for ``name`` (its version dropped), or None: the hand-written
    ``VOCABULARY`` first, then the software names (an English word only as written)."""
    bare = VERSION.sub("", name).strip()
    base = key(bare)
    found = ALIASES.get(base)
    if found:
        return Entity(found, VOCABULARY[found][0])
    names = software()
    other = names.by_key.get(base) or names.as_written.get(" ".join(bare.split()))
    return Entity(other, SOFTWARE_KIND) if other else None


def _everyday(name: str) -> bool:
    """Whether ``name`` is everyday words only ("Next Steps", "Usage", "Log Levels"): a
    label or a heading, not the name of a person (first names are no everyday words)."""
    common = common_words()
    return all(
        any(f in common for f in (w.lower(), w.lower().removesuffix("s"))) for w in name.split()
    )


def speaker(text: str) -> str | None:
    """The speaker of a ``Name: ...`` line (``[date] Name: ...`` too); not a label of
    everyday words ("Next Steps: ...")."""
    name = line_speaker(text)
    if name is None or name.lower() in NOT_NAMES or name in DIGEST_LABELS:
        return None
    return None if _everyday(name) else name


def _spelled(alias: str, name: str, text: str) -> tuple[str, ...]:
    """How ``text`` writes ``alias`` (a version after it too), when not as ``name``."""
    spelled = re.finditer(rf"(?<![\w.]){re.escape(alias)}{VERSION_AFTER}", text, re.I)
    return tuple(dict.fromkeys(m.group(0) for m in spelled if m.group(0) != name))


@functools.cache
def everyday_aliases() -> frozenset[str]:
    """The aliases of ``VOCABULARY`` that are everyday English words ("react", "node",
    "cursor"): each names its tool only where ``_named`` finds it written as a name."""
    return frozenset(ALIASES) & common_words()


def _named(alias: str, text: str) -> bool:
    """Whether ``text`` writes the everyday word ``alias`` as a tool's name: capitalised
    ("React", "REACT"), or in code (``CODE_NAME``: "react-dom", "react 18", "`react`",
    "node index.js"), not as a word ("how did you react")."""
    capitals = rf"(?<![\w-])(?:{re.escape(alias.capitalize())}|{re.escape(alias.upper())})(?!\w)"
    return bool(
        re.search(capitals, text)
        or re.search(CODE_NAME.format(re.escape(alias)), text)
        or any(alias in (a or b).lower().split() for a, b in COMMAND.findall(text))
    )


def _run_by(text: str) -> list[Entity]:
    """The languages ``RUN_BY`` names: its word as the first of a command (a code span, a
    ``$`` line, a digest's Ran: item)."""
    runs = [(a or b) for a, b in COMMAND.findall(text)]
    for line in DIGEST_WORK.finditer(text):
        runs += digest_items(line.group(2)) if line.group(1) == "Ran" else []
    firsts = {run.split()[0] for run in runs if run.split()}
    return [_language(name) for word, name in RUN_BY.items() if word in firsts]


def _language(name: str) -> Entity:
    """The entity of a language ``RUN_BY`` names: the vocabulary's, or ``software.txt``'s."""
    return Entity(name, VOCABULARY[name][0]) if name in VOCABULARY else Entity(name, SOFTWARE_KIND)


def _vocabulary(text: str) -> list[Entity]:
    found: list[Entity] = _run_by(text)
    lowered = f" {key(PUNCTUATION.sub(' ', text))} "
    everyday = everyday_aliases()
    for alias, name in ALIASES.items():
        if f" {alias} " not in lowered and f" {alias}." not in lowered:
            continue
        if alias not in everyday or _named(alias, text):
            found.append(Entity(name, VOCABULARY[name][0], _spelled(alias, name, text)))
    # the software names: a look-up of each run of words, not a scan per name
    names, words = software(), lowered.split()
    for start, word in enumerate(words):
        runs = [word]
        if word in names.heads:
            longest = min(names.longest, len(words) - start)
            runs += [" ".join(words[start : start + size]) for size in range(2, longest + 1)]
        for alias in runs:
            if alias in names.by_key:
                name = names.by_key[alias]
                found.append(Entity(name, SOFTWARE_KIND, _spelled(alias, name, text)))
    return found


def _written_as_name(name: str, text: str) -> bool:
    """Whether ``text`` writes ``name`` as a name: somewhere on its own, not inside a path
    or a compound ("/Users/ann", "Pre-commit"); for one word, never in lower case too
    ("Format ... format") and not shaped as an ordinary word ("Removed", "Linting")."""
    if " " not in name and WORD_FORM.search(name):
        return False
    if " " not in name and re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", text):
        return False
    return re.search(rf"(?<![\w/\\.@-]){re.escape(name)}(?![\w/\\-]|\.\w)", text) is not None


def _heading(sentence: str) -> bool:
    """A sentence in title case ("Next Steps", "Key Methods Involved in ZIP Processing"),
    other than one calling or greeting someone ("Definitely, John", "Hey Mel")."""
    words = HEADING_WORD.findall(sentence)
    if not words or "," in sentence or words[0].lower() in NOT_NAMES:
        return False
    return all(w[0].isupper() or w.isdigit() or w in STOPWORDS for w in words)


def _capitals(name: str) -> bool:
    """Written in capitals: an acronym ("CI", "IN PROGRESS") or its plural ("UUIDs", "PRs",
    "APIs": the README's example graph named a person UUIDs), never a person's name."""
    return name.isupper() or (len(name) > 2 and name[-1] == "s" and name[:-1].isupper())


def _capitalised(text: str, skip: set[str], outside: str) -> list[Entity]:
    """The capitalised names of ``text``; one written only in its code (``outside``: the
    text without it) is at most a thing, a code identifier ("`SessionLive`")."""
    found: list[Entity] = []
    text = CLAUSE_START.sub(". ", text)
    prose = ". ".join(s for s in SENTENCE_END.split(text) if not _heading(s))
    for name in names(prose):
        words = name.split()
        if any(w.lower() in NOT_NAMES for w in words) or key(name) in skip:
            continue
        if len(name) < 2 or not _written_as_name(name, text):
            continue
        if re.search(rf"(?<!\w){re.escape(name)}{CUT}", text):  # "= Musi…": cut, no one
            continue
        at = text.find(name)
        before = text[:at]
        kind = "place" if PLACE_BEFORE.search(before) else "person"
        if kind == "place" and POSSESSIVE.match(text, at + len(name)):
            kind = "person"  # "in Steve Yegge's own writing": whose, not where
        kind = "organisation" if ORGANISATION_BEFORE.search(before) else kind
        if _capitals(name) and (kind == "person" or is_term(name)):  # "CI", "YYYY MM DD"
            continue
        coded = not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", outside)
        named = canonical(name)  # "Windows", "in Elixir": a tool, not a person or a place
        if named and kind != "organisation":  # "at NASA", "works for Google": the company
            found += [] if coded else [named]  # "`Things to Avoid`": ``_vocabulary``'s
            continue
        if kind == "person" and len(words) > MAX_NAME_WORDS:  # a heading in title case
            continue
        beside = ITEM_BEFORE.search(before), ITEM_AFTER.match(text, at + len(name))
        listed = any(m and canonical(m.group(1)) for m in beside)  # "PyTorch, or Flax"
        kind = "thing" if THING_BEFORE.search(before) or listed else kind
        if INNER_CAPITAL.search(name):  # "SessionLive", "GoT"
            kind = "thing"
        if kind != "organisation" and any(canonical(w) for w in words):
            kind = "thing"  # "Github Action", "Python CLI": a part of the software named
        if kind in ("person", "place") and (_everyday(name) or _capitals(name)):
            continue  # "Log Levels", "Usage"; "in Always", "IN PROGRESS"
        lead = SOFTWARE_LEAD.search(before)
        if kind == "person" and _titled(name, lead.group(1) if lead else "", text, at):
            continue
        if lead and canonical(lead.group(1)) and kind in ("person", "place"):
            found.append(Entity(f"{lead.group(1)} {name}", "thing"))
            continue
        if coded and kind != "thing":  # `See Also`, -t "Compaction Config": no one
            continue
        found.append(Entity(name, kind))
    found += [
        Entity(m.group(1), "person")
        for m in SUBJECT.finditer(text)
        if m.group(1).lower() not in NOT_NAMES and not canonical(m.group(1))
    ]
    return found


def _titled(name: str, lead: str, text: str, at: int) -> bool:
    """Whether ``name`` is part of a heading in title case (``PARTICIPLE``, ``TITLE_WORD``):
    after or starting with an everyday participle, or before a capitalised function word."""
    first = name.split()[0]
    participle = any(PARTICIPLE.match(w) and w.lower() in common_words() for w in (lead, first))
    after = TITLE_WORD.match(text, at + len(name))
    return bool(participle or after and after.group(1).lower() in STOPWORDS)


def _cjk(text: str) -> list[Entity]:
    found: list[Entity] = []
    for pattern, kind in (
        (CJK_PERSON, "person"),
        (KOREAN_PERSON, "person"),
        (CJK_PLACE, "place"),
        *([(JAPANESE_CAPITAL, "place")] if KANA.search(text) else []),
        (CJK_ORG, "project"),
        (CJK_TITLE, "thing"),
    ):
        found += [Entity(m.group(1), kind) for m in pattern.finditer(text)]
    # a katakana word is a loanword as often as a name (コミット "commit", テーブル "table"):
    # a thing, not a tool of the profile's stack (Japanese writes its tools' names in Latin)
    found += [Entity(m.group(0), "thing") for m in KATAKANA.finditer(text)]
    return found


def _unless_person(match: re.Match[str]) -> str:
    """A greeting of software ("Hey Claude") without the name; of anyone else, as is."""
    return match.group(0) if canonical(match.group(1)) is None else ""


def entities(text: str, project: str = "") -> list[Entity]:
    """Every entity ``text`` names, once each (by key), in the order of the rules; a file
    by its path in ``project`` (the directory its session ran in) when the text gives the
    absolute one ("/Users/ann/shop/app/main.py" of shop is "app/main.py", as a digest's
    files are named: one entity, not two, and no home directory in the graph)."""
    who = speaker(text)  # a digest's heading is no speaker, nor its title once bare
    text = ADDRESSED.sub(_unless_person, CHECK_DAY.sub("", DIGEST_HEAD.sub("", text)))
    if cjk_count(text):
        text = SCRIPT_EDGE.sub(" ", text)
    found: list[Entity] = []
    if who:
        found.append(Entity(who, "person"))
    # a clone URL's ".git" is no part of the name ("github.com/a/b.git" is a/b: one entity)
    found += [
        Entity(m.group(1).removesuffix(GIT_SUFFIX), "repository") for m in REPOSITORY.finditer(text)
    ]
    paths = [m.group(0) for m in FILE.finditer(text)]
    for path in paths:
        inside = _in_project(path, project)  # the absolute path stays its alias
        found.append(Entity(inside, "file", (path,) if inside != path else ()))
    commands = ((m.group(1) or m.group(2)).strip() for m in COMMAND.finditer(text))
    # a code span that is only a flag (`--no-verify`, `-v`) is part of a command, not one;
    # one that is only a path is that file
    found += [
        Entity(c, "command")
        for c in commands
        if not c.endswith(CUT) and c[0] != "-" and c not in paths
    ]
    found += [Entity(m.group(1) or m.group(2), "project") for m in PROJECT.finditer(text)]
    found += [Entity(m.group(0), "date") for m in DATE.finditer(text)]
    found += _vocabulary(text)
    dates = {key(e.name) for e in found if e.kind == "date"}
    said = SPEAKER.sub("", text, count=1)  # "Maria: Sounds like...": "Sounds" starts a sentence
    outside = SPEAKER.sub("", CODE_TEXT.sub(CODE_MARK, text), count=1)
    files = {key(e.name) for e in found if e.kind == "file"}  # "├── Justfile": no one
    skip = {*dates, *(w for d in dates for w in d.split()), *files}
    found += _capitalised(said, skip, outside)
    if cjk_count(text):
        found += _cjk(text)
    seen: dict[str, Entity] = {}
    for entity in found:
        known = seen.setdefault(key(entity.name), entity)
        if known is not entity and entity.spelled:
            forms = tuple(dict.fromkeys((*known.spelled, *entity.spelled)))
            seen[key(entity.name)] = Entity(known.name, known.kind, forms)
    return list(seen.values())


def _object(phrase: str, known: list[Entity]) -> Entity | None:
    """What a first-person verb is about: a known entity it starts with, else its first
    ``OBJECT_WORDS`` words (from the first content word), as a thing."""
    phrase = ARTICLES.sub("", OBJECT_END.sub("", f" {phrase.strip()} ").strip())
    if not phrase or phrase.split()[0].lower() in CLAUSE:
        return None
    for entity in known:  # "Sweden four years ago": Sweden; "LGBTQ support group": not LGBTQ
        rest = key(phrase).removeprefix(key(entity.name))
        whole = not rest or rest[0] == " " and rest.split()[0] in STOPWORDS
        if rest != key(phrase) and (whole or rest[0] == " " and entity.kind in NAMED_KINDS):
            return entity
    words = phrase.split()[:OBJECT_WORDS]
    for size in range(len(words), 0, -1):
        named = canonical(" ".join(words[:size]))
        if named:
            return named
    while words and (words[-1].lower() in STOPWORDS or words[-1].lower() in TRAILING):
        words.pop()
    if not words or all(w.lower() in STOPWORDS or w.lower() in VAGUE for w in words):
        return None
    text = " ".join(words)
    return canonical(text) or Entity(text, "thing")


def project_triples(text: str, project: str, folder: str = "") -> list[Triple]:
    """What a distilled coding fact says of its project: "tests run with `mix test`" ->
    project → tests run with → mix test; "`cmd` failed: … → fixed by editing a.ex and
    `mix format`" -> cmd → fixed by → a.ex, cmd → fixed by → mix format; a digest's
    "Edited: a.ex; b.ex" -> project → edited → a.ex, project → edited → b.ex (a file by its
    path in ``folder``, the directory the session ran in, else in the project's)."""
    found: list[Triple] = []
    owner = Entity(project, "project")
    for match in RUNS_WITH.finditer(text):
        command = Entity(match.group(2).strip(), "command")
        found.append(Triple(owner, f"{match.group(1).lower()} run with", command))
    for match in FIXED_BY.finditer(text):
        if match.group(1).strip().endswith(CUT):
            continue
        failed = Entity(match.group(1).strip(), "command")
        fix = match.group(2)
        edited = BACKTICKED.sub(" ", fix)  # a file named inside a command was not edited
        fixes = [Entity(m.group(0), "file") for m in FILE.finditer(edited)]
        fixes += [
            Entity(m.group(1).strip(), "command")
            for m in BACKTICKED.finditer(fix)
            if not m.group(1).strip().endswith(CUT)
        ]
        found += [Triple(failed, "fixed by", e) for e in fixes if e.name != failed.name]
    for match in DIGEST_WORK.finditer(text):
        kind, predicate = DIGEST_KINDS[match.group(1)], match.group(1).lower()
        for item in digest_items(match.group(2)):
            if item.strip() and not item.endswith(CUT):
                name = (
                    _in_project(item.strip(), folder or project) if kind == "file" else item.strip()
                )
                found.append(Triple(owner, predicate, Entity(name, kind)))
    return found


def digest_items(text: str) -> list[str]:
    """A digest line's items (``ITEM_SEPARATOR`` outside brackets and code spans)."""
    found, start, depth, code = [], 0, 0, False
    for at, char in enumerate(text):
        if char == "`":
            code = not code
        elif not code:
            depth += (char in OPENING) - (char in CLOSING and depth > 0)
        if text.startswith(CUT_ITEM, at - 1) or (
            not code and not depth and text.startswith(ITEM_SEPARATOR, at)
        ):
            found.append(text[start:at])
            start, depth, code = at + len(ITEM_SEPARATOR), 0, False
    return [*found, text[start:]]


def _in_project(path: str, project: str) -> str:
    """A file of the project by its path in it: "/home/ann/src/shop/app/main.py" of shop is
    "app/main.py", the name its sessions' relative paths give it (one entity, not two)."""
    inside = path.partition(f"/{project}/")[2] if project else ""
    return inside if path.startswith(("/", "~")) and inside else path


def triples(
    text: str, user: str = "user", project: str | None = None, folder: str = ""
) -> list[Triple]:
    """The triples ``text`` states: first-person statements of its speaker (``user`` when
    it has none), short verb phrases between two entities of one sentence and, with a
    ``project``, what a coding fact says of it (``project_triples``)."""
    known = entities(text, folder or project or "")
    who = speaker(text)
    subject = next((e for e in known if e.name == who), None) if who else Entity(user, "person")
    found: dict[tuple[str, str, str], Triple] = {}
    said = [(subject, FIRST_PERSON)] if subject is not None else []
    said += [
        (e, re.compile(rf"\b{re.escape(e.name)}{STATEMENT}"))
        for e in known
        if e.kind == "person" and e.name != who
    ]
    for who_said, pattern in said:
        for match in pattern.finditer(text):
            target = _object(match.group(2), known)
            if target is not None and key(target.name) != key(who_said.name):
                predicate = match.group(1).lower()
                found.setdefault(
                    (key(who_said.name), predicate, key(target.name)),
                    Triple(who_said, predicate, target),
                )
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        here = [e for e in known if e.name in sentence and e.kind != "date"]
        here.sort(key=lambda e: sentence.find(e.name))
        for left, right in zip(here, here[1:], strict=False):
            start = sentence.find(left.name) + len(left.name)
            middle = BETWEEN.match(sentence[start : sentence.find(right.name, start)])
            if middle:
                predicate = middle.group(1).lower()
                found.setdefault(
                    (key(left.name), predicate, key(right.name)), Triple(left, predicate, right)
                )
    for triple in project_triples(text, project, folder) if project else []:
        found.setdefault(
            (key(triple.subject.name), triple.predicate, key(triple.object.name)), triple
        )
    return list(found.values())
