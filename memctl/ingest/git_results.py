"""What a session's git commits and pushes made, read from their output.

git says it on its first lines: ``git commit`` prints ``[main 5c1b231] Add the parser``
(the branch, the new commit's short hash and its subject; ``(root-commit)`` for a first
one), ``git push`` prints ``To github.com:ann/shop.git`` and ``6eea407..5c1b231  main ->
main`` (or ``* [new branch]  main -> main``). The tool note of the call's result keeps
them (``parse.common.NOTE_WIDTH``; its lines joined by `` · ``). They answer "which commit
added X?" and "where is the code pushed?", which the command line (a commit message in a
heredoc, cut; ``git push`` alone) does not: the digest lists them (``digest``).
"""

from __future__ import annotations

from memctl.lazy_re import lazy

# "[main 5c1b231] subject", "[feat/x (root-commit) 1a2b3c4] subject"; the subject ends at
# the note's line joint or its end
COMMIT = lazy(r"\[([^\s\[\]]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] ([^·\]\n]+)")
# "To github.com:ann/shop.git", "To https://github.com/ann/shop"
PUSHED_TO = lazy(r"(?:^|· )To (\S+)")
# "6eea407..5c1b231  main -> main", "* [new branch]      main -> main"
PUSHED_REF = lazy(r"(?:([0-9a-f]{7,40}\.\.[0-9a-f]{7,40})|\[new branch\])\s+\S+ -> (\S+)")
# the user and password of an address (https://ann:token@host/...): never kept
USERINFO = lazy(r"(?<=://)[^/@\s]+@")
SUBJECT_WIDTH = 100


def commits(output: str) -> list[str]:
    """Each commit ``output`` reports made: "5c1b231 on main: Add the parser"."""
    return [
        f"{sha} on {branch}: {_subject(subject)}"
        for branch, sha, subject in COMMIT.findall(output)
        if subject.strip()
    ]


def pushes(output: str) -> list[str]:
    """Where ``output`` reports a push went: "main to github.com:ann/shop.git
    (6eea407..5c1b231)"; "" parts left out when git did not print them."""
    where = PUSHED_TO.search(output)
    if where is None:
        return []
    remote = USERINFO.sub("", where.group(1)).rstrip("]")
    refs = PUSHED_REF.findall(output)
    if not refs:
        return [f"to {remote}"]
    return [f"{ref} to {remote}" + (f" ({span})" if span else "") for span, ref in refs]


def _subject(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUBJECT_WIDTH else flat[: SUBJECT_WIDTH - 1] + "…"
