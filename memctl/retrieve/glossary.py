"""What a technical term means: "unit testing" is testing that a code module meets its
requirements, "data warehouse" a system for storing and managing large amounts of data.

``glossary.txt`` (beside this module; written by scripts/gen_glossary.py from the Free
On-line Dictionary of Computing, under the GNU FDL its header quotes) holds, for each of
some 13,000 terms, the head of the dictionary's first sense. A memory that says "we
squash-merge" names no commit; a person asks how changes are combined. ``glosses_named``
finds the terms a text writes and what each means, for the text a memory's vector is made
of (``ingest/meaning.document_text``). The table has the format of ``software_kinds.txt``
and is read by its functions: a term in lower case counts in any case, one written with
capitals only as written.

Pure functions over text; read once a process.
"""

from __future__ import annotations

import functools
from pathlib import Path

from memctl.retrieve.software_kinds import SoftwareKinds, kinds_named, parse

GLOSSARY_FILE = Path(__file__).with_name("glossary.txt")


@functools.cache
def glossary() -> SoftwareKinds:
    """The shipped table (read once a process)."""
    return parse(GLOSSARY_FILE.read_text(encoding="utf-8"))


def glosses_named(text: str, table: SoftwareKinds | None = None) -> dict[str, str]:
    """Each term ``text`` writes (as written there) -> what it means."""
    return {term: means[0] for term, means in kinds_named(text, table or glossary()).items()}
