"""A CJK run's bigrams in a text's share of a question's words (retrieve/letters.py)."""

from __future__ import annotations

import pytest

from memctl.retrieve.letters import letters_between
from memctl.store.cjk import bigrams

RUN = tuple(bigrams("导出文件"))  # 导出 出文 文件: 出文 spans the two words
WEIGHTS = {"导出": 2.0, "出文": 4.0, "文件": 2.0}


@pytest.mark.parametrize(
    ("held", "added"),
    [
        ({"导出", "文件"}, 4.0),  # both words: the bigram between them counts whole
        ({"导出"}, 2.0),  # one word: half the bigram beside it
        (set(), 0.0),  # nothing held: nothing beside it counts
        ({"导出", "出文", "文件"}, 0.0),  # every bigram held counts as a word already
    ],
)
def test_a_bigram_counts_by_its_letters_a_held_bigram_covers(held: set[str], added: float) -> None:
    assert letters_between([RUN], WEIGHTS, held) == pytest.approx(added)


def test_a_function_bigram_and_a_bigram_written_twice_count_once() -> None:
    # 们现 has no weight (a function word the search leaves out); 现在 is asked twice
    runs = [("我们", "们现"), ("现在", "在北", "北京"), ("现在", "在北")]
    weights = {"在北": 1.0, "北京": 1.0}
    assert letters_between(runs, weights, {"北京", "我们"}) == pytest.approx(0.5)
