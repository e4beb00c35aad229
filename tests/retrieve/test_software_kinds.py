"""What a piece of software is (retrieve/software_kinds.py, software_kinds.txt)."""

from __future__ import annotations

from memctl.ingest.meaning import document_text
from memctl.retrieve.software_kinds import kinds_named, parse, software_kinds

TABLE = parse(
    "# a comment\n"
    "dv\tKafka\tdistributed messaging | message broker\n"
    "dv\t=Celery\tdistributed messaging\n"
    "ex\tGitHub Actions\tcontinuous integration\n"
)


def test_a_name_is_found_in_any_case_and_the_longest_first() -> None:
    found = kinds_named("Orders go through kafka; CI is GitHub Actions.", TABLE)
    assert found == {
        "kafka": ("distributed messaging", "message broker"),
        "GitHub Actions": ("continuous integration",),
    }


def test_a_name_that_is_a_word_counts_only_written_as_the_name() -> None:
    assert kinds_named("Jobs run on Celery workers.", TABLE) == {
        "Celery": ("distributed messaging",)
    }
    assert kinds_named("Add celery to the soup.", TABLE) == {}
    assert kinds_named("Celery soup again.", TABLE) == {}  # any word opens a sentence so
    assert kinds_named("Mel: Celery soup again.", TABLE) == {}  # or a speaker's line


def test_the_shipped_table_is_broad_and_read_once() -> None:
    table = software_kinds()
    assert len(table.names) + len(table.written) > 1000
    assert software_kinds() is table
    assert "message broker" in kinds_named("RabbitMQ carries the events.")["RabbitMQ"]


def test_a_memorys_vector_text_says_what_its_software_is() -> None:
    text = document_text("Events go through RabbitMQ.")
    assert text.startswith("Events go through RabbitMQ. (") and "message broker" in text
    # what the memory says itself is not said again
    assert "message broker" not in document_text("RabbitMQ is our message broker.")[30:]
