#!/usr/bin/env python3
"""Write memctl/retrieve/spellings.txt: words spelt one way in British English and
another in American English ("colour" / "color", "initialise" / "initialize").

    pip download breame==0.1.2 --no-deps      # then unpack it into DIR
    python scripts/gen_spellings.py DIR       # rewrites the file

The pairs are breame's ``BRITISH_ENGLISH_SPELLINGS`` (breame/data/spelling_constants.py),
Copyright Charles Pierse, Apache License 2.0, https://github.com/cdpierse/breame.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "memctl" / "retrieve" / "spellings.txt"
HEADER = """\
# Words spelt one way in British English and another in American English: a query's word
# also searches its other spelling, at recall.vocabulary_weight, in memories and session
# messages (memctl/retrieve/vocabulary.py, ``spelling_forms``; docs/recall.md).
# Written by scripts/gen_spellings.py from breame 0.1.2's BRITISH_ENGLISH_SPELLINGS
# (breame/data/spelling_constants.py), Copyright Charles Pierse, Apache License 2.0,
# https://github.com/cdpierse/breame.
# Format: one pair a line, "<british><TAB><american>".
"""


def british_spellings(source: Path) -> list[tuple[str, str]]:
    """breame's British -> American pairs (one word each), read without importing breame."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "BRITISH_ENGLISH_SPELLINGS" for t in node.targets
        ):
            table = ast.literal_eval(node.value)
            pairs = {(str(k).lower(), str(v).lower()) for k, v in table.items()}
            return sorted((b, a) for b, a in pairs if b != a and " " not in b + a)
    raise SystemExit(f"{source}: no BRITISH_ENGLISH_SPELLINGS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="breame's unpacked source distribution")
    found = sorted(parser.parse_args().dir.rglob("spelling_constants.py"))
    if not found:
        raise SystemExit("no breame/data/spelling_constants.py under that directory")
    pairs = british_spellings(found[0])
    OUT.write_text(HEADER + "".join(f"{b}\t{a}\n" for b, a in pairs), encoding="utf-8")
    print(f"{OUT}: {len(pairs)} pairs")


if __name__ == "__main__":
    main()
