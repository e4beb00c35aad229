"""What a memory's file keeps of the folder its session ran in: nothing.

A project named by a folder goes to the repository under a keyed name
(``layout.shared_scope``); the folder's name must not reach teammates another way. The
graph names such a project by its folder ("acme-layoffs edited src/app.py"), and a digest
names the files a session touched by their absolute paths ("Edited:
/home/alice/acme-layoffs/src/app.py"): the user's name and the folder's. A file's text
names the session's folder as ``.`` and a path in it relative to it, as a teammate would
name it in their own copy; the memory here keeps its text as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import PurePath

from memctl.config.scope import LOCAL_REMOTE, PATH_SCOPE
from memctl.memories.projects import repo_name
from memctl.model import Memory

Triple = tuple[str, str, str]
# what stands for the session's folder in a file's text, as a shell names where it is
HERE = "."
# how a note shortens an absolute path (``ingest.tools.SHORT_PATH``): "…/acme-layoffs"
SHORTENED = "…/"
NAME_CHARS = r"[\w.@+-]"  # what a path's part is made of (``ingest.tools.LONG_PATH``)
# how a shell command or a person names the home folder in a path
HOME_SPELLINGS = ("~", "$HOME", "${HOME}")
# what stands for the session's folder's name where a sibling folder's name repeats it
# ("~/acme-layoffs-old", "../acme-layoffs_v2" -> "~/…-old", "../…_v2"): the sibling is
# another folder, kept as one, but its name says the project's
SIBLING = "…"
# what follows the folder's name in a sibling's: a separator or a digit, not a letter
# ("apps" beside "app" is no copy of it)
SIBLING_TAIL = r"[-_.@+\d]"
Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]  # (pattern, replacement)


def without_folder_names(
    triples: dict[str, list[Triple]], origins: dict[str, tuple[str, str, str]]
) -> dict[str, list[Triple]]:
    """Each memory's triples but those naming a project by its folder: the project of a
    memory made in a project named by a folder (its scope or its session's; ``origins``:
    ``store.graph.memory_origins``), which the graph names by the folder's last part."""
    kept = {}
    for memory_id, stated in triples.items():
        names = folder_names(*origins.get(memory_id, ("", "", "")))
        kept[memory_id] = [t for t in stated if not names & {t[0].lower(), t[2].lower()}]
    return kept


def folder_names(scope: str, session_scope: str, cwd: str) -> set[str]:
    """The names the graph may give a project named by a folder (``ingest.graph``): the
    folder its session ran in and the last part of such a scope; none for another."""
    named = [s for s in (scope, session_scope) if s.startswith((LOCAL_REMOTE, PATH_SCOPE))]
    if not named:
        return set()
    return {n.lower() for n in (PurePath(cwd).name, *map(repo_name, named)) if n}


def relative_to_folder(memory: Memory, cwd: str) -> Memory:
    """``memory`` with its text naming the folder its session ran in (``cwd``) as ``.``
    and a path under it relative to it, however it is spelt: "/home/alice/acme-layoffs/
    src/app.py", "…/acme-layoffs/src/app.py", "~/acme-layoffs/src/app.py" (or ``$HOME``),
    and "acme-layoffs/src/app.py" as a digest names it relative to a folder above it
    (the one it shares with a file outside the project) -> "src/app.py"; a sibling folder
    whose name starts with the folder's keeps the rest of its name ("~/…-old",
    ``SIBLING``). Any other path in the home goes as ``~/...``: no user name."""
    folder = cwd.rstrip("/")
    if not folder.startswith("/") or folder.count("/") < 2:
        return memory  # no folder, or one of no name to hide (``/srv``)
    home = os.path.expanduser("~").rstrip("/")
    spellings = [folder, SHORTENED + PurePath(folder).name]
    if home and folder.startswith(f"{home}/"):
        under = folder.removeprefix(f"{home}/")
        spellings += [f"{prefix}/{under}" for prefix in HOME_SPELLINGS]
    parts = folder.strip("/").split("/")
    above = ["/".join(parts[-k:]) for k in range(len(parts) - 1, 0, -1)]
    rules: list[Rule] = [
        (_either(spellings, f"(/|(?!{NAME_CHARS}))"), _relative),
        (_either(above, "/", before=r"(?<![\w.@+/~$}-])"), ""),  # not inside another path
        *_sibling(folder, home),
    ]
    if home.count("/") > 1:  # ``/home/alice``; not ``/root``, which names nobody
        rules.append((_either([home], f"(/|(?!{NAME_CHARS}))"), r"~\1"))
    texts = [memory.content, memory.l0_abstract, memory.l1_overview, memory.l2_content]
    for pattern, replacement in rules:
        texts = [pattern.sub(replacement, text) for text in texts]
    content, l0, l1, l2 = texts
    return replace(memory, content=content, l0_abstract=l0, l1_overview=l1, l2_content=l2)


def _sibling(folder: str, home: str) -> list[Rule]:
    """A sibling folder whose name starts with the folder's: spelt from the folder above
    (absolute, from the home, ``..``, a note's ``…/``), or opening a relative path
    (``acme-layoffs-old/x``, as a digest names it from the folder the two share)."""
    parent, name = folder.rpartition("/")[0], re.escape(PurePath(folder).name)
    above = [parent, "..", SHORTENED[:-1]]
    if home and parent.startswith(f"{home}/"):
        under = parent.removeprefix(f"{home}/")
        above += [f"{prefix}/{under}" for prefix in HOME_SPELLINGS]
    elif home and parent == home:
        above += list(HOME_SPELLINGS)
    spelt = "|".join(map(re.escape, above))
    return [
        (re.compile(f"((?:{spelt})/){name}(?={SIBLING_TAIL})"), rf"\1{SIBLING}"),
        (re.compile(rf"(?<![\w.@+/~$}}-]){name}(?={SIBLING_TAIL}{NAME_CHARS}*/)"), SIBLING),
    ]


def _either(texts: list[str], after: str, before: str = "") -> re.Pattern[str]:
    return re.compile(f"{before}(?:{'|'.join(map(re.escape, texts))}){after}")


def _relative(found: re.Match[str]) -> str:
    return "" if found.group(1) else HERE
