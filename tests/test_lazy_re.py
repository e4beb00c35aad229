"""Patterns compiled on first use (memctl.lazy_re) behave as compiled ones, and importing the
rule modules compiles none of them (each memctl process imports them; most never try one)."""

from __future__ import annotations

import re

from memctl.lazy_re import lazy
from tests.conftest import python_c

RULE_MODULES = (
    "memctl.ingest.entities",
    "memctl.ingest.tools",
    "memctl.memories.injected",
    "memctl.memories.told_back",
    "memctl.memories.statements",
    "memctl.ingest.reconcile_rules",
    "memctl.ingest.extract_rules",
    "memctl.ingest.rule_sentences",
    "memctl.ingest.rules_english",
    "memctl.ingest.rules_cjk",
    "memctl.ingest.rules_stated",
    "memctl.ingest.noise",
    "memctl.ingest.digest",
    "memctl.ingest.summary",
    "memctl.ingest.claims",
    "memctl.ingest.parse",
    "memctl.memories.privacy",
    "memctl.retrieve.when",
    "memctl.api.sessions",
)


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    source, flags, text = r"(?P<word>de\w+)\s+(\d+)", re.I, "Deploy 3 times, deploys 12"
    made, compiled = lazy(source, flags), re.compile(source, flags)
    assert made.search(text).groupdict() == compiled.search(text).groupdict()  # type: ignore[union-attr]
    assert [m.span() for m in made.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert made.sub(r"\2", text) == compiled.sub(r"\2", text) == "3 times, 12"
    assert made.split(text) == compiled.split(text)
    assert (made.pattern, made.flags, made.groups) == (source, compiled.flags, 2)
    assert made.search == made.search  # kept: the compiled pattern's own method


def test_importing_the_rule_modules_compiles_no_pattern() -> None:
    probe = (
        "import importlib, re, sys\n"
        f"for name in {RULE_MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        "def found(value, depth=0):\n"
        "    if isinstance(value, re.Pattern) or '_compiled' in getattr(value, '__dict__', {}):\n"
        "        yield value\n"
        "    elif depth < 2 and isinstance(value, (tuple, list)):\n"
        "        for item in value:\n"
        "            yield from found(item, depth + 1)\n"
        "    elif depth < 2 and hasattr(value, '__dataclass_fields__'):\n"
        "        yield from found(tuple(vars(value).values()), depth + 1)\n"
        "for name, module in sorted(sys.modules.items()):\n"
        "    if name.startswith('memctl.'):\n"
        "        for key, value in vars(module).items():\n"
        "            for hit in found(value):\n"
        "                print(name, key, hit)\n"
    )
    done = python_c(probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_a_forking_process_compiles_the_loaded_patterns_once() -> None:
    """The resident process compiles the loaded modules' lazy patterns before it forks, so
    that no child compiles one again."""
    probe = (
        "import memctl.ingest.entities as entities\n"
        "from memctl.lazy_re import compile_loaded\n"
        "assert '_compiled' not in vars(entities.CLAUSE_START)\n"
        "print(compile_loaded() > 0, '_compiled' in vars(entities.CLAUSE_START), compile_loaded())"
    )
    done = python_c(probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "0"]


def test_the_patterns_of_a_table_of_rules_are_compiled_before_a_fork() -> None:
    """compile_loaded also reaches the patterns a module keeps in a list of (pattern, rule)
    pairs: every recall reads the time rules (retrieve/when.py), and a resident child
    compiled them all again (about 3 ms of each recall)."""
    probe = (
        "import memctl.retrieve.when as when\n"
        "from memctl.lazy_re import compile_loaded\n"
        "compile_loaded()\n"
        "print(all('_compiled' in vars(p) for p, _ in [*when.RULES, *when.DATES]))"
    )
    done = python_c(probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"]
