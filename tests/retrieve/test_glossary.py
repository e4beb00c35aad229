"""What a technical term means (retrieve/glossary.py, glossary.txt)."""

from __future__ import annotations

from memctl.ingest.meaning import document_text
from memctl.retrieve.glossary import GLOSSARY_FILE, glossary, glosses_named
from memctl.retrieve.software_kinds import parse

TABLE = parse(
    "# a comment\n"
    "gh\trebase\tTo reapply a series of changes from a branch to a different base\n"
    "gh\tpull request\tProposed changes to a repository submitted by a user\n"
    "gh\tpull requests\tProposed changes to a repository submitted by a user\n"
    "tl\t=git squash\tSquash multiple commits into a single commit\n"
)


def test_a_term_is_found_in_any_case_and_the_longest_first() -> None:
    found = glosses_named("Open a Pull Request, then rebase it.", TABLE)
    assert found == {
        "Pull Request": "Proposed changes to a repository submitted by a user",
        "rebase": "To reapply a series of changes from a branch to a different base",
    }
    assert glosses_named("Two pull requests wait.", TABLE) == {
        "pull requests": "Proposed changes to a repository submitted by a user"
    }


def test_a_command_counts_only_as_written() -> None:
    assert glosses_named("We run git squash before merging.", TABLE) == {
        "git squash": "Squash multiple commits into a single commit"
    }
    assert glosses_named("We run Git Squash before merging.", TABLE) == {}
    assert glosses_named("A pull of the request.", TABLE) == {}  # not the term


def test_the_shipped_table_credits_its_sources_and_is_read_once() -> None:
    header = GLOSSARY_FILE.read_text(encoding="utf-8").split("\n\n")[0]
    assert "CC BY 4.0" in header and "scripts/gen_glossary.py" in header
    table = glossary()
    assert len(table.names) + len(table.written) > 1000
    assert glossary() is table
    assert "pull request" in glosses_named("Review the pull request today.")


def test_a_memorys_vector_text_says_what_its_terms_mean() -> None:
    text = document_text("We squash and rebase before merging.")
    assert text.startswith("We squash and rebase before merging. (")
    assert "different base" in text
    assert document_text("The squash soup was warm.") == "The squash soup was warm."
