"""Sentences that ask for help without a question mark: they state no fact.

Chinese writes a question without "？" as often as with one, and the words say it: an open
question ends in its question word ("…我们应该怎么办", "…原因是什么"), and a request for
help says the writer does not know how ("我不知道我应该如何去解决"). Such a sentence may
hold a rule's or a case's words ("应该", "问题是…") and still asks: unlike a yes-or-no
question ("…，可以吗？"), it proposes nothing to agree to (``extract_rules.ASSERTIVE``).
Two real sessions kept one each, as a case and as the user's goal (fresh4's
copilot-destyler-colorinput, fresh3's copilot-destyler-astroslug).
"""

from __future__ import annotations

from memctl.lazy_re import lazy

# a question word that ends the sentence (before a closing stop): what, why, how, which, where
OPEN_QUESTION = lazy(
    r"(?:怎么办|怎么做|怎么弄|怎么处理|怎么解决|怎么改|如何(?:解决|处理|修改|实现|做)?|"
    r"为什么|为啥|是什么|什么原因|哪个|哪里|哪些)\s*[。.…]*\s*$"
)
# "I do not know how / why / what …": the writer asks for the answer
NOT_KNOWING = lazy(r"不知道(?:我|我们)?(?:该|应该|要)?(?:如何|怎么|怎样|为什么|为啥|什么)")


def asks_openly(sentence: str) -> bool:
    """The sentence asks what, why or how, or says its writer does not know (see the
    module's docstring); a fact's words in it do not make it a statement."""
    return bool(OPEN_QUESTION.search(sentence) or NOT_KNOWING.search(sentence))
