"""Reconcile without an LLM: similarity thresholds and subject/slot matching.

For a fact and its most similar stored memory (cosine similarity ``sim``):

- nothing stored, or ``sim < reconcile.related_similarity``: CREATE;
- ``sim >= reconcile.duplicate_similarity``, or the same text: SKIP;
- a project's command for a purpose (``extract_actions``: "type checks run with `uv run
  pyright`") and a later one for the same purpose, on the whole project, by another
  program of the same language ("… with `uv run ty check`"): SUPERSEDE
  (``replaced_command``): the project changed how it does that; a command of another
  language (``npm test`` beside ``mix test``) may run beside it, and stays;
- the runtime version a project runs on ("a nuxt 2.10 app running in node 18") and a later
  statement of another version of it ("we should be running node 22"): SUPERSEDE
  (``replaced_version``): the project moved; a runtime named after a contrast ("…, but this
  shell did open with node 23") is what happened, not what the project runs on;
- events and cases: CREATE (they are records, never rewritten), but a failure and its
  fix that a stored case states (``same_case``: the same program failed with the same
  error and was fixed the same way, "`git commit …` failed: … → fixed by adding
  `--no-verify`") is SKIPped: the later session is one more source of the case, not a
  second copy of it;
- about the same thing (``sim >= reconcile.match_similarity``, or the same
  slot, e.g. "my editor is vim" / "my editor is helix", "we deploy with make" /
  "we deploy with fly"):
  a profile fact MERGEs; opposite polarity ("I like X" / "I don't like X") or
  the same slot with another value CONTRADICTs (for temporal categories the
  caller turns that into SUPERSEDE); a fact holding every word of the memory
  and more MERGEs (it adds detail); at ``reconcile.support_similarity`` it
  SUPPORTs;
- a related fact with a qualifier (when, unless, except, only, but, ...)
  CONTEXTUALIZEs;
- anything else is CREATEd.

The preference slot guard runs before any of this, and before the LLM: two
preferences for the same brand and different items ("likes Starbucks latte",
"likes Starbucks americano") are different memories, so the fact is CREATEd.
"""

from __future__ import annotations

import re

from memctl.config import Settings
from memctl.ingest.facts import Decision, Fact, Verdict
from memctl.ingest.tools import command_steps, program_words, shell_command
from memctl.lazy_re import lazy
from memctl.memories.statements import negated, normalised, prose, replaced
from memctl.model import Category, Memory

QUALIFIER = lazy(
    r"\b(?:when|whenever|unless|except|only|but|if|while|during|because|although)\b"
    r"|但是|除了|如果|只有|只在|因为|不过",
    re.I,
)
# Workflow verbs whose means is one choice at a time; "also", "too" add one beside it.
# What it is done to ("we deploy the shop with ...") names the slot with the verb.
TOOL_VERBS = (
    r"(deploy|release|ship|build|test|lint|format|host|package|publish|bundle|compile|"
    r"migrate|monitor|provision|back up)(?:s|ed)? ((?:[\w'-]+ ){0,3}?)(with|using|via|through) "
    r"(?!.*\b(?:also|too|as well)\b)(.+)"
)
# Words that name no object of their own: "we deploy it with", "we test everything with".
NO_OBJECT = frozenset({"the", "a", "an", "it", "this", "that", "them", "everything", "all"})
SLOTS = (
    (lazy(r"\bmy name is\s+(.+)", re.I), "name"),
    (lazy(r"\b(?:I|we)(?: currently)? (?:live|am based|are based) in\s+(.+)", re.I), "home"),
    (lazy(r"\b(?:I|we) work (?:at|for)\s+(.+)", re.I), "employer"),
    # how the team does a piece of its work, by what means: "we deploy with make release",
    # then "we deploy with fly deploy" is another value; where (to, on) may be several
    (lazy(r"\b(?:I|we)(?: (?:now|currently|usually|always|normally))? " + TOOL_VERBS, re.I), ""),
    (lazy(r"我(?:住在|来自)(.+)"), "home"),
    (lazy(r"我叫(.+)|我的名字(?:是|叫)(.+)"), "name"),
)
ATTRIBUTE = lazy(
    r"\b(?:my|our|the user's|his|her|their) ([a-z][\w-]*(?: [a-z][\w-]*){0,2}) "
    r"(?:is|are|was|=|:) (.+)",
    re.I,
)
# a thing's attribute: "The shop's database is PostgreSQL 15" (its owner names the slot too)
ATTRIBUTE_OF = lazy(
    r"\b(?!(?:it|that|what|there|here|he|she|who|where|let|one)'s\b)([a-z][\w-]*)'s "
    r"([a-z][\w-]*(?: [a-z][\w-]*){0,2}) (?:is|are|was|=|:) (.+)",
    re.I,
)
ATTRIBUTE_ZH = lazy(r"我的(.{1,10}?)是(.+)")
# A preference of one choice ("I prefer tabs for indentation"): what it is for names the slot;
# a clause naming what it replaces ("over spaces") or why ("because ...") is no part of it.
PREFERRED = lazy(r"\b(?:I|we)(?: \w+)? prefers? (.+)", re.I)
CLAUSE = lazy(
    r"\s+(?=(?:for|in|on|with|when|while|over|than|to|instead|rather|because|since|as)\b)"
    r"|\s*[,.;!:()]\s*",
    re.I,
)
PURPOSE = lazy(r"(?:for|in|on|with|when|while)\b", re.I)
PREFER = "prefer"  # the slot of a preference that says nothing of what it is for
PREFERENCE = lazy(
    r"\b(?:like|likes|love|loves|prefer|prefers|enjoy|enjoys|favou?rite \w+ is)\s+(.+?)"
    r"(?:\s+(?:over|than|because|when|for|instead)\b|[.,;!]|$)",
    re.I,
)
PREFERENCE_ZH = lazy(r"(?:喜欢|爱喝|爱吃|偏爱|偏好)(.+?)(?:[，。,.!！]|$)")
CJK = lazy(r"[\u3400-\u9fff]")
# A case the digest's tool calls make (``digest._changes``): "`CMD` failed: ERROR → fixed by FIX"
CASE_LINE = lazy(r"^`(?P<command>[^`]+)` failed: (?P<error>.+?) → fixed by (?P<fix>.+)$", re.S)
EXIT_STATUS = lazy(r"^exit -?\d+:\s*")  # the status a shell's error opens with
# An error that says less than this (bare "exit 137:", "1 fail") names no failure of its own:
# two such cases are not known to be one (the same program fails in many ways)
MIN_CASE_ERROR_LETTERS = 20
# A project command fact (``extract_actions.CheckRun.text``): its purpose, whether it ran on a
# part only, the command line
COMMAND_LINE = lazy(r"^(?P<purpose>[a-z][a-z ]+?)(?P<part>, on .+? only,)? with `(?P<line>[^`]+)`")
# The language a check program (or the runner before it) belongs to: two commands of one
# language for one purpose are one choice the project made (its tests run with pytest or
# with `uv run pytest`; type checks with mypy, pyright or ty), two of different languages
# may both hold (a Phoenix app's `mix test` and its assets' `npm test`). The programs are
# those ``tools.PURPOSES`` and ``tools.RUNNERS`` name, with their languages' package managers.
LANGUAGES = {
    program: language
    for language, programs in (
        (
            "python",
            "python python3 pytest mypy pyright ty ruff black flake8 pylint pyre pytype tox nox "
            "uv poetry pipenv hatch pdm isort",
        ),
        (
            "javascript",
            "npm pnpm yarn bun npx bunx node deno jest vitest mocha tsc eslint prettier",
        ),
        ("elixir", "mix"),
        ("rust", "cargo rustfmt"),
        ("go", "go gofmt golangci-lint"),
        ("ruby", "bundle rake rspec rubocop ruby rails"),
        ("php", "composer phpunit php"),
        ("java", "gradle gradlew mvn mvnw"),
        ("dotnet", "dotnet"),
    )
    for program in programs.split()
}


# The runtime a project runs on, and its version, as a statement says it: "a nuxt 2.10 app
# running in node 18", "we should be running node 22", "the API runs on Python 3.12",
# "requires Ruby 3.3" (the runtimes ``rules_english``'s version rule names, with their
# usual companions); a version glued to the name ("python3.12") counts, a program's name
# ("python3") does not. Only the claim before a contrast counts: "The nvm default is 22, but
# this shell did open with node 23" says what a shell did, not what the project runs on.
RUNS_ON = lazy(
    r"\b(?:runs?|running|run|targets?|targeting|requires?|requiring|(?:is|are|'s|'re) on)"
    r"\s+(?:(?:on|in|under|with)\s+)?"
    r"(python|node(?:\.?js)?|ruby|go|java|php|deno|bun|elixir|erlang|dotnet|\.net)"
    r"(?:\s*v|\s+|(?=\d+\.\d))(\d+(?:\.\d+)*)\b",
    re.I,
)
CONTRAST = lazy(r"[,;]?\s+(?:but|although|though|however|whereas|yet)\b|;", re.I)


def words(text: str) -> set[str]:
    """Lower-cased words; each CJK character counts as a word."""
    found = set(re.findall(r"[^\W\u3400-\u9fff]+", text.lower()))
    return found | set(CJK.findall(text))


def slot(text: str) -> tuple[str, str] | None:
    """(slot, value) a text sets, e.g. ("editor", "vim") for "My editor is vim"."""
    for pattern, name in SLOTS:
        found = pattern.search(text)
        if found and not name:  # the slot is named by the text: its verb, on what, by what
            verb, done_to, _means, value = found.groups()
            object_ = [w for w in normalised(done_to).split() if w not in NO_OBJECT]
            return " ".join([verb.lower(), *object_, "with"]), normalised(value)
        if found:
            value = next(g for g in found.groups() if g)
            return name, normalised(value)
    for pattern in (ATTRIBUTE, ATTRIBUTE_ZH):
        found = pattern.search(text)
        if found:
            return normalised(found.group(1)), normalised(found.group(2))
    found = ATTRIBUTE_OF.search(text)
    if found:
        return normalised(f"{found.group(1)} {found.group(2)}"), normalised(found.group(3))
    return preferred(text)


def preferred(text: str) -> tuple[str, str] | None:
    """("prefer" and what for, the choice) of "I prefer tabs for indentation, not spaces"."""
    found = PREFERRED.search(text)
    if not found:
        return None
    parts = [c for c in CLAUSE.split(found.group(1)) if c]
    if not parts:
        return None
    choice, *clauses = parts
    purpose = []
    for clause in clauses:
        if not PURPOSE.match(clause):
            break
        purpose.append(normalised(clause))
    return " ".join([PREFER, *purpose]), normalised(choice)


def extends(value: str, old: str) -> bool:
    """The new value is the old with more detail ("make release from main" of "make release")."""
    return value.split()[: len(old.split())] == old.split()


def preference_object(text: str) -> list[str] | None:
    """What a preference is for, as words (CJK: characters): ["starbucks", "latte"]."""
    found = PREFERENCE.search(text) or PREFERENCE_ZH.search(text)
    if not found:
        return None
    item = found.group(1).strip()
    if CJK.search(item):
        return [c for c in item if not c.isspace()]
    return re.findall(r"\w+", item.lower())


def slot_guard(fact: str, memory: str) -> bool:
    """Same brand, different item: both objects start alike and then differ."""
    a, b = preference_object(fact), preference_object(memory)
    if not a or not b or a == b:
        return False
    shared = 0
    while shared < min(len(a), len(b)) and a[shared] == b[shared]:
        shared += 1
    brand = shared >= (2 if CJK.search("".join(a)) else 1)
    return brand and shared < len(a) and shared < len(b)


def _case_parts(text: str) -> tuple[str, str, str] | None:
    """(the failing program, its error, the fix) of a case line, else None."""
    found = CASE_LINE.match(text)
    if found is None:
        return None
    key = shell_command(found.group("command")).key
    error = normalised(EXIT_STATUS.sub("", found.group("error")))
    if not key or sum(c.isalpha() for c in error) < MIN_CASE_ERROR_LETTERS:
        return None
    return key.split()[0], error, normalised(found.group("fix"))


def same_case(fact: str, memory: str) -> bool:
    """Both texts are cases of one failure fixed one way: the same program failed with the
    same error (one that says something) and the same fix followed, whatever else the
    command lines held (the repiq sessions' three commits, each refused by one pre-commit
    hook and each made with `--no-verify`)."""
    parts = _case_parts(fact)
    return parts is not None and parts == _case_parts(memory)


def _command_parts(text: str) -> tuple[str, bool, str, str] | None:
    """(purpose, ran on a part only, language, program) of a command fact."""
    found = COMMAND_LINE.match(text)
    if found is None:
        return None
    step = command_steps(found.group("line"))[-1]  # the last step does the work
    words = step.split()
    names = [w.rsplit("/", 1)[-1] for w in [*words[:1], *program_words(words)[:1]]]
    language = next((LANGUAGES[n] for n in reversed(names) if n in LANGUAGES), "")
    return found.group("purpose"), bool(found.group("part")), language, shell_command(step).key


def replaced_command(fact: str, memory: str) -> bool:
    """``fact`` does what ``memory``'s command did (the same purpose, on the whole project,
    in the same language) with another program: "type checks run with `uv run ty check`"
    after "type checks run with `uv run pyright`". The same program run with other
    arguments (``pytest -m unit``, ``go build ./...``) is another run of the same choice."""
    new, old = _command_parts(fact), _command_parts(memory)
    if new is None or old is None or new[1] or old[1] or not new[2]:
        return False
    return new[0] == old[0] and new[2] == old[2] and new[3] != old[3]


def runtime_version(text: str) -> tuple[str, str] | None:
    """(the runtime, its version) a statement says the project runs on, when it names one
    (``RUNS_ON``) in its claim, before any contrast, and does not deny it."""
    claim = CONTRAST.split(prose(text), maxsplit=1)[0]
    found = RUNS_ON.findall(claim)
    if len(found) != 1 or negated(claim):
        return None
    name, version = found[0]
    return name.lower().removesuffix("js").rstrip("."), version


def replaced_version(fact: str, memory: str) -> bool:
    """``fact`` says the project runs on another version of the runtime ``memory`` names:
    "we should be running node 22" after "a nuxt 2.10 app running in node 18". A version
    that only adds detail ("node 18.19" of "node 18") is the same one."""
    new, old = runtime_version(fact), runtime_version(memory)
    if new is None or old is None or new[0] != old[0]:
        return False
    parts, before = new[1].split("."), old[1].split(".")
    shared = min(len(parts), len(before))
    return parts[:shared] != before[:shared]


def decide(fact: Fact, memory: Memory | None, similarity: float, s: Settings) -> Decision:
    """The verdict on a fact given its most similar memory (None when nothing is stored)."""

    def verdict(kind: Verdict, reason: str) -> Decision:
        target = memory.id if memory is not None and kind != Verdict.CREATE else None
        return Decision(kind, fact, target, reason=reason)

    if memory is None or similarity < s.reconcile_related_similarity:
        return verdict(Verdict.CREATE, "nothing similar stored")
    if similarity >= s.reconcile_duplicate_similarity or normalised(fact.content) == normalised(
        memory.content
    ):
        return verdict(Verdict.SKIP, f"already stored (similarity {similarity:.2f})")
    if fact.category in (Category.EVENTS, Category.CASES):
        return verdict(Verdict.CREATE, f"{fact.category} are only created or skipped")
    matched = similarity >= s.reconcile_match_similarity
    memory_slot = slot(memory.content)
    old = replaced(fact.content)
    # what it replaces is what the memory says: its slot's value, or a memory about the same
    if old and words(old) <= words(memory_slot[1] if memory_slot else memory.content):
        if (memory_slot or matched) and not replaced(memory.content):
            return verdict(Verdict.SUPERSEDE, f"says it replaces '{old}'")
    slot_name = same_slot(slot(fact.content), memory_slot, matched)
    if matched or slot_name:
        changed = slot_name and slot_verdict(slot_name, fact, memory)
        if changed:
            return verdict(*changed)
        if fact.category == Category.PROFILE and memory.category == Category.PROFILE:
            return verdict(Verdict.MERGE, "profile facts about the same thing merge")
        if negated(fact.content) != negated(memory.content):
            return verdict(Verdict.CONTRADICT, "same subject, opposite polarity")
        if words(memory.content) < words(fact.content):
            return verdict(Verdict.MERGE, "adds detail to the memory")
        if similarity >= s.reconcile_support_similarity:
            return verdict(Verdict.SUPPORT, f"confirms the memory (similarity {similarity:.2f})")
    if QUALIFIER.search(fact.content):
        return verdict(Verdict.CONTEXTUALIZE, "qualifies a related memory")
    return verdict(Verdict.CREATE, f"related but distinct (similarity {similarity:.2f})")


def same_slot(
    fact: tuple[str, str] | None, memory: tuple[str, str] | None, matched: bool
) -> str | None:
    """The slot both texts set, if any; a bare "I prefer X" names none of its own, so it
    counts only between texts about the same thing (``matched``)."""
    if fact is None or memory is None or fact[0] != memory[0]:
        return None
    return fact[0] if fact[0] != PREFER or matched else None


def slot_verdict(name: str, fact: Fact, memory: Memory) -> tuple[Verdict, str] | None:
    """Two texts setting one slot: another value replaces, a longer one ("make release from
    main" after "make release") adds detail; the same value is left to the other rules."""
    (_, value), (_, old) = slot(fact.content) or ("", ""), slot(memory.content) or ("", "")
    if negated(fact.content) != negated(memory.content):
        return Verdict.CONTRADICT, "same subject, opposite polarity"
    if value == old:
        return None
    if extends(value, old):
        return Verdict.MERGE, f"adds detail to '{name}'"
    return Verdict.CONTRADICT, f"another value for '{name}'"


def another_value(fact: str, memory: str) -> bool:
    """Both texts set one slot, to different values."""
    a, b = slot(fact), slot(memory)
    return a is not None and b is not None and a[0] == b[0] and a[1] != b[1]


def replaces(fact: str, memory: str) -> bool:
    """By the slot rules alone, with no similarity: the fact sets another value of the slot
    the memory sets, or names the memory's value as what it replaces (``remember``'s test,
    where the user states the fact in so many words)."""
    new, old = slot(fact), slot(memory)
    if old is None or negated(fact) != negated(memory) and not replaced(fact):
        return False
    said = replaced(fact)
    if said and words(said) <= words(old[1]) and not replaced(memory):
        return True
    if new is None or new[0] != old[0] or new[0] == PREFER:
        return False
    # the same value with more detail, or with less: the memory's value starts with the
    # fact's ("make release from main" and a memory "make release from main. We deploy
    # Tidepool with `make release`..."): it says what the memory says, not another value
    return new[1] != old[1] and not extends(new[1], old[1]) and not extends(old[1], new[1])
