"""What a prompt asks: the sentences its writer typed to ask, not what came with them.

Real prompts carry more than their question: a pasted token, a log, a stack trace, a code
block, a file path, a long tail of context or apology, a second request, a greeting and a
"thanks". Recalled for whole, a prompt's extra words dilute its meaning (one vector for
all of it) and its share of words held (a random key splits into twenty parts no memory
writes), and the per-prompt hook gave no block where the question alone got one
(docs/benchmarks.md, "What a prompt asks"). So the per-prompt hook recalls for what it
asks (``asked``):

- lines laid out as a machine writes them (``LAID_OUT``: a log line, a trace's frame, an
  indented or fenced block, a shell prompt, a JSON or ini line) are left out, as the
  distiller leaves them out of a user's rules (ingest/pasted.py), and so are a trace's
  exception line and a line of code of one token (``TRACE_LINE``);
- so are keys, tokens and hashes (``KEY_RUN``: a word of 16 or more letters and digits
  mixed, no word any memory is searched by; a sentence that held one and asks nothing says
  what the key is), and sentences of greetings and thanks alone (``CHATTER``);
- the sentences left are recalled for as one: a question's context is as often said
  before it as after it ("The folder is empty. Can you import the session there?", "Can
  you update these tests? We only pick the latest path now"), and a question alone lost it
  on real prompts;
- but two or more sentences that ask (``asks``: "?", a question word and an auxiliary verb;
  a Japanese, Korean or Chinese question ending) and name their subject
  (``SUBJECT_WORDS`` content words) are recalled for each on its own, with the sentences
  that do not ask: "When did we move to Postgres? Also, can you fix the lint check?" is
  two recalls, not one vector of both.

Nothing is left (a prompt that is only a paste): the prompt itself is recalled for.
`memctl recall` and MCP ``memory_search`` search an explicit query the same way, as one text
(``searched_for``): beside a question, a pasted log or trace made an unrelated question a
clear match to the sessions that hold such lines.
"""

from __future__ import annotations

from memctl.lazy_re import lazy
from memctl.retrieve.echo import asks
from memctl.retrieve.fit import sentences
from memctl.retrieve.query import WORD, function_word
from memctl.store import cjk

# A line laid out as a document or a machine's output is, not typed as prose (moved here
# from ingest/pasted.py, which reads a pasted user turn by the same shapes).
LAID_OUT = lazy(
    r"^\s{0,3}#{1,6}\s"  # a markdown heading
    r"|^\s*(?:```|~~~)"  # a code fence
    r"|^(?: {4,}|\t)\S"  # indented: code, a manual's option text, a stack frame
    r"|^\s*-{1,2}[A-Za-z0-9][\w-]*(?:[ ,=<\[]|$)"  # an option: "-c, --comments", "--json <f>"
    r"|^(?:\+\+\+ |--- |@@ |diff --git |index [0-9a-f]{7,})|^[+-](?: {2,}|\t)"  # a diff
    r"|^\s*\[?\d{1,4}[-/:.]\d{2}[-/:.]\d{2}"  # a log line's date or time
    r"|^\s*\[?(?:TRACE|DEBUG|INFO|WARN(?:ING)?|ERROR|FATAL|CRITICAL)\b"  # its level
    r"|^\s*(?:Traceback \(most recent|File \".*\", line \d+|at [\w$.<>]+ ?\()"  # a trace
    r"|^\S*[$%#❯➜>]\s"  # a shell or REPL prompt
    r"|^\s*\"[^\"]+\"\s*:"  # a JSON member
    r"|^\s*[\w.-]+\s*=\s*\S|^\s*\[[\w.-]+\]\s*$"  # an ini / toml / env line
    r"|^\s*[\[\]{}(),;]+\s*$"  # brackets alone
)
FENCE = lazy(r"^\s*(?:```|~~~)")
# Lines of a trace or of code that LAID_OUT does not see: an exception's own line
# ("KeyError: 'config'", "TypeError: Cannot read properties of undefined"), and a line of
# one ASCII token with a bracket, a brace, a semicolon or an equals sign ("main()", "};").
TRACE_LINE = lazy(r"^\s*[A-Z]\w*(?:Error|Exception)\b|^\s*[!-~]*[(){}\[\];=][!-~]*\s*$")
# A key, a token, a hash: a run of key characters holding a word of 16 or more letters and
# digits mixed ("ghp_…", "sk-proj-…", "AKIA…"), as the privacy scanner's high-entropy
# detector reads one (memories/privacy.py), without its 40 ms of patterns to load on every
# prompt; "max_tasks_per_child=200" or "feature/ACME-123-fix" are no keys.
KEY_RUN = lazy(r"[\w+/=.-]{16,}")
KEY_WORD = lazy(r"[A-Za-z0-9]{16,}")
# The words of a greeting or a thanks: a sentence of these (and function words) asks
# nothing ("Hi!", "Thanks in advance, really appreciate it!", "Cheers.").
CHATTER = frozenset(
    """hi hello hey hiya morning evening afternoon again there thanks thank thx ty cheers
    please pls plz appreciate appreciated really much lot advance quick question great
    awesome ok okay sorry""".split()
)
# A sentence's end that is no end: an initial or a title's abbreviation before the name it
# goes with ("Dr. Okonkwo", "the U.S. and", "J.K. Rowling", "e.g. this").
ABBREVIATION = lazy(r"(?:\b[A-Za-z]|\b(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e))\.\s*$")
# The end of a question or an exclamation after a number, which fit.sentences does not cut
# (its end is no list number's "1. ").
NUMBER_ASKED = lazy(r"(?<=\d[?!])\s+")
# Japanese, Korean and Chinese write a question without "?" as often as with one; these
# endings ask ("…ですか", "…っけ", "…나요", "…까", "…吗"), before any closing stop.
CJK_QUESTION_ENDS = (
    "か",
    "かな",
    "っけ",
    "까",
    "까요",
    "나요",
    "가요",
    "니",
    "냐",
    "吗",
    "呢",
    "么",
)
CLOSING_STOPS = " 。.…"
# A question with this many content words names its subject ("how do we deploy a release"):
# beside another such, it is recalled for alone. One with fewer ("Any idea?", "What's the
# fix?") is asked about the sentences with it.
SUBJECT_WORDS = 2
# Questions of one prompt recalled for, each a recall of its own (~40 ms of CPU): a prompt
# of more is a list of tasks, and its first ones say what it is about.
MAX_QUESTIONS = 3


def asked(prompt: str) -> list[str]:
    """What ``prompt`` asks (see the module's docstring): its typed sentences as one, or,
    when two or more of them ask and name their subject, one text per question (at most
    ``MAX_QUESTIONS``), each with the sentences that do not ask ("I wanted to check on our
    talk about Netflix." says what both questions after it are about); when nothing is
    left, the prompt itself."""
    sentences = typed(prompt)
    named = [s for s in sentences if asking_sentence(s) and subject(s)]
    if len(named) < 2:
        return [" ".join(sentences) or " ".join(prompt.split())]
    return [
        " ".join(s for s in sentences if s == question or s not in named)
        for question in named[:MAX_QUESTIONS]
    ]


def typed(prompt: str) -> list[str]:
    """The sentences of ``prompt`` its writer typed: not on a laid-out line, without keys,
    greetings and thanks (see the module's docstring)."""
    found = [s for line in typed_lines(prompt) for s in typed_sentences(line)]
    return [" ".join(s.split()) for s in found if not chatter(s)]


def searched_for(query: str) -> str:
    """What recall searches an explicit query for: its typed sentences as one text (a
    pasted log or trace beside a question made unrelated questions clear matches), or
    ``query`` itself, as written, when that leaves out nothing but blanks, or everything."""
    joined = " ".join(typed(query))
    return query if joined in ("", " ".join(query.split())) else joined


def typed_sentences(line: str) -> list[str]:
    """``line``'s sentences without their keys (``KEY_RUN``); a sentence that held one and
    asks nothing is left out whole: it says what the key is ("My token: …", "export
    GITHUB_TOKEN=…"), not what is asked."""
    found = []
    for sentence in whole_sentences(line):
        kept = without_keys(sentence)
        if kept == sentence or asking_sentence(kept):
            found.append(kept)
    return found


def typed_lines(prompt: str) -> list[str]:
    """The lines of ``prompt`` outside fenced blocks that are not ``LAID_OUT``."""
    kept, fenced = [], False
    for line in prompt.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.strip() and not LAID_OUT.search(line):
            if TRACE_LINE.match(line):
                continue
            kept.append(line)
    return kept


def without_keys(line: str) -> str:
    """``line`` without its keys, tokens and hashes (``KEY_RUN``)."""
    return KEY_RUN.sub(lambda run: " " if is_key(run.group(0)) else run.group(0), line)


def is_key(run: str) -> bool:
    return any(not word.isdigit() and not word.isalpha() for word in KEY_WORD.findall(run))


def whole_sentences(line: str) -> list[str]:
    """``line``'s sentences (``fit.sentences``, and a question ending in a number: "…in
    2023? My token: …"), none cut after an initial or a title's abbreviation ("Dr.
    Okonkwo", "the U.S.", "C. S. Lewis")."""
    found: list[str] = []
    for piece in (p for s in sentences(line) for p in NUMBER_ASKED.split(s)):
        # its last characters only: a sentence grows by each piece joined to it
        if found and ABBREVIATION.search(found[-1], max(0, len(found[-1]) - 8)):
            found[-1] += piece
        else:
            found.append(piece)
    return found


def words(sentence: str) -> list[str]:
    """``sentence``'s words, a CJK run as its bigrams (as the full-text index holds it)."""
    return [p.lower() for w in WORD.findall(sentence) for p in cjk.split_word(w)]


def chatter(sentence: str) -> bool:
    """A sentence of greetings, thanks and function words alone (or of no word at all) that
    does not ask: "Thanks!", "ありがとうございます。"; "Why?" asks."""
    return all(w in CHATTER or function_word(w) for w in words(sentence)) and not (
        asking_sentence(sentence)
    )


def asking_sentence(sentence: str) -> bool:
    return asks(sentence) or sentence.rstrip(CLOSING_STOPS).endswith(CJK_QUESTION_ENDS)


def subject(sentence: str) -> bool:
    """Whether ``sentence`` names what it is about: ``SUBJECT_WORDS`` content words."""
    content = [w for w in words(sentence) if not function_word(w) and w not in CHATTER]
    return len(content) >= SUBJECT_WORDS
