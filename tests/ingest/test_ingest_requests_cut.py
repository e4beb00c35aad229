"""A digest over its budget keeps the first request and the last one (where the session
ended, often a correction), dropping the ones between first."""

from __future__ import annotations

from memctl.ingest.digest import SessionDigest, render


def test_the_last_request_outlives_the_ones_between() -> None:
    digest = SessionDigest(
        requests=[
            "Rewrite docs/system-rules.md to follow the spec-design templates",
            "Do the same for every file under docs/guides",
            "Which model would do this best?",
            "The YAML front matter is in Korean: write it in English unless I say otherwise",
        ],
        reports=["x" * 700, "y" * 700],
        outcome="All fifteen guides were converted.",
    )
    text = render(digest, "Session", 1000)
    assert len(text) <= 1000
    assert "Rewrite docs/system-rules.md" in text
    assert "write it in English unless I say otherwise" in text
    assert "Which model would do this best?" not in text
