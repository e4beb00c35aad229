"""Chinese, Japanese and Korean text as words: each run of their letters as its overlapping
character bigrams ("部署配置" -> 部署 署配 配置), a lone letter as itself.

These scripts write no space between words, and FTS5's unicode61 tokenizer keeps a run of
their letters as one token: a question shared no word with its answer unless it wrote the
whole run. Bigrams are how Lucene's CJKAnalyzer (CJKBigramFilter) and Elasticsearch's
``cjk_bigram`` filter index them: a two-letter word (most Chinese words) is one bigram, a
longer one its bigrams in a row, found as a phrase. The full-text indexes tokenize with
``TOKENIZER`` (registered on every connection by ``register``): the runs as bigrams, every
other part of a text by the tokenizer named after it (``porter unicode61 ...``), as before;
recall counts a text's words the same way (``split_word``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import apsw

from memctl.lazy_re import lazy

# The letters bigrammed: 々 〆 〇, hiragana and katakana (not the middle dot ・, a
# separator), the CJK ideographs (extension A, the unified block, the compatibility ones),
# hangul syllables.
LETTERS = (
    "\u3005-\u3007\u3041-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
)
RUN = lazy(f"([{LETTERS}]+)")
TOKENIZER = "cjk_bigrams"

# Letters that make up a language's function words: particles, pronouns, auxiliaries,
# question words, numerals with their measure words (Chinese 的 了 是 我们 什么 怎么 一个
# 一次 下一; Japanese: every hiragana letter, which write particles and endings, です ます;
# Korean 은 는 이 가 을 를 에서 습니다 어떻게). A bigram of two of them is a function word or
# spans two: it says nothing of a subject, as English "the", "what" or "once"
# (query.STOPWORDS). Chosen from the grammars, not from any question set (上 下 次 种 after
# an unrelated probe, "下一次日食是什么时候", was clear by 下一 and 一次: docs/benchmarks.md).
FUNCTION_LETTERS = frozenset(
    "的地得之了着过是在有和与及或也都就还又很把被对从给向以于而并且但吗呢吧啊呀嘛么"
    "我你您他她它们这那哪什怎样个一些其此每各不没会能要可想请让如何为所上下次种"
    "이가은는을를에의도로으와과서다요니까하고게지나한할해했있없습것수어아면며기저제그무뭐엇왜떻디"
) | frozenset(chr(c) for c in range(0x3041, 0x309F))


# Particles: a bigram holding one is a word and the particle after it, or a particle and the
# word after it ("查到的原因是": 到的, 的原, 因是), rarely a word of its own (目的, 了解): Chinese
# 的 了 吗 呢 吧 啊 呀 嘛 么 们 是, Japanese case particles の が を に は へ で と も や.
PARTICLES = frozenset("的了吗呢吧啊呀嘛么们是のがをにはへでとも")
# Chinese function words of content letters, as English writes them among query.STOPWORDS
# ("about", "after", "because", "before", "now", "should", "then", "when", "where", "very",
# "other", "own", "same", "only", "already", "in the end", ...): no subject of their own.
FUNCTION_WORDS = frozenset(
    """关于 之后 以后 之前 以前 再次 全部 期间 曾经 这里 那里 哪里 哪儿 如果 要是 刚才 更多
    现在 一旦 只是 只有 其他 别的 自己 同样 一样 应该 有些 然后 通过 直到 非常 时候 同时
    因为 已经 还是 或者 而且 并且 一下 最后 能够 不过 可是""".split()
)


def has_letters(text: str) -> bool:
    """Whether ``text`` holds a letter of a CJK script."""
    return not text.isascii() and RUN.search(text) is not None


def runs(text: str) -> list[str]:
    """The runs of CJK letters of ``text``, in order."""
    return [] if text.isascii() else RUN.findall(text)


def bigrams(run: str) -> list[str]:
    """A run's overlapping bigrams, in order; a lone letter as itself."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def split_word(word: str) -> list[str]:
    """A word as the full-text index holds it, in order: its CJK runs as their bigrams, its
    other parts as they are ("用python写代码" -> 用, python, 写代, 代码)."""
    if word.isascii():
        return [word]
    pieces = RUN.split(word)
    if len(pieces) == 1:
        return [word]
    found: list[str] = []
    for i, piece in enumerate(pieces):
        if i % 2:
            found.extend(bigrams(piece))
        elif piece:
            found.append(piece)
    return found


def is_gram(word: str) -> bool:
    """Whether ``word`` is a bigram (or a lone letter) of a CJK run."""
    return not word.isascii() and RUN.fullmatch(word) is not None


def function_gram(word: str) -> bool:
    """Whether ``word`` is a lone CJK letter, a bigram of two ``FUNCTION_LETTERS``, one
    holding a particle (``PARTICLES``) or one of ``FUNCTION_WORDS``: a lone letter inside a
    run is no token of the index, and such a bigram names nothing."""
    return is_gram(word) and (
        len(word) < 2
        or word in FUNCTION_WORDS
        or any(c in PARTICLES for c in word)
        or all(c in FUNCTION_LETTERS for c in word)
    )


Tokens = list[tuple[Any, ...]]
Tokenize = Callable[[bytes, int, str | None], Tokens]


def _tokenizer(connection: apsw.Connection, args: list[str]) -> Tokenize:
    """FTS5's tokenizer ``cjk_bigrams <inner tokenizer and its arguments>``: a text's tokens
    as the inner one gives them, and with a token that holds CJK letters, colocated with it
    (at its place, FTS5_TOKEN_COLOCATED, as a synonym is), its runs' bigrams and its other
    parts as the inner one gives them alone. Colocated tokens add nothing to a row's length:
    every row's BM25 for words of other scripts is what it was. A query is tokenized by the
    inner one alone: recall asks for a question's bigrams each as a word of its own
    (retrieve/query.py), and a run it writes whole is found written whole, as before."""
    if not args:
        raise ValueError(f"{TOKENIZER} needs a tokenizer to wrap")
    wrapped = connection.fts5_tokenizer(args[0], args[1:])

    def inner(utf8: bytes, flags: int, locale: str | None) -> Tokens:
        return cast(Tokens, wrapped(utf8, flags, locale))

    def parts(token: str, flags: int, locale: str | None) -> list[str]:
        found: dict[str, None] = {}
        for piece in split_word(token):
            if is_gram(piece):
                found[piece] = None
            else:
                found.update((t[2], None) for t in inner(piece.encode(), flags, locale))
        found.pop(token, None)
        return list(found)

    def tokenize(utf8: bytes, flags: int, locale: str | None) -> Tokens:
        tokens = inner(utf8, flags, locale)
        if utf8.isascii() or flags & apsw.FTS5_TOKENIZE_QUERY:
            return tokens
        return [(*t, *parts(t[2], flags, locale)) if has_letters(t[2]) else t for t in tokens]

    return tokenize


def register(connection: apsw.Connection) -> None:
    """Make ``TOKENIZER`` known to ``connection`` (before it touches a full-text index)."""
    connection.register_fts5_tokenizer(TOKENIZER, _tokenizer)
