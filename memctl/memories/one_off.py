"""One-off instructions: what a user tells the assistant about the task at hand, not a rule
for the next session, told by the shape of the sentence, not its topic.

Distillation keeps such a sentence as an event of its session, not as a rule
(ingest/extract_rules.py); the profile offers none as a convention or a decision
(maintain/profile.py), nor the session start as a project fact (retrieve/session_start.py),
so a store distilled before this rule does not offer them either.
"""

from __future__ import annotations

import re

from memctl.lazy_re import lazy

# The shapes:
# - a reply to the assistant's proposal: an assessment of it, then what to change ("great,
#   but ...", "the main idea is fine, however ...", "looks good, now ...");
# - a pointer into the work in front of them: "this file", "the new file", "those tests",
#   "step 3", "the final step", "we should support those". "This project" and "the tests"
#   name no one piece of work, nor does "the new export files" (a kind of thing);
# - keep working until the task is done: "Don't stop until all functions are ported, tests
#   pass, and you have 100% coverage." (claude-reliability's port session; "don't merge
#   until CI passes" stays a rule: it stops one step, not the work);
# - a fault in the work in front of them, reported: "导出的 Excel 里日期格式也不对，应该是
#   YYYY-MM-DD，现在是美国格式。" (the Excel's dates are wrong too: a bug for the next session
#   to fix, not a rule; "it's wrong" alone is a bare "it", no fact at all). Said of a thing:
#   "不对，应该用 uv" (opening the sentence) and "你错了" (of the assistant) are corrections;
# - a care any work takes, with nothing named: "don't add regressions" (fresh7's "fix merge
#   conflicts. don't add regressions", s35-distill), "do not break anything", "do not commit
#   anything" (fresh8's entireskills, which later asked for a commit). "Don't add
#   dependencies" or "don't break the public API" name what to spare: rules.
REPLY = lazy(
    r"^\W*(?:(?:ok(?:ay)?|great|good|nice|fine|perfect|cool|excellent|awesome|thanks?|"
    r"thank you|yes|yeah|yep|sure|lgtm|agreed|alright|all right|looks good|sounds good|"
    r"makes sense)(?: \w+){0,2}|(?:(?:it|this|that)(?:'s| is| looks| seems| sounds)|"
    r"(?:the )?(?:main )?(?:idea|plan|approach|design|direction|proposal) (?:is|looks|seems|"
    r"sounds)) (?:\w+ )?(?:good|fine|ok(?:ay)?|great|nice|right|correct|reasonable))"
    r"\s*(?:[,;:\u2014-]|\b(?:but|however|though)\b)",
    re.I,
)
DEICTIC = lazy(
    r"(?:\b(?:this|these|those)\s+(?:[\w-]+\s+)?|"
    r"\bthe (?:new|old|same|current|previous|above|following|attached)\s+)"
    r"(?:files?|folders?|director(?:y|ies)|functions?|methods?|class(?:es)?|components?|"
    r"modules?|scripts?|tests?|pages?|screens?|prs?|pull requests?|branch(?:es)?|commits?|"
    r"changes?|diffs?|patch(?:es)?|steps?|plan|tasks?|tickets?|issues?|bugs?|specs?|docs?|"
    r"documents?|sections?|lines?|code|implementation|versions?|one|approach|solution|"
    r"options?)\b|\b(?:step|phase|option|stage)\s+#?\d+\b|"
    r"\b(?:final|next|last|first|previous) (?:step|phase|stage)\b|"
    r"\b(?:should|must|to|will|'ll|can)\s+\w+\s+(?:this|that|these|those)\b(?!\s*[\w-])",
    re.I,
)
UNTIL_DONE = lazy(
    r"\b(?:don't|do not) (?:stop|quit|give up|end|pause)\b.{0,60}?\b(?:until|till|before)\b|"
    r"\b(?:keep going|keep working|carry on|continue) (?:until|till)\b",
    re.I,
)
ANY_WORK = lazy(
    r"^\W*(?:please )?(?:don't|do not|dont)\s+"
    r"(?:add|introduce|cause|create|make|break|commit|push|change|touch|edit|delete)\s+"
    r"(?:any(?:thing)?\s+)?(?:new\s+)?(?:regressions?|bugs?|errors?|issues?|problems?|"
    r"anything(?: else)?)\W*$",
    re.I,
)
FAULT = lazy(
    r"\b(?:is|are|was|were|looks|seems)(?: (?:still|also|all|now))? (?:wrong|broken|incorrect|"
    r"not right|not working)\b|(?<=[^\W你您])也?(?:不对|错了|不正确|坏了)|間違って|잘못됐",
    re.I,
)
# ... unless it says in so many words that it holds beyond this task
STANDING = lazy(
    r"\b(?:always|never|from now on|going forward|in (?:the )?future|every time|whenever|"
    r"each time|by default|as a rule)\b",
    re.I,
)


# Lines the profile (maintain/profile.py) offers as no convention (``task_note``), though
# distillation keeps them as rules (a decision may give such a reason: "X is broken, so we
# use Y", and stays):
# - a report of what is wrong now, which asks for a fix of this bug, not a rule: "导出的 Excel
#   里日期格式也不对，应该是 YYYY-MM-DD，现在是美国格式" (the date format is wrong too, it should
#   be ..., it is the US one now), "the export is broken" (not "doesn't work": a rule
#   gives that as its reason, "don't use npm ci, it doesn't work behind the proxy");
# - how long to work on this task (``UNTIL_DONE``, above): "Don't stop until all functions are
#   ported, tests pass".
DEFECT = lazy(
    r"\b(?:is|are|was|were|looks?|seems?) (?:also |still |now )?(?:wrong|broken|incorrect)\b|"
    r"不对|不正确|错了|有问题|おかしい|間違って|動かない|잘못|이상해",
    re.I,
)
# ... unless it says it holds from now on, in Chinese, Japanese or Korean too ("以后", "今後").
LASTING = lazy(r"以后|今后|今後|これから|いつも|앞으로|항상|总是|永远")


def task_note(sentence: str) -> bool:
    """A sentence about this task, though not shaped as ``one_off``'s: a bug report
    (``DEFECT``) or how long to work on it (``UNTIL_DONE``), that does not say it holds
    beyond it (``STANDING``, ``LASTING``)."""
    shaped = DEFECT.search(sentence) or UNTIL_DONE.search(sentence)
    return bool(shaped) and not (STANDING.search(sentence) or LASTING.search(sentence))


def one_off(sentence: str) -> bool:
    """A one-off instruction about the task at hand (``REPLY``, ``DEICTIC``, ``UNTIL_DONE``,
    ``ANY_WORK`` or ``FAULT``) that does not say it holds beyond it (``STANDING``)."""
    shaped = any(p.search(sentence) for p in (REPLY, DEICTIC, UNTIL_DONE, ANY_WORK, FAULT))
    return bool(shaped) and not STANDING.search(sentence)
