"""Tool calls as a session's messages record them, read back by their shape.

The parsers reduce each call to a note, ``[tool Bash: pnpm test]``, and each
result to one, ``[tool error Bash: exit 1: ...]`` (see ``parse.common``).
``read_calls`` pairs them again: a result named by its tool answers the
oldest open call of that tool, an unnamed one the oldest open call. A call
is then a command line (Bash, ``shell_command``, ``exec_command``, OpenCode's
bash: any tool whose name says shell, bash, exec, command or terminal), a
file write, edit or patch (Write, Edit, MultiEdit, ``apply_patch``, Copilot CLI's
``create``: ``FILE_NAMES``; or any input that is a patch), or something else; a
command line has a key (its program and subcommand: ``pytest``, ``npm test``,
``git commit``) so that a
failure and a later success of the same command meet. ``condense`` shortens
a long report: headings and conclusions first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memctl.lazy_re import lazy
from memctl.memories.narration import without_filler

# "[tool Bash: ls]", "[tool result Bash: ok]", "[tool error: exit 1: ...]"; a note cut to its
# width ends in "…" instead of "]"
NOTE_START = lazy(r"\[tool ")
# An absolute path of three parts or more: a call's note too long for its width
# (``parse.common.NOTE_WIDTH``) shows it by its last part, so that the width goes to the
# command and the file it acts on (Codex's `sed -n '1,320p' /Users/…/components/
# ProjectBudgetCard.tsx` lost the file's name), as the digest and recall's rows show
# commands ("git -C …/repiq commit --no-verify"). Here, not in ``parse.common``: recall
# shows a row's calls without loading the transcript parsers.
LONG_PATH = lazy(r"(?<![\w.~])/(?:[\w.@+-]+/){2,}([\w.@+-]+)")
SHORT_PATH = r"…/\1"  # LONG_PATH's replacement
# Opens a tool message holding a sub-agent's final report (the Agent / Task tool's result).
SUBAGENT_REPORT = "[subagent report]"
OUTCOMES = {"result": "ok", "error": "error", "refused": "refused"}
SHELL_NAMES = lazy(r"shell|bash|exec|command|terminal|^run$", re.I)
# Codex's code mode: its one tool, exec, runs JavaScript that calls the others ("const r =
# await tools.exec_command({cmd:"git status --short","workdir":"…"})", "await
# tools.web__run({…})"). The call is the inner tool's, and a command's line its cmd string:
# read whole, the script was a command line ("Ran: const r = await tools.exec_command(…",
# fresh3's review266, a SpecStory history of a Codex session)
# A shell's word that a program it was asked to run is not there (bash, zsh, cmd.exe,
# PowerShell): the call failed whatever its exit code, which a pipe's last step gives
# ("go test ./... 2>&1 | tail -8" printed "go: command not found" and exited 0, and was
# taken as the fix of the PowerShell call that failed the same way: fresh9's 67913b32)
NOT_FOUND = lazy(
    r"\b([\w.+-]+): command not found(?!:)|command not found: ([\w.+-]+)|"
    r"'([\w.+-]+)' is not recognized as|The term '([\w.+-]+)' is not recognized"
)
# A search that matched nothing exits 1 and prints nothing: at the end of a pipe it says the
# steps before it printed no such line ("npx tsc --noEmit 2>&1 | grep -i footer" once the
# type errors it looked for were fixed was left open as "still failing": fresh9's 09378d3b).
# It stays a failure for pairing: a later run of its command is still read as its retry
# (read as done, it was listed under Ran and pushed out fresh7's d5169a00's install)
FOUND_NOTHING = lazy(r"\A\s*exit(?: code)?:? 1\b\s*:?\s*(?:\(no output\))?\s*\Z", re.I)
SEARCHERS = frozenset("grep egrep fgrep rg ag findstr select-string sls".split())
CODE_MODE = lazy(r"^(?:(?:const|let|var) \w+ = )?await tools\.(\w+)\((.*)", re.S)
CODE_MODE_COMMAND = lazy(r"""\bcmd["']?\s*:\s*"((?:[^"\\]|\\.)*)""")
# Every client's file tools by their real names: Claude Code's Write, Edit, MultiEdit and
# NotebookEdit; Codex's apply_patch; OpenCode's write, edit, patch and multiedit; Gemini
# CLI's write_file and replace; Cursor's Write and StrReplace; Amp's create_file and
# edit_file; Copilot CLI's create and edit (1.0.102's tool list)
FILE_NAMES = lazy(r"write|edit|patch|create_file|replace|^create$", re.I)
# and the tools those words name that write no file: todo lists and plans, a shell's
# input (Codex's write_stdin, Copilot CLI's write_bash), a message to a sub-agent
# (Copilot CLI's write_agent), memctl's own profile (memory_profile_write)
NOT_FILE_NAMES = lazy(r"todo|stdin|plan|bash|agent|memory", re.I)
CREATING = lazy(r"write|create", re.I)
PATCH_FILE = lazy(r"\*\*\* (Add|Update|Delete) File: (\S+)")
SHELL_WRAPPER = lazy(r"^(?:\S*/)?(?:ba|z)?sh -l?c\s+")
SEGMENTS = lazy(r"\s*(?:&&|\|\||[;|()])\s*")
# a quoted string, or a quote left open where a note was cut
STEPS = lazy(r"\s*(?:&&|;)\s*")  # the steps of a command line run one after another
QUOTED = lazy(r"'[^']*(?:'|$)|\"(?:[^\"\\]|\\.)*(?:\"|$)")
# a quoted path that starts a step and is given arguments runs that program: "C:/Program
# Files/Go/bin/go.exe" test ./... (a string alone on a step is text: QUOTED_TEXT)
QUOTED_PROGRAM = lazy(r"""(^|[;&|(]\s*)(["'])([^"'\n]*[/\\][^"'\n]*)\2(?=\s+[^\s;&|])""")
ENV_ASSIGNMENT = lazy(r"^\w+=\S*$")
LEADING_SETUP = lazy(r"^(?:\(?\s*cd\s+[^&;|]+(?:&&|;)\s*)+")
OUTPUT_TRIM = lazy(r"\s+(?:\d?>&?\d?\S*|\|)\s*")
# programs whose work is reading: a command made only of these changed nothing
READ_ONLY = frozenset(
    "ls ll cat head tail less more pwd echo printf which whereis type wc tree find grep rg ag "
    "fd awk stat file du df cd env printenv date whoami sort uniq diff realpath readlink "
    "basename dirname true sleep ps pgrep lsof id uname jq sed nl cut xxd od open strings source . "
    "export set test [ [[ read".split()
)
# ... and on Windows, where the name's case does not matter: its programs that only read,
# and PowerShell's cmdlets whose verb only reads (Gemini CLI's sessions on Windows: "tasklist
# | findstr MSEdgeRedirect.exe" was left open as "still failing: exit 1" when it found
# nothing, "Get-PSDrive -Name E" listed as a command run; fresh8's m-gemini)
WINDOWS_READ_ONLY = frozenset(
    "tasklist findstr where where.exe whoami.exe hostname systeminfo ipconfig dir".split()
)
# (and those that only order, group, convert or print what they are given: "Get-ChildItem
# .ci-checks | Sort-Object LastWriteTime | Select-Object -First 5" read, fresh9's Copilot CLI)
READING_CMDLET = lazy(
    r"^(?:get|test|find|select|where|format|measure|resolve|sort|group|compare|convertfrom|"
    r"convertto)-\w+$|^write-(?:host|output)$",
    re.I,
)
# a step that writes the output of those before it to a file: a group's redirect ("(tasklist;
# get-service) > out.txt", split at its parenthesis), PowerShell's Out-File, Add-Content and
# Set-Content, tee. Gemini CLI's shell refused the first and ran "tasklist | Out-File ...":
# keyed by what they write, the second is the first's retry (fresh8's m-gemini)
WRITES_OUTPUT = lazy(r"^\s*(?:>|(?:out-file|add-content|set-content|tee)\b)", re.I)
GIT_READ = frozenset("status diff log show branch remote rev-parse ls-files blame fetch".split())
# git's options before the subcommand that take a value: "git -C ../shop commit" commits in
# ../shop, a repository of its own (the key names it: "git commit @../shop")
GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
# The shell's own words: those a command follows ("do cat $f", "then make"), and the clauses
# that run nothing ("for f in docs/*.md", "done"). A loop that only reads reads: Codex's
# "for f in docs/*.md; do echo "== $f"; cat "$f"; done" was listed as a command run
SHELL_LEADS = frozenset("do then else elif if while until !".split())
SHELL_CLAUSES = frozenset("for done fi esac case in".split())
# PowerShell: a variable given a value runs what gives it ("$r = Invoke-Pester ..." runs the
# tests, "$ev = "C:\...\events.jsonl"" nothing), and a string alone on a step only prints it
# ("====RETRO===="): fresh9's Copilot CLI session listed both as commands run
POWERSHELL_VARIABLE = lazy(r"^\$[\w:]+$")
QUOTED_TEXT = "''"  # a quoted string, as ``shell_command`` reads it
# runners that run the next word: "uv run pytest" is pytest
RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pnpm", "exec"),
    ("bundle", "exec"),
    ("pipenv", "run"),
    ("npx",),
    ("bunx",),
    ("time",),
    ("sudo",),
}
# programs whose first argument says what they do: "npm test", "python build.py"
SUBCOMMANDS = frozenset(
    "git npm pnpm yarn bun deno cargo go mix make just docker kubectl gh bd dotnet gradle mvn "
    "uv pip poetry rake bundle composer nx turbo python python3 node ruby bash sh act "
    "terraform helm rails php".split()
)
HEADING = lazy(r"^(?:#{1,6}\s+|\*\*[^*]+\*\*:?$|[A-Z][^.!?]{0,60}:$)")
CONCLUSION = lazy(
    r"summary|conclusion|recommend|finding|result|root cause|cause|answer|verdict|"
    r"key (?:point|takeaway)|tl;?dr|结论|总结|建议|原因",
    re.I,
)
MARKUP = lazy(r"^#{1,6}\s+|\*\*|^\s*(?:[-*•]|\d+[.)])\s+|`{3}\w*")
LIST_ITEM = lazy(r"^\s*(?:[-*•]|\d+[.)])\s+\S")
SENTENCE_END = lazy(r"(?<=[.!?。！？])\s+")
LINK_ONLY = lazy(r"^\s*(?:[-*•]|\d+[.)])\s+(?:\[[^\]]*\]\([^)]*\)|<?https?://\S+>?)\s*$")
# A condensed line too long for what is left keeps its first sentence, at most this long;
# less room than MIN_LINE_CHARS keeps nothing of it (a few words say nothing).
# (purpose, the verb of its evidence, what in a command line says it)
PURPOSES = (
    ("tests run", "passed", r"(?:test|tests|pytest|jest|vitest|mocha|rspec|phpunit|ctest)"),
    (
        "lint runs",
        "passed",
        r"(?:lint|ruff check|eslint|flake8|pylint|credo|clippy|golangci-lint|rubocop)",
    ),
    ("formatting runs", "passed", r"(?:format|fmt|prettier|black|gofmt)"),
    (
        "type checks run",
        "passed",
        r"(?:mypy|pyright|tsc|dialyzer|typecheck|type-check|ty check|pyre check|pytype)",
    ),
    ("the build runs", "succeeded", r"(?:build|compile)"),
)
CHECKS = ("tests run", "the build runs", "type checks run")
LINE_CHARS = 200
MIN_LINE_CHARS = 40


@dataclass
class Call:
    name: str
    detail: str
    outcome: str = ""  # ok, error, refused; "" when no result was recorded
    error: str = ""
    at: str = ""  # when it was called (the message's time)
    # where the command came from when not from the user: the host of a fetched page whose
    # address it holds, or of the code it fetches and runs (see ``digest``)
    fetched_from: str = ""
    runs_fetched_code: bool = False

    @property
    def succeeded(self) -> bool:
        """A call without a recorded result counts as done (older formats record none)."""
        return self.outcome in ("", "ok")

    @property
    def refused(self) -> bool:
        return self.outcome == "refused"

    def files(self) -> list[tuple[bool, str]]:
        """(created, path) of each file the call wrote: a patch's headers, else its path."""
        patched = PATCH_FILE.findall(self.detail)
        if patched:
            return [(action == "Add", path) for action, path in patched if action != "Delete"]
        path = self.detail.split()[0] if self.detail.split() else ""
        return [(bool(CREATING.search(self.name)), path)] if path else []


@dataclass(frozen=True)
class Command:
    text: str
    key: str  # program and subcommand; "" when the line runs nothing that changes anything
    read_only: bool
    keys: tuple[str, ...] = ()  # the key of each step that changes something, in order

    @property
    def core(self) -> str:
        """The command without a leading ``cd`` step and without the pipe or
        redirection that trims its output: ``cd web && pnpm test 2>&1 | tail`` is
        ``pnpm test``."""
        text = LEADING_SETUP.sub("", self.text)
        return OUTPUT_TRIM.split(text, maxsplit=1)[0].strip("() ")


def _notes(line: str) -> list[str]:
    """The notes of one line, without their brackets."""
    starts = [m.start() for m in NOTE_START.finditer(line)]
    pieces = [line[a:b] for a, b in zip(starts, [*starts[1:], len(line)], strict=True)]
    return [p.strip().removeprefix("[tool ").rstrip("]").rstrip("…").strip() for p in pieces]


def read_calls(text: str, calls: list[Call]) -> None:
    """Add the calls of one message's notes to ``calls``, and settle their outcomes."""
    for line in text.splitlines():
        if "[tool " not in line:
            continue
        for note in _notes(line):
            head, _, detail = note.partition(":")
            words = head.split()
            if not words:
                continue
            if words[0] in OUTCOMES:
                _settle(calls, OUTCOMES[words[0]], " ".join(words[1:]), detail.strip())
            else:
                calls.append(Call(*_code_mode(head.strip(), detail.strip())))


def _code_mode(name: str, detail: str) -> tuple[str, str]:
    """The tool and input a call of Codex's code mode makes (``CODE_MODE``), or the call's."""
    found = CODE_MODE.match(detail)
    if found is None:
        return name, detail
    inner, given = found.groups()
    command = CODE_MODE_COMMAND.search(given)
    if command is None:
        return inner, given
    return inner, re.sub(r"\\(.)", r"\1", command.group(1))  # the script's escapes undone


def _settle(calls: list[Call], outcome: str, tool: str, detail: str) -> None:
    """Give the oldest open call (of ``tool``, when named) its outcome."""
    open_calls = [c for c in calls[-50:] if not c.outcome]
    named = [c for c in open_calls if c.name.lower() == tool.lower()] if tool else []
    for call in (named or open_calls)[:1]:
        missing = outcome == OUTCOMES["result"] and not_found(detail, call.detail)
        call.outcome, call.error = OUTCOMES["error"] if missing else outcome, detail


def not_found(output: str, command: str) -> bool:
    """The output says a program the command runs is not there (``NOT_FOUND``)."""
    for found in NOT_FOUND.finditer(output):
        name = next(group for group in found.groups() if group)
        if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", command):
            return True
    return False


def found_nothing(call: Call) -> bool:
    """The call failed only as a search finds nothing: exit 1, no output, its command's last
    step a search (``FOUND_NOTHING``, ``SEARCHERS``)."""
    if call.succeeded or not FOUND_NOTHING.match(call.error):
        return False
    last = SEGMENTS.split(QUOTED.sub(QUOTED_TEXT, call.detail.strip()))[-1].split()[:1]
    return bool(last) and _program(last[0]).lower() in SEARCHERS


def tool_kind(name: str, detail: str) -> str:
    """``shell``, ``file`` or ``other``, from the tool's name and its input's shape."""
    if PATCH_FILE.search(detail) or "*** Begin Patch" in detail:
        return "file"
    if SHELL_NAMES.search(name):
        return "shell"
    if writes_files(name):
        return "file"
    return "other"


def writes_files(name: str) -> bool:
    """A tool that writes, edits or patches files, by its name (not a todo list's "write")."""
    return bool(FILE_NAMES.search(name)) and not NOT_FILE_NAMES.search(name)


def program_words(words: list[str]) -> list[str]:
    """The words from the program that does the work on (runners, settings and the shell's
    words before a command, ``do cat "$f"``, skipped)."""
    while words and (ENV_ASSIGNMENT.match(words[0]) or words[0] in SHELL_LEADS):
        words = words[1:]
    if len(words) > 1 and POWERSHELL_VARIABLE.match(words[0]) and words[1] == "=":
        return program_words(words[2:])
    for runner in RUNNERS:
        if tuple(words[: len(runner)]) == runner:
            return program_words(words[len(runner) :])
    if len(words) >= 3 and words[0].startswith("python") and words[1] == "-m":
        return words[2:]
    return words


def _segment_key(segment: str) -> tuple[str, bool]:
    """(key, read-only) of one segment of a command line."""
    words = program_words(segment.split())
    if not words or words[0] in SHELL_CLAUSES or words == [QUOTED_TEXT]:
        return "", True
    program = _program(words[0])
    if program == "git":
        return _git_key(words[1:])
    args = [w for w in words[1:] if not w.startswith("-")]
    if program in READ_ONLY or program.lower() in WINDOWS_READ_ONLY:
        return program, True
    if READING_CMDLET.match(program):
        return program, True
    if program in SUBCOMMANDS and args:
        return f"{program} {args[0].strip(chr(34) + chr(39))}", False
    return program, False


def _program(word: str) -> str:
    """A program's name from the word that runs it: a path by its last part, a Windows
    one's ``.exe`` left out ("C:/Go/bin/go.exe" test is ``go test``, as on the PATH)."""
    name = re.split(r"[/\\]", word)[-1] or word  # a lone "\" continues a line: no path
    return name[: -len(".exe")] if name.lower().endswith(".exe") else name


def _git_key(words: list[str]) -> tuple[str, bool]:
    """(key, read-only) of a git command's words after ``git``: its subcommand, and the
    directory ``-C`` names."""
    where = ""
    while words and words[0].startswith("-"):
        if words[0] in GIT_VALUED and len(words) > 1:
            where = f" @{words[1].rstrip('/')}" if words[0] == "-C" else where
            words = words[1:]
        words = words[1:]
    if not words:
        return "git", True
    return f"git {words[0]}{where}", words[0] in GIT_READ


def shell_command(detail: str) -> Command:
    """A command line as a ``Command``: its text without a shell wrapper, its key and
    whether it only reads. A step that writes the output before it to a file
    (``WRITES_OUTPUT``) writes, and is keyed by what it writes: its first program."""
    text = SHELL_WRAPPER.sub("", detail.strip()).strip()
    if QUOTED.fullmatch(text):  # the wrapper's one argument, not a quoted program's path
        text = text.strip("'\"")
    named = QUOTED_PROGRAM.sub(lambda found: found[1] + _program(found[3]), text)
    unquoted = QUOTED.sub(QUOTED_TEXT, named)  # a | or ; inside quotes splits nothing
    segments = [s for s in SEGMENTS.split(unquoted) if s.strip() not in ("", "\\")]
    keys = [_segment_key(s) for s in segments if not WRITES_OUTPUT.match(s)]
    acting = [key for key, read_only in keys if not read_only]
    if not acting and keys and len(keys) < len(segments):
        acting = [keys[0][0]]
    return Command(text, acting[0] if acting else "", not acting, tuple(acting))


def condense(text: str, limit: int) -> str:
    """A report within ``limit`` characters, on one line: whole when it fits; else its
    conclusions first, then its headings and opening, then its list items (findings,
    issues, steps), then the rest, in the report's order. A line too long for what is left
    keeps its first sentence (cut to LINE_CHARS) rather than nothing."""
    text = without_filler(text)
    raw = [line.strip() for line in text.splitlines()]
    lines = [MARKUP.sub("", line).strip() for line in raw]
    flat = joined(line for line in lines if line)
    if len(flat) <= limit:
        return flat
    ranks = _ranks(raw)
    chosen: dict[int, str] = {}
    room = limit
    for rank in (0, 1, 2, 3):
        for n, line in enumerate(lines):
            if ranks[n] == rank and line:
                piece = line if len(line) + 1 <= room else _opening(line, room - 1)
                if piece:
                    chosen[n] = piece
                    room -= len(piece) + 1
    if not chosen:
        return flat[: limit - 1] + "…"
    return joined(chosen[n] for n in sorted(chosen))


# A line ending in none of these, before one starting with a capital, ended a sentence
# (a heading, a list item): one line of text keeps that end, or the next line's first word
# reads as a name ("... regenerating it Removes unnecessary checks": "Removes", a person).
SENTENCE_CLOSE = ".!?:;,…。！？"


def joined(lines: Iterable[str]) -> str:
    """``lines`` on one line, a full stop after each that ended a sentence unmarked."""
    text = ""
    for line in lines:
        if text and text[-1] not in SENTENCE_CLOSE and line[:1].isupper():
            text += "."
        text = f"{text} {line}" if text else line
    return text


def _ranks(raw: list[str]) -> list[int]:
    """Each line's rank: 0 a conclusion, 1 a heading, the opening or a section's first
    line, 2 a list item, 3 the rest (and a list item that is only a link)."""
    ranks = []
    conclusion, opens = False, True
    for line in raw:
        if not line:
            ranks.append(3)
        elif HEADING.match(line) and not LIST_ITEM.match(line):
            conclusion, opens = bool(CONCLUSION.search(line)), True
            ranks.append(1)
            continue
        elif conclusion or CONCLUSION.match(MARKUP.sub("", line)):
            ranks.append(0)
        elif opens:
            ranks.append(1)
        else:
            ranks.append(2 if LIST_ITEM.match(line) and not LINK_ONLY.match(line) else 3)
        opens = opens and not line
    return ranks


def _opening(line: str, room: int) -> str:
    """The first sentence of ``line``, cut to LINE_CHARS (and ``room``) characters."""
    width = min(LINE_CHARS, room)
    if width < MIN_LINE_CHARS:
        return ""
    first = SENTENCE_END.split(line, maxsplit=1)[0]
    return first if len(first) <= width else first[: width - 1].rstrip() + "…"


def command_steps(command: str) -> list[str]:
    """The steps of a command line joined by ``&&`` or ``;`` outside quotes."""
    masked = QUOTED.sub(lambda quoted: "_" * len(quoted.group()), command)
    cuts = [(m.start(), m.end()) for m in STEPS.finditer(masked)]
    starts, ends = [0, *(end for _, end in cuts)], [*(start for start, _ in cuts), len(command)]
    return [command[a:b] for a, b in zip(starts, ends, strict=True)]


def command_purpose(command: str) -> tuple[str, str] | None:
    """What a command line does, from its words outside quotes (an ``echo "test"`` tests
    nothing) that are not part of a path or a name (``mkdir test-data`` neither)."""
    words = QUOTED.sub("", command)
    for purpose, verb, regex in PURPOSES:
        if re.search(rf"(?<![\w/.-]){regex}(?![\w/.-])", words, re.I):
            return purpose, verb
    return None
