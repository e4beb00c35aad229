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

from typing import TYPE_CHECKING

from memctl.lazy_re import lazy
from memctl.retrieve.echo import asks
from memctl.retrieve.fit import sentences
from memctl.retrieve.query import WORD, function_word
from memctl.store import cjk

if TYPE_CHECKING:
    from memctl.store.db import Database

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
FENCE_END = lazy(r"(?:```|~~~)\s*$")
# Lines of a trace or of code that LAID_OUT does not see: an exception's own line
# ("KeyError: 'config'", "TypeError: Cannot read properties of undefined"), and a line of
# one ASCII token with a bracket, a brace, a semicolon or an equals sign ("main()", "};").
TRACE_LINE = lazy(r"^\s*[A-Z]\w*(?:Error|Exception)\b|^\s*[!-~]*[(){}\[\];=][!-~]*\s*$")
# What tools print and people paste, in the shapes the tools document (the per-prompt hook's
# own: ingest/pasted.py reads a user turn by LAID_OUT alone). Each alternative names its
# source; none matches a sentence a person types.
PASTED = lazy(
    # an exception's line, its name dotted or after V8's "Uncaught" (Python's traceback
    # module, Java's Throwable.printStackTrace, Node's console): "java.lang.NullPointer
    # Exception", "requests.exceptions.ConnectionError: …", "Uncaught TypeError: …"
    r"^\s*(?:Uncaught |Unhandled \w+:? )?(?:[\w$]+\.)*(?:[A-Z]\w*)?(?:Error|Exception)\b(?:[:;]|$)"
    # Java: the first line of an uncaught exception, its causes, its elided frames
    r"|^\s*(?:Exception in thread |Caused by: |Suppressed: |\.\.\. \d+ (?:more|common))"
    # Python: chained exceptions
    r"|^\s*(?:During handling of the above|The above exception was the direct cause)"
    # a compiler's, a linter's or a test's "file:line[:column]" (the GNU error format, go
    # vet, mypy, ruff, ESLint, tsc --pretty, pytest) or tsc's "file(line,column)"
    r"|^\s*[\w.~@/\\-]*\w\.[A-Za-z]\w{0,5}(?::\d+(?::\d+)?\b|\(\d+,\d+\))"
    # rustc and cargo: diagnostics, their source gutter, build steps, test results
    r"|^(?:error|warning)(?:\[[A-Z]?\d+\])?: |^\s*--> \S+:\d+|^\s*\d*\s*\|(?:\s|$)"
    r"|^\s*= (?:note|help): |^\s+(?:Compiling|Finished|Running|Checking|Downloaded|Updating) "
    r"|^test \S+ \.\.\. |^test result: |^-{4} \S+ std(?:out|err) -{4}"
    # Rust's panic message and its backtrace note
    r"|^\s*thread '[^']*' panicked at|^\s*note: run with `RUST_BACKTRACE|^\s*stack backtrace:"
    # Go: a panic, its goroutines, a signal, an exit status; go test's lines
    r"|^\s*panic: |^\s*goroutine \d+ \[|^\s*\[signal |^\s*exit status \d+\s*$"
    r"|^=== (?:RUN|PAUSE|CONT|NAME) |^(?:FAIL|ok) *\t|^(?:PASS|FAIL)\s*$"
    # npm's log lines (npm 6-8 "npm ERR!", npm 9+ "npm error"), Node's own frames and footer
    r"|^\s*npm (?:ERR!|(?:error|warn|WARN|notice)\b)|^\s*node:[\w/]+:\d+|^\s*Node\.js v\d"
    # pytest: section rules, the failing line, its E lines, the summary, the progress line
    r"|^\s*([=_*-])\1{4,}.*\1{5}\s*$|^\s*[=_-]{5,}\s*$|^>\s{3,}\S|^E(?:\s{2,}\S|\s*$)"
    r"|^(?:FAILED|PASSED|ERROR|SKIPPED|XFAIL|XPASS) \S+::|^\S+\.py [.FEsxX]{1,}\s*(?:\[|$)"
    r"|^collected \d+ items?"
    # a terminal's colour codes, and a terminal UI's box drawing and block elements, and the
    # marks Claude Code and Gemini CLI put before a turn (a screen of an assistant's CLI)
    r"|\x1b\[|^\s*[\u2500-\u259f\u23bf]|^\s*[●⏺✻✦]\s"
    # CSS, C, Java, JavaScript: a line that opens a block or ends a statement
    r"|[{;]\s*$|^\s*[}\])]"
)
# The mark Claude Code and Gemini CLI put before an assistant's turn on their screen (in
# PASTED too): the turn's later lines are indented under it, to the next line that is not
# (its next prompt, or what the person typed under the paste)
TURN_MARK = lazy(r"^\s*[●⏺✻✦]\s")
# Claude Code's newline in a prompt: a backslash at the end of the line
LINE_CONTINUED = lazy(r"\\\s*$")
# A shell's prompt before its command, after a virtualenv's name or not: bash's "user@host:
# dir$" (zsh's "%", root's "#"), a path and "$", oh-my-zsh's "➜", starship's "❯" ("(llm)
# jim@box:~/src$ claude", "~/Projects  $ ls", "(base) ➜  site git:(main) ✗ npm test"). The
# lines under it, to a blank line, are its command's output.
SHELL_PROMPT = lazy(
    r"^(?:\([\w.@-]+\)\s+)?(?:[\w.-]+@[\w.-]+\S*?\s?[$%#]|(?:~|\.{0,2}/)?\S*?\s*[$❯➜])\s+\S"
)
# A unified diff's hunk header, and the lines of its hunk: unchanged (a space), added,
# removed, or "\ No newline at end of file" (GNU diff's manual, "Detailed Unified")
HUNK = lazy(r"^@@ -\d")
HUNK_LINE = lazy(r"^[ +\\-]")
# A path or an address ("src/app/Header.tsx", "https://…", "Header.tsx"), and the words
# that point at one: a sentence of these alone points at a file and asks nothing ("(see
# src/app/Header.tsx)", "I have ~/site/config.yaml open."); recalled for, its path's words
# (a folder's "components", an extension's "tsx") are words no memory holds, and recall
# gives nothing for the question beside it.
PATH = lazy(r"\S*\w[/\\]\S*|\b[\w-]{2,}\.[a-z][a-z0-9]{0,4}\b")
POINTING = frozenset("see file files open opened attached path link url cf ref".split())
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


# A word of a question that may name something the store knows ("caroline", "postgres"):
# as the graph stage reads the query's words (retrieve/stages/graph.py)
NAME_WORD = lazy(r"[\w.+#-]*\w")


def cased(db: Database, question: str) -> str:
    """``question``, typed all in lower case ("when did caroline move to sweden"), with each
    word the knowledge graph knows as a name written as the graph writes it ("Caroline",
    "Sweden"). Recall reads a name by its capital (query.names): in lower case the
    names that anchor a question are ordinary words, and the block it got went."""
    if question != question.lower():
        return question
    from memctl.store.graph import entities_by_keys

    words = list(dict.fromkeys(NAME_WORD.findall(question)))
    known = entities_by_keys(db, words)
    names = {w: known[w].name for w in words if w in known and known[w].name.lower() == w}
    if not any(name != word for word, name in names.items()):
        return question
    return NAME_WORD.sub(lambda m: names.get(m.group(0), m.group(0)), question)


def typed(prompt: str) -> list[str]:
    """The sentences of ``prompt`` its writer typed: not on a laid-out line, without keys,
    greetings and thanks (see the module's docstring)."""
    found = [s for line in typed_lines(prompt) for s in typed_sentences(line)]
    return [" ".join(s.split()) for s in found if not chatter(s) and not pointer(s)]


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
    """The lines of ``prompt`` its writer typed: outside fenced blocks, not laid out
    (``laid_out``), not in a diff's hunk, not wedged between two laid-out lines (a log's
    message under its time) nor under a shell's prompt (its command's output), unless they
    ask, nor indented under an assistant's turn on a client's screen (``TURN_MARK``: its
    questions are the assistant's). Claude Code's line-ending backslash goes."""
    lines, shapes, fenced, output, hunk, turn = [], [], False, False, False, False
    for raw in prompt.splitlines():
        line = LINE_CONTINUED.sub("", raw)
        fence, inside = bool(FENCE.match(line)), fenced
        fenced = still_fenced(inside, line)
        output = bool(line.strip()) and (output or bool(SHELL_PROMPT.match(line)))
        hunk = bool(HUNK.match(line)) or (hunk and bool(HUNK_LINE.match(raw)))
        turn = bool(TURN_MARK.match(line)) or (turn and (not line.strip() or line[0].isspace()))
        lines.append(line)
        machine = fence or inside or hunk or turn or (output and not asking_sentence(line))
        shapes.append(None if not line.strip() else machine or laid_out(line))
    return [
        line
        for i, line in enumerate(lines)
        if shapes[i] is False and not (wedged(shapes, i) and not asking_sentence(line))
    ]


def still_fenced(inside: bool, line: str) -> bool:
    """Whether a fenced block goes on after ``line``: a fence opens one and closes it, and
    so does a fence at the end of a line of the block ("    at index.js:195:20```", as a
    chat's copy writes one: the question under it was read as code); a line fenced at both
    ends is a block of its own."""
    stripped = line.strip()
    opens = bool(FENCE.match(line))
    closes = bool(FENCE_END.search(stripped[3:] if opens else stripped))
    return not (opens or closes) if inside else opens and not closes


def laid_out(line: str) -> bool:
    """Whether ``line`` is laid out as a machine writes it (``LAID_OUT``, ``TRACE_LINE``,
    ``PASTED``)."""
    return bool(LAID_OUT.search(line) or TRACE_LINE.match(line) or PASTED.search(line))


def wedged(shapes: list[bool | None], index: int) -> bool:
    """Whether the lines just above and below ``index`` are both laid out."""
    return 0 < index < len(shapes) - 1 and bool(shapes[index - 1] and shapes[index + 1])


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


def pointer(sentence: str) -> bool:
    """A sentence that only points at a file or an address (``PATH``, ``POINTING``) and does
    not ask."""
    rest = PATH.sub(" ", sentence)
    return (
        rest != sentence
        and all(w in POINTING or function_word(w) for w in words(rest))
        and not asking_sentence(sentence)
    )


def asking_sentence(sentence: str) -> bool:
    return asks(sentence) or sentence.rstrip(CLOSING_STOPS).endswith(CJK_QUESTION_ENDS)


def subject(sentence: str) -> bool:
    """Whether ``sentence`` names what it is about: ``SUBJECT_WORDS`` content words."""
    content = [w for w in words(sentence) if not function_word(w) and w not in CHATTER]
    return len(content) >= SUBJECT_WORDS
