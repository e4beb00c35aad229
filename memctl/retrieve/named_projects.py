"""The projects a question names: "how do I run the deep manifest tests?" asks about the
project whose directory (or repository) is ``deep-manifest``, wherever it is asked from.

A name of two or more parts (``deep-manifest``, ``claudeCodeLog``) is named when its parts
follow each other in the question, in any spelling ("deep manifest", "deep-manifest"). A
name of one word is also an ordinary word as often as not ("ideas", "assets", "spotter"):
it counts only where the question writes it as a name: capitalised where a sentence would
not be, quoted, or with a possessive ("spotter's tests"). Recall then searches that
project too and weighs its memories as the current project's (api.recall, scope stage).
"""

from __future__ import annotations

import re
from pathlib import PurePath

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.memories.projects import repo_name
from memctl.retrieve.query import IDENTIFIER, QUOTED, STOPWORDS, names, split_identifier
from memctl.store.projects import scope_dirs

# A one-word name shorter than this is too often a word or an abbreviation ("app", "api",
# "web") to stand for a project even when written as one.
MIN_NAME_CHARS = 4
POSSESSIVE = re.compile(r"(\w[\w.\-]*)['’]s\b")


def project_name_of(scope: str, cwd: str) -> str:
    """The name a person calls a project by: its repository's, else its directory's."""
    return repo_name(scope) or (PurePath(cwd).name if cwd else "")


def question_words(text: str) -> list[str]:
    """The question's words, identifiers split into their parts, lower case, in order."""
    return [part for token in IDENTIFIER.findall(text) for part in split_identifier(token)]


def written_as_names(text: str) -> set[str]:
    """The words ``text`` writes as names: capitalised mid-sentence, quoted or possessive."""
    quoted = [a or b for a, b in QUOTED.findall(text)]
    spans = [*names(text), *quoted, *POSSESSIVE.findall(text)]
    return {word for span in spans for word in question_words(span)}


def names_project(name: str, words: list[str], as_names: set[str]) -> bool:
    """Whether a question of ``words`` (``as_names``: those it writes as names) names a
    project called ``name``."""
    parts = split_identifier(name)
    if not parts or all(part in STOPWORDS or part.isdigit() for part in parts):
        return False
    if len(parts) == 1:
        (part,) = parts
        return len(part) >= MIN_NAME_CHARS and part in as_names
    return any(words[i : i + len(parts)] == parts for i in range(len(words) - len(parts) + 1))


def projects_named_in(ctx: Context, text: str) -> dict[str, str]:
    """The projects ``text`` names: scope -> its name (never the global scope)."""
    words = question_words(text)
    as_names = written_as_names(text)
    found = {}
    for scope, cwd in scope_dirs(ctx.db, skip=GLOBAL_SCOPE).items():
        name = project_name_of(scope, cwd)
        if names_project(name, words, as_names):
            found[scope] = name
    return found


def named_words(named: dict[str, str]) -> frozenset[str]:
    """The words of the projects' names: a question's name among them is no stranger."""
    return frozenset(part for name in named.values() for part in split_identifier(name))
