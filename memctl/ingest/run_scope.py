"""What part of a project a check command ran on, by the shape of its arguments.

A project's test, lint, formatting, type-check or build command is the one that runs on
the whole project: ``npm test``, ``uv run pytest``, ``go test ./...``, ``ruff check src``.
A run that names a source file or a glob of files (``npm test -- --run src/a.test.ts``,
``ruff format app/x.py``), a test id (``tests/test_a.py::test_b``, ``spec/a_spec.rb:12``)
or a filter by name (``pytest -k retry``, ``go test -run TestRetry``, ``jest -t retries``)
ran on a part of it, whatever the runner; so did one that picks pytest markers (``-m
browser``). A directory names no part by its shape (``pytest tests`` is the suite), nor
does a configuration file (``tsc -p tsconfig.json``) or a marker expression that only
leaves tests out (``pytest -m "not slow"``). Runners that read a bare argument as a
pattern of test names or test files (``cargo test expiry``, ``jest retries``, ``vitest run
cart``) ran on a part of it when given one.
"""

from __future__ import annotations

import re

from memctl.ingest.tools import program_words
from memctl.lazy_re import lazy

# a source or test file (its line after a colon: rspec's and mix's test id)
SOURCE_FILE = lazy(
    r"\.(?:py|pyi|ts|tsx|mts|cts|js|jsx|mjs|cjs|go|rs|rb|ex|exs|erl|java|kt|kts|scala|swift|"
    r"php|cs|fs|c|cc|cpp|h|hpp|vue|svelte|dart|lua|hs|clj|feature)(?::\d+)*$",
    re.I,
)
TEST_ID = "::"  # pytest's node id, a Rust test path
GLOB = "*"
# options that pick tests by name: pytest -k, jest / vitest -t and the long forms, go test
# -run, mocha and playwright --grep, gradle --tests, maven -Dtest, mix test --only, ava
# --match, rspec --example
FILTERS = frozenset(
    {
        "-k",
        "-t",
        "--testNamePattern",
        "--testPathPattern",
        "--testPathPatterns",
        "-run",
        "--grep",
        "--tests",
        "-Dtest",
        "--only",
        "--match",
        "--example",
    }
)
# pytest's marker expression: a part of the suite ("-m browser"), unless it only leaves some
# out ("-m 'not slow'", the suite a project runs every time)
MARKERS = "-m"
LEAVES_OUT = "not"
# options whose value is a configuration or project file or a directory to run in
CONFIG_OPTIONS = frozenset(
    {"-c", "--config", "--config-file", "-p", "--project", "--manifest-path", "-f", "--file"}
    | {"--rootdir", "-C", "--cov-config"}
)
# programs whose first argument is the script they run, not a file it works on
INTERPRETERS = frozenset("python python3 node ruby bash sh zsh php perl".split())
# options that print something about the runner and run no check ("pytest --markers")
INFORMATION = frozenset(
    {"--help", "-h", "--version", "-V", "--markers", "--fixtures", "--collect-only", "--co"}
    | {"--listTests", "--list"}
)
# runners whose bare argument is a pattern of test names (cargo's filter) or of test files
# (jest's and vitest's), not a path to run in; their own subcommands ("cargo test", "vitest
# run") and the words after an option (its value, perhaps) are no pattern
PATTERN_RUNNERS = frozenset({"cargo", "jest", "vitest"})
PATTERN_RUNNER_SUBCOMMANDS = frozenset({"test", "run", "watch", "related"})
OPTIONS_END = "--"
REDIRECTION = lazy(r"^\d*[<>]")  # "2>&1", ">log.txt": the shell's, not the runner's
ONE_FILE = "one file"
SELECTED_FILES = "selected files"
SELECTED_TESTS = "selected tests"


def _arguments(step: str) -> list[str]:
    """The words after the program (runners and settings skipped) and, for an interpreter,
    after its script; unquoted."""
    words = [w.strip("'\"") for w in program_words(step.split())]
    if not words:
        return []
    if words[0].rsplit("/", 1)[-1] not in INTERPRETERS:
        return words[1:]
    script = next((n for n, w in enumerate(words) if n and not w.startswith("-")), len(words))
    return words[script + 1 :]


def _names_a_pattern(step: str) -> bool:
    """A pattern runner (``PATTERN_RUNNERS``), run directly or through a package manager
    (``yarn jest``), was given a bare pattern argument."""
    words = [w.strip("'\"") for w in program_words(step.split())]
    runner = next(
        (n for n, w in enumerate(words[:2]) if w.rsplit("/", 1)[-1] in PATTERN_RUNNERS), None
    )
    if runner is None:
        return False
    after = words[runner + 1 :]
    while after and after[0] in PATTERN_RUNNER_SUBCOMMANDS:
        after = after[1:]
    return any(
        not word.startswith("-")
        and not REDIRECTION.match(word)
        and not (n and after[n - 1].startswith("-") and after[n - 1] != OPTIONS_END)
        for n, word in enumerate(after)
    )


def run_scope(step: str) -> str:
    """The part of the project a run ran on: "" for the whole, else ``ONE_FILE``,
    ``SELECTED_FILES`` or ``SELECTED_TESTS`` (see the module's docstring)."""
    words = _arguments(step)
    files = 0
    for n, word in enumerate(words):
        if word.partition("=")[0] in FILTERS:
            return SELECTED_TESTS
        if word == MARKERS and words[n + 1 : n + 2] not in ([], [LEAVES_OUT]):
            return SELECTED_TESTS
        if word.startswith("-") or (n and words[n - 1] in CONFIG_OPTIONS):
            continue
        if TEST_ID in word:
            return SELECTED_TESTS
        if GLOB in word:
            files += 2  # a glob names several
        elif SOURCE_FILE.search(word):
            files += 1
    if not files:
        return SELECTED_TESTS if _names_a_pattern(step) else ""
    return ONE_FILE if files == 1 else SELECTED_FILES


def only_informs(step: str) -> bool:
    """The run printed something about its runner (``pytest --markers``, ``jest --help``)
    and checked nothing."""
    return any(word in INFORMATION for word in _arguments(step))
