"""Per-prompt injection with what real prompts carry besides their question (issue 33,
s32-gate): does the per-prompt hook still add the block it adds for the plain question,
and does an unrelated prompt still get none?

The questions and unrelated prompts of ``benchmarks.injection`` (LoCoMo dev categories 1-4,
one store per conversation), each asked plain and then with one addition of each kind in
``KINDS``: a pasted token, a log, a traceback, a file path, a code block, a long tail, a
second question, politeness, a Japanese or Korean line. Each addition is built by rule from
the kind's pool of material, with a seed of its own (the prompt's text, the kind, the seed):
the same prompt gets the same addition on every run.

Two halves, as in the other benchmarks: odd conversations and odd unrelated ids are the
tune half, even ones the check half. The pools are halved too: the tune half's additions
come from the even entries of each pool, the check half's from the odd ones, so what
memctl's rules were tuned on never holds the check half's material.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import locomo
from benchmarks.embedcache import EmbeddingCache
from benchmarks.injection import (
    UNRELATED,
    K,
    Progress,
    each_conversation,
    recalled,
    unrelated_prompts,
)
from benchmarks.metrics import recall_at
from benchmarks.paraphrase import HALVES
from benchmarks.retrievers import Question, memctl_prompt
from memctl.config import Settings
from memctl.context import Context

Rng = random.Random

PLAIN = "plain"

# A pasted credential, as people paste one to ask about it: the label, then the secret.
TOKEN_LABELS = (
    "My token: {}",
    "here's the key I'm using {}",
    "(token = {})",
    "export GITHUB_TOKEN={}",
    "Authorization: Bearer {}",
    "api key is {} if that matters",
)
TOKEN_SHAPES = ("ghp_{36}", "sk-proj-{40}", "AKIA{16}", "xoxb-{12}-{24}", "glpat-{20}", "hf_{34}")

LOG_LINES = (
    "{date} INFO  [main] Starting service on port {port}",
    "{date} WARN  [pool-{n}] Connection pool nearly exhausted ({n}/{port} in use)",
    "{date} ERROR [worker-{n}] request failed: upstream timed out after {n}s",
    "{date} DEBUG cache miss for key user:{port}:session",
    "{date} ERROR Retrying job {port} (attempt {n} of 5)",
    "[{date}] kubelet: Back-off restarting failed container app-{n}",
    "{date} INFO  GET /api/v1/items/{port} 502 {n}ms",
    "npm ERR! code ELIFECYCLE errno {n}",
)
TRACEBACKS = (
    'Traceback (most recent call last):\n  File "/srv/app/{mod}.py", line {n}, in handle\n'
    "    result = client.fetch(url)\nConnectionResetError: [Errno 104] Connection reset by peer",
    'Exception in thread "main" java.lang.NullPointerException\n'
    "\tat com.example.{mod}.Service.run(Service.java:{n})\n"
    "\tat com.example.Main.main(Main.java:12)",
    'Traceback (most recent call last):\n  File "{mod}/cli.py", line {n}, in <module>\n'
    "    main()\nKeyError: 'config'",
    "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', "
    "src/{mod}.rs:{n}:5\nnote: run with `RUST_BACKTRACE=1` for a backtrace",
    "TypeError: Cannot read properties of undefined (reading 'map')\n"
    "    at render ({mod}.tsx:{n}:21)\n    at commitRoot (react-dom.development.js:2653:7)",
    "goroutine 1 [running]:\nmain.load(0x0)\n\t/home/dev/{mod}/main.go:{n} +0x1d\nexit status 2",
)
MODULES = ("billing", "ingest", "scheduler", "auth", "reports", "sync")
PATHS = (
    "src/components/Header.tsx",
    "~/projects/site/config/settings.yaml",
    "./scripts/deploy.sh",
    "/var/log/nginx/error.log",
    "lib/utils/date_format.py",
    "docs/notes/2023-plan.md",
)
PATH_FRAMES = ("(see {})", "I have {} open.", "It's in {}", "file: {}")
CODE = (
    "```python\ndef total(items):\n    return sum(i.price for i in items)\n```",
    "```js\nconst res = await fetch(url, { method: 'POST' });\nconsole.log(res.status);\n```",
    "```sql\nSELECT id, name FROM users WHERE created_at > now() - interval '7 days';\n```",
    '```bash\nfor f in *.csv; do wc -l "$f"; done\n```',
    "```yaml\nservices:\n  web:\n    image: nginx:1.25\n    ports: ['8080:80']\n```",
    '```go\nfunc main() {\n\tfmt.Println(strings.Join(os.Args[1:], " "))\n}\n```',
)
TAILS = (
    "I've been going back and forth on this for a while and I'm not sure what I'm missing.",
    "No rush at all, just trying to get my head around it before the meeting tomorrow.",
    "Sorry if this is a silly question, it's been a long week and my brain is fried.",
    "I asked about something similar before but I can't remember where we ended up.",
    "Any pointers would be great, I'd rather not start from scratch again.",
    "My manager wants an update by Friday so I'm trying to pull everything together.",
)
SECOND_QUESTIONS = (
    "Also, can you fix the failing lint check?",
    "And what's the best way to speed up the test suite?",
    "Also, should we rename the config file?",
    "Oh and how do I undo my last git commit?",
    "Separately, can you write a short summary for the changelog?",
    "Also what time zone does the server use?",
)
GREETINGS = ("Hi! ", "Hey, quick question. ", "Hello there. ", "Hi again, ", "Morning! ", "")
THANKS = (
    " Thanks!",
    " Thank you so much.",
    " Thanks in advance, really appreciate it!",
    " Cheers.",
    " Please and thank you :)",
    " ty!",
)
CJK_LINES = (
    "よろしくお願いします",
    "이거 확인 부탁드려요",
    "ありがとうございます。急ぎではないです",
    "감사합니다",
    "前に話した内容を思い出したい",
    "저번에 얘기했던 거 기억나요",
)


def _pick(pool: tuple[str, ...], half: str, rng: Rng) -> str:
    """An entry of ``pool`` from ``half``'s part: the even entries for tune, the odd ones
    for check."""
    return rng.choice(pool[HALVES.index(half) :: 2])


def _secret(shape: str, rng: Rng) -> str:
    alphabet = string.ascii_letters + string.digits
    parts = shape.split("{")
    out = parts[0]
    for part in parts[1:]:
        size, rest = part.split("}")
        out += "".join(rng.choice(alphabet) for _ in range(int(size))) + rest
    return out


def token(text: str, half: str, rng: Rng) -> str:
    label = _pick(TOKEN_LABELS, half, rng)
    return f"{text} {label.format(_secret(_pick(TOKEN_SHAPES, half, rng), rng))}"


def _date(rng: Rng) -> str:
    day = f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    return f"{day} 1{rng.randint(0, 9)}:{rng.randint(10, 59)}:0{rng.randint(0, 9)}"


def log(text: str, half: str, rng: Rng) -> str:
    lines = [
        _pick(LOG_LINES, half, rng).format(
            date=_date(rng), port=rng.randint(1000, 9999), n=rng.randint(1, 64)
        )
        for _ in range(rng.randint(3, 8))
    ]
    return text + "\n\n" + "\n".join(lines)


def traceback(text: str, half: str, rng: Rng) -> str:
    trace = _pick(TRACEBACKS, half, rng).format(
        mod=_pick(MODULES, half, rng), n=rng.randint(10, 400)
    )
    return f"{text}\n{trace}"


def path(text: str, half: str, rng: Rng) -> str:
    return f"{text} {_pick(PATH_FRAMES, half, rng).format(_pick(PATHS, half, rng))}"


def code(text: str, half: str, rng: Rng) -> str:
    return f"{text}\n\n{_pick(CODE, half, rng)}"


def tail(text: str, half: str, rng: Rng) -> str:
    part = list(TAILS[HALVES.index(half) :: 2])
    rng.shuffle(part)
    return " ".join([text, *part[:2]])


def several(text: str, half: str, rng: Rng) -> str:
    return f"{text} {_pick(SECOND_QUESTIONS, half, rng)}"


def polite(text: str, half: str, rng: Rng) -> str:
    return f"{_pick(GREETINGS, half, rng)}{text}{_pick(THANKS, half, rng)}"


def cjk(text: str, half: str, rng: Rng) -> str:
    return f"{text} {_pick(CJK_LINES, half, rng)}"


def bare(text: str, half: str, rng: Rng) -> str:
    """The question as people type it in a hurry: no question mark, lower case."""
    return text.rstrip(" ?").lower()


KINDS: dict[str, Callable[[str, str, Rng], str]] = {
    "token": token,
    "log": log,
    "traceback": traceback,
    "path": path,
    "code": code,
    "tail": tail,
    "several": several,
    "polite": polite,
    "cjk": cjk,
    "bare": bare,
}


def perturbed(text: str, kind: str, half: str, seed: int = 0) -> str:
    """``text`` with one addition of ``kind``, the same on every run."""
    digest = hashlib.sha256(f"{seed}\0{kind}\0{text}".encode()).digest()
    return KINDS[kind](text, half, random.Random(int.from_bytes(digest[:8], "big")))


@dataclass
class Tally:
    """One kind's sums over one half."""

    questions: int = 0
    evidence: float = 0.0  # share of evidence turns injected, summed
    blocks: int = 0  # questions given a block
    lost: int = 0  # given a block plain, none with the addition
    unrelated: int = 0
    unrelated_blocks: int = 0
    # with ``recall``: `memctl recall`'s recall@K, and its unrelated answers with a clear match
    recall: float = 0.0
    unrelated_clear: int = 0


@dataclass
class Report:
    tallies: dict[tuple[str, str], Tally] = field(default_factory=dict)
    per_question: list[dict[str, object]] = field(default_factory=list)

    def tally(self, kind: str, half: str) -> Tally:
        return self.tallies.setdefault((kind, half), Tally())

    def rows(self) -> list[dict[str, object]]:
        rows = []
        for kind in (PLAIN, *KINDS):
            row: dict[str, object] = {"addition": kind}
            for half in HALVES:
                t = self.tally(kind, half)
                asked, pairs = max(1, t.questions), max(1, t.unrelated)
                row[f"{half}: evidence injected"] = round(100 * t.evidence / asked, 1)
                row[f"{half}: given a block"] = round(100 * t.blocks / asked, 1)
                row[f"{half}: blocks lost"] = t.lost
                row[f"{half}: unrelated given a block"] = round(100 * t.unrelated_blocks / pairs, 1)
            rows.append(row)
        return rows


def ask(
    ctx: Context,
    conversation: locomo.Conversation,
    keys: dict[str, str],
    unrelated: list[tuple[str, str]],
    report: Report,
    seed: int,
    with_recall: bool = False,
) -> None:
    """Every question of one conversation's store plain and with each addition, then every
    unrelated prompt the same way; with ``with_recall``, `memctl recall` too."""
    for case in conversation.cases:
        if case.category == 5:
            continue  # adversarial, as in benchmarks.injection
        half = HALVES[0] if case.tune else HALVES[1]
        plain_given = False
        record: dict[str, object] = {"question": case.question.text, "half": half}
        for kind in (PLAIN, *KINDS):
            text = case.question.text
            text = text if kind == PLAIN else perturbed(text, kind, half, seed)
            question = Question(text, case.question.now)
            given = [keys[i] for i in memctl_prompt(ctx, question, K)]
            t = report.tally(kind, half)
            if with_recall:
                ranked = [keys[i] for i in recalled(ctx, question)]
                t.recall += recall_at(ranked, case.evidence, K)
            t.questions += 1
            t.evidence += recall_at(given, case.evidence, len(given)) if given else 0.0
            t.blocks += bool(given)
            if kind == PLAIN:
                plain_given = bool(given)
            t.lost += plain_given and not given
            record[kind] = len(given)
        report.per_question.append(record)
    asked_at = conversation.cases[0].question.now if conversation.cases else None
    for half, text in unrelated:
        for kind in (PLAIN, *KINDS):
            prompt = text if kind == PLAIN else perturbed(text, kind, half, seed)
            t = report.tally(kind, half)
            t.unrelated += 1
            question = Question(prompt, asked_at)
            blocked = bool(memctl_prompt(ctx, question, K))
            t.unrelated_blocks += blocked
            if with_recall:
                t.unrelated_clear += bool(recalled(ctx, question, clear_only=True))
            if blocked:
                report.per_question.append({"unrelated": prompt, "kind": kind, "half": half})


def run(
    settings: Settings,
    cache: EmbeddingCache,
    data: Path,
    unrelated_path: Path = UNRELATED,
    limit: int | None = None,
    seed: int = 0,
    with_recall: bool = False,
    progress: Progress | None = None,
) -> Report:
    unrelated = unrelated_prompts(unrelated_path)
    report = Report()
    each_conversation(
        settings,
        cache,
        data,
        lambda ctx, conversation, keys: ask(
            ctx, conversation, keys, unrelated, report, seed, with_recall
        ),
        limit,
        progress,
    )
    return report
