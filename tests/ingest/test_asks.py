"""A Chinese question without a question mark, or a wish of what the assistant does, states
no fact (real user turns of destyler/destyler, MIT: benchmarks/sessions/fresh4 and fresh3,
SOURCES.md)."""

from __future__ import annotations

from memctl.ingest.asks import asks_openly
from memctl.ingest.extract_rules import extract_rules
from memctl.ingest.facts import Passage
from memctl.model import Category, Role

# fresh4 copilot-destyler-colorinput: kept as a case ("问题是")
COLOR_INPUT = (
    "我发现我们在 #file:ColorPicker.ts  中的问题是我们的输入框中 直接有了 value 的值,"
    "所以导致我们没有办法去修改 input 的值,我们应该怎么办"
)
# fresh3 copilot-destyler-astroslug: kept as the user's goal ("我希望")
ASTRO_SLUG = (
    "我发现了一个问题，如果我使用 document 中的方式来设计我们的 collection ，如果我们使用 "
    "`pnpm run docs:dev` 就会出现下面的错误，我不知道我应该如何去解决，我并不想使用 "
    "脚本在编译的时候去迁移 的这种方案，我希望还是保留这个格式只是修改 document 中 "
    "`content.config.ts` 或者修改 `astro.config.ts` 来实现这个效果。"
)


def facts(text: str) -> list[tuple[Category, str]]:
    return [(f.category, f.content) for f in extract_rules([Passage(text, Role.USER, "s")], 9)]


def test_an_open_question_or_a_plea_for_help_is_no_fact() -> None:
    assert asks_openly(COLOR_INPUT) and asks_openly(ASTRO_SLUG)
    assert facts(COLOR_INPUT) == [] and facts(ASTRO_SLUG) == []


def test_statements_with_the_same_words_are_still_kept() -> None:
    assert facts("问题是缓存没有清空。") == [(Category.CASES, "问题是缓存没有清空。")]
    rule = "以后数据库查询都要用 selectinload 预加载关联，不要在循环里查询。"
    assert facts(rule) == [(Category.PATTERNS, rule)]
    assert not asks_openly("我们知道为什么要这样做：缓存会过期。")


def test_what_the_user_hopes_the_assistant_does_is_no_goal_of_theirs() -> None:
    """fresh4 copilot-destyler-deployscript asked the assistant ("我希望你可以…"), as "I want
    you to" does; it was kept as the user's goal."""
    asked = (
        "接下来我给你一个我其他项目的部署脚本，我希望你可以设计成需要四个参数，然后可以直接通过 "
        "类似 zip 的方式去触发，这四个参数是 token，environment, service, zipPath"
    )
    assert facts(asked) == []
    assert facts("我希望在周五前把迁移做完。") == [(Category.PROFILE, "我希望在周五前把迁移做完。")]
