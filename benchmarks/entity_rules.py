"""The knowledge graph's rules, measured: entities found in English and CJK sentences, and
a sample of the triples distillation stores from real sessions, for a hand check.

    .venv/bin/python benchmarks/entity_rules.py [--sessions DIR] [--sample N] [--seed S]

Part 1: each sentence of ``SENTENCES`` with the entities a reader names in it (written
before the rules ran on it); recall = the share of those the rules find, precision =
the share of what they find that is one of those, per language.
Part 2 (``--sessions``, default ``benchmarks/sessions/real/``): every session of the
manifest is distilled by the rules into one fresh store (as ``memctl ingest --wait``),
then ``--sample`` triples are drawn and printed with the memory that states each one:
judge each by hand (does the memory say it?). CPU seconds of the ingest are printed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memctl.api.ingest import IngestRequest, ingest  # noqa: E402
from memctl.config import load_settings  # noqa: E402
from memctl.context import Context  # noqa: E402
from memctl.ingest.entities import entities  # noqa: E402
from memctl.store import graph as store  # noqa: E402
from memctl.store.memories import get_memories  # noqa: E402

REAL = Path(__file__).resolve().parent / "sessions" / "real"
# (language, sentence, the entities a reader names in it)
SENTENCES: list[tuple[str, str, set[str]]] = [
    ("en", "We moved the orders database to PostgreSQL 16 last week.", {"PostgreSQL"}),
    ("en", "Run `make test` before you push to github.com/acme/billing.", {"make test", "acme/billing"}),
    ("en", "Alice works at Acme and lives in Berlin.", {"Alice", "Acme", "Berlin"}),
    ("en", "The bug was in src/parser/lexer.py, fixed on 2024-03-01.", {"src/parser/lexer.py", "2024-03-01"}),
    ("en", "Deploy with kubectl; the Atlas project uses Redis for its queue.", {"Kubernetes", "Atlas", "Redis"}),
    ("en", "Caroline: I moved from Sweden four years ago.", {"Caroline", "Sweden"}),
    ("en", "Bob prefers ruff over flake8 and runs pytest in CI.", {"Bob", "ruff", "flake8", "pytest"}),
    ("en", "Our docs live on GitHub Pages, built by GitHub Actions.", {"GitHub", "GitHub Actions", "GitHub Pages"}),
    ("en", "Melanie: I signed up for a pottery class with Jon in Paris.", {"Melanie", "Jon", "Paris"}),
    ("en", "The user writes TypeScript with React and deploys to AWS.", {"TypeScript", "React", "AWS"}),
    ("zh", "我们在上海市的公司用 PostgreSQL，张三先生负责。", {"上海市", "PostgreSQL", "张三"}),
    ("zh", "李老师推荐我读《三体》，下周去北京市开会。", {"李", "三体", "北京市"}),
    ("zh", "部署脚本在 deploy/run.sh，用 Docker 打包。", {"deploy/run.sh", "Docker"}),
    ("zh", "王芳在阿里巴巴公司工作，负责 Redis 集群。", {"王芳", "阿里巴巴公司", "Redis"}),
    ("ja", "田中さんはポストグレスを使う。東京都に住む。", {"田中", "ポストグレス", "東京都"}),
    ("ja", "佐藤さんと大阪府で「新規プロジェクト」の話をした。", {"佐藤", "大阪府", "新規プロジェクト"}),
    ("ja", "`npm test` が失敗したので package.json を直した。", {"npm test", "package.json"}),
    ("ja", "鈴木先生はトヨタ自動車会社で Python を教えている。", {"鈴木", "トヨタ自動車会社", "Python"}),
    ("ko", "김민수 씨는 서울에서 Redis를 사용합니다.", {"김민수", "Redis"}),
    ("ko", "박지훈 님이 src/main.rs 파일을 고쳤어요.", {"박지훈", "src/main.rs"}),
    ("ko", "이영희 선생님은 GitHub 에서 Kubernetes 설정을 관리해요.", {"이영희", "GitHub", "Kubernetes"}),
    ("ko", "우리는 `cargo build` 로 Rust 프로젝트를 빌드한다.", {"cargo build", "Rust"}),
]


def entity_scores() -> None:
    tally: dict[str, list[int]] = {}
    for language, sentence, gold in SENTENCES:
        found = {e.name for e in entities(sentence)}
        counts = tally.setdefault(language, [0, 0, 0, 0])  # gold, hit, found, right
        counts[0] += len(gold)
        counts[1] += len(gold & found)
        counts[2] += len(found)
        counts[3] += len(found & gold)
        missed, extra = gold - found, found - gold
        if missed or extra:
            print(f"  [{language}] {sentence}  missed {sorted(missed)} extra {sorted(extra)}")
    for language, (gold, hit, found, right) in tally.items():
        recall = 100 * hit / gold if gold else 0.0
        precision = 100 * right / found if found else 0.0
        print(f"{language}: recall {recall:.1f} % ({hit}/{gold}), precision {precision:.1f} %")


def triple_sample(directory: Path, sample: int, seed: int) -> None:
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(Path(home), overrides={"ingest.spawn_worker": False})
        with Context(settings) as ctx:
            began = time.process_time()
            for entry in manifest["sessions"]:
                transcript = str(directory / entry["file"])
                ingest(ctx, IngestRequest(transcript=transcript, client=entry["client"], wait=True))
            cpu = time.process_time() - began
            every = store.triples_touching(
                ctx.db, [e.id for e in store.entities_like(ctx.db, "", 100_000)], False, 100_000
            )
            counts = store.graph_counts(ctx.db)
            print(f"{len(manifest['sessions'])} sessions, ingest {cpu:.1f} s CPU: {counts}")
            chosen = random.Random(seed).sample(every, min(sample, len(every)))
            memories = get_memories(ctx.db, [t.sources[0].memory_id for t in chosen])
            for number, triple in enumerate(chosen, 1):
                memory = memories[triple.sources[0].memory_id]
                text = " ".join(memory.content.split())[:220]
                print(f"{number:3}. {triple.text}\n     <- {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, default=REAL)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    entity_scores()
    if args.sample:
        triple_sample(args.sessions, args.sample, args.seed)


if __name__ == "__main__":
    main()
