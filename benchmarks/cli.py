"""bench locomo | longmemeval | paraphrase | injection | real-questions | scale | chart: quality
and speed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from memctl.cli.common import JsonOption, new_typer, settings_for
from memctl.cli.render import console, err_console, print_json
from memctl.errors import InputError, UsageError

if TYPE_CHECKING:
    from benchmarks.embedcache import EmbeddingCache
    from benchmarks.report import QualityReport
    from benchmarks.scale import ScaleRow
    from memctl.config import Settings

app = new_typer()

GATED = "memctl+llm-gate"  # memctl with recall.llm_gate, the judge's answers replayed

DataOption = Annotated[
    Path,
    typer.Option(
        "--data", help="The benchmark's JSON file (.json or .json.gz).", show_default=False
    ),
]
LimitOption = Annotated[
    int | None, typer.Option("--limit", min=1, help="Run only the first N questions.")
]
RetrieverOption = Annotated[
    list[str] | None,
    typer.Option(
        "--retriever",
        "-r",
        help="Retriever to compare (repeatable; default memctl, bm25 and vector).",
    ),
]
DetailsOption = Annotated[
    Path | None,
    typer.Option(
        "--details",
        help="Write one JSON line per question: where each retriever ranked its evidence.",
    ),
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="Keep embeddings in this directory so a rerun embeds nothing twice.",
    ),
]
SessionsOption = Annotated[
    bool,
    typer.Option(
        "--sessions",
        help="Store the turns as session messages with their vectors, not as memories "
        "(rank them with --retriever memctl-sessions).",
    ),
]
MessageVectorsOption = Annotated[
    bool,
    typer.Option(
        "--message-vectors/--no-message-vectors",
        help="With --sessions: store the messages' vectors as the slow path would under the "
        "run's recall.message_vectors (auto by default: a store of up to its limit of messages).",
    ),
]


def _open_cache(ctx: typer.Context, cache_dir: Path | None) -> tuple[Settings, EmbeddingCache]:
    from benchmarks.embedcache import open_cache

    settings = settings_for(ctx)
    return settings, open_cache(settings, cache_dir)


def write_lines(path: Path, records: Iterable[object]) -> None:
    """``--details``: one JSON line per record."""
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def print_halves(title: str, rows: list[dict[str, Any]]) -> None:
    """A table of figures by half: one row per figure, one column per ``rows``' half."""
    table = Table(title=title)
    table.add_column("figure")
    for row in rows:
        table.add_column(str(row["half"]), justify="right")
    for name in list(rows[0])[1:]:
        table.add_row(name, *(str(row[name]) for row in rows))
    console.print(table)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )


def _quality(
    ctx: typer.Context,
    benchmark: str,
    data: Path,
    limit: int | None,
    retrievers: list[str] | None,
    cache_dir: Path | None,
    details: Path | None,
    as_json: bool,
    **layout: object,
) -> None:
    from benchmarks import locomo, longmemeval
    from benchmarks.registry import choose

    module = {"locomo": locomo, "longmemeval": longmemeval}[benchmark]
    chosen = choose(retrievers)
    settings, cache = _open_cache(ctx, cache_dir)
    with _progress() as progress:
        task = progress.add_task(f"{benchmark} questions", total=None)
        report = module.run(
            settings,
            cache,
            data,
            chosen,
            limit,
            lambda done, total: progress.update(task, completed=done, total=total),
            **layout,
        )
    if details is not None:
        write_lines(details, report.per_question)
    if as_json:
        print_json(report.to_dict())
    else:
        render_quality(report, percent=benchmark == "locomo")


@app.command()
def locomo(
    ctx: typer.Context,
    data: DataOption,
    limit: LimitOption = None,
    retriever: RetrieverOption = None,
    cache: CacheOption = None,
    details: DetailsOption = None,
    as_json: JsonOption = False,
    sessions: SessionsOption = False,
    message_vectors: MessageVectorsOption = True,
) -> None:
    """LoCoMo: Recall@k of the evidence turns, per category, for each retriever."""
    layout = {"sessions": sessions, "message_vectors": message_vectors}
    _quality(ctx, "locomo", data, limit, retriever, cache, details, as_json, **layout)


@app.command()
def longmemeval(
    ctx: typer.Context,
    data: DataOption,
    limit: LimitOption = None,
    retriever: RetrieverOption = None,
    cache: CacheOption = None,
    details: DetailsOption = None,
    as_json: JsonOption = False,
    sessions: SessionsOption = False,
    message_vectors: MessageVectorsOption = True,
    half: Annotated[
        str | None,
        typer.Option(
            "--half",
            help="Only the tune (odd-numbered) or check (even-numbered) questions.",
            click_type=click.Choice(["tune", "check"]),
        ),
    ] = None,
    every: Annotated[
        int,
        typer.Option(
            "--every", min=1, help="Only every N-th question (the file is sorted by type)."
        ),
    ] = 1,
    embedded_only: Annotated[
        bool,
        typer.Option(
            "--embedded-only",
            help="Only the questions whose turns --cache has embedded already (resume a run "
            "cut short without embedding more; the report counts the questions run).",
        ),
    ] = False,
) -> None:
    """LongMemEval: session recall_all@k and NDCG@k, turn recall@10, per question type."""
    layout = {
        "sessions": sessions,
        "message_vectors": message_vectors,
        "half": half,
        "every": every,
        "embedded_only": embedded_only,
    }
    _quality(ctx, "longmemeval", data, limit, retriever, cache, details, as_json, **layout)


@app.command()
def paraphrase(
    ctx: typer.Context,
    distractors: Annotated[
        list[Path] | None,
        typer.Option(
            "--distractors",
            help="LoCoMo or LongMemEval files whose dialog turns fill the larger stores.",
        ),
    ] = None,
    n: Annotated[
        str, typer.Option("--n", help="Store sizes, comma-separated (30: the facts alone).")
    ] = "30,1000",
    retriever: RetrieverOption = None,
    cache: CacheOption = None,
    llm_answers: Annotated[
        Path | None,
        typer.Option(
            "--llm-answers",
            help="Also run memctl with recall.llm_gate, the judge answered from this file of "
            "recorded answers by a loopback Ollama server; requests it has no answer for are "
            "written to FILE.missing.json (a file that does not exist records them all).",
        ),
    ] = None,
    details: Annotated[
        Path | None,
        typer.Option(
            "--details",
            help="Write one JSON line per question: each retriever's top 5, and for a fact "
            "memctl misses, where it was lost (`lost`: the stage and reason --why-not gives).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Questions in other words than their fact, and unrelated ones: found@5 and silence."""
    from benchmarks.paraphrase import run
    from benchmarks.registry import choose
    from benchmarks.retrievers import memctl_recall

    chosen = choose(retriever or ["memctl", "memctl-clear", "vector"])
    settings, embed_cache = _open_cache(ctx, cache)
    records: list[dict[str, object]] = []
    with err_console.status("paraphrase stores"):
        rows = run(settings, embed_cache, _counts(n), distractors or [], chosen, details=records)
    if details is not None:
        write_lines(details, records)
    if llm_answers is not None:
        from benchmarks import llm_replay
        from memctl.config import settings_from_flags

        replay, server = llm_replay.start(llm_answers)
        options = ctx.find_root().obj or {}
        gate = {"recall.llm_gate": "true", "ollama.host": replay.url}
        gated = settings_from_flags(options.get("home"), {**(options.get("config") or {}), **gate})
        try:
            with err_console.status("paraphrase stores, LLM gate replayed"):
                gated_rows = run(
                    gated, embed_cache, _counts(n), distractors or [], {GATED: memctl_recall}
                )
        finally:
            server.stop()
        rows = sorted([*rows, *gated_rows], key=lambda row: (row["store"], row["half"]))
        missing = llm_answers.with_name(llm_answers.stem + ".missing.json")
        if replay.missing:
            replay.write_missing(missing)
        err_console.print(
            f"LLM judge: {replay.answered} requests answered from {llm_answers.name}, "
            f"{len(replay.missing)} with no recorded answer"
            + (f" (written to {missing})" if replay.missing else "")
        )
    if as_json:
        print_json(rows)
        return
    table = Table(title="Paraphrase questions and unrelated ones (tune: odd ids, check: even)")
    columns = list(dict.fromkeys(column for row in rows for column in row))  # named: memctl's
    for column in columns:
        table.add_column(column, justify="right" if column != "retriever" else "left")
    for row in rows:
        table.add_row(*(str(row.get(column, "-")) for column in columns))
    console.print(table)


@app.command()
def injection(
    ctx: typer.Context,
    data: DataOption,
    unrelated: Annotated[
        Path | None,
        typer.Option(
            "--unrelated",
            help="JSON lines of unrelated prompts ({id, question}); "
            "default benchmarks/paraphrase/unrelated.jsonl.",
        ),
    ] = None,
    limit: LimitOption = None,
    cache: CacheOption = None,
    details: DetailsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Per-prompt injection on LoCoMo: evidence in the block, and blocks for unrelated prompts."""
    from benchmarks import injection as bench

    settings, embed_cache = _open_cache(ctx, cache)
    with _progress() as progress:
        task = progress.add_task("conversations", total=None)
        report = bench.run(
            settings,
            embed_cache,
            data,
            unrelated or bench.UNRELATED,
            limit,
            lambda done, total: progress.update(task, completed=done, total=total),
        )
    if details is not None:
        write_lines(details, report.per_question)
    rows = report.rows()
    if as_json:
        print_json(rows)
        return
    print_halves("Per-prompt injection (tune: odd conversations and ids, check: even)", rows)


@app.command("injection-noise")
def injection_noise(
    ctx: typer.Context,
    data: DataOption,
    limit: LimitOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the additions.")] = 0,
    with_recall: Annotated[
        bool, typer.Option("--recall", help="Also `memctl recall` on the same prompts.")
    ] = False,
    cache: CacheOption = None,
    details: DetailsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Per-prompt injection with what real prompts carry: tokens, logs, code, long tails."""
    from benchmarks import perturb as bench

    settings, embed_cache = _open_cache(ctx, cache)
    with _progress() as progress:
        task = progress.add_task("conversations", total=None)
        report = bench.run(
            settings,
            embed_cache,
            data,
            limit=limit,
            seed=seed,
            with_recall=with_recall,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    if details is not None:
        write_lines(details, report.per_question)
    rows = report.rows()
    if as_json:
        print_json(rows)
        return
    columns = ["evidence injected", "given a block", "blocks lost", "unrelated given a block"]
    if with_recall:
        columns += ["recall@5", "unrelated with a clear match"]
    table = Table(title="Per-prompt injection with additions (tune / check)")
    table.add_column("addition")
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        cells = [" / ".join(str(row[f"{h}: {c}"]) for h in ("tune", "check")) for c in columns]
        table.add_row(str(row["addition"]), *cells)
    console.print(table)


@app.command("real-prompts")
def real_prompts(
    ctx: typer.Context,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="A memctl home holding the dev set's store (as real-questions fills it), "
            "copied first; default: fill one here.",
        ),
    ] = None,
    cache: CacheOption = None,
    details: DetailsOption = None,
    as_json: JsonOption = False,
) -> None:
    """The per-prompt hook on real prompts: what it asks, and blocks lost to real pastes."""
    from benchmarks import real_prompts as bench
    from benchmarks.haystack import CachedEmbedder

    settings = settings_for(ctx)
    embedder = CachedEmbedder(_open_cache(ctx, cache)[1]) if cache else None
    with err_console.status("asking"):
        report = bench.run(settings, embedder, store)
    if details is not None:
        write_lines(details, report.details)
    rows = report.rows()
    if as_json:
        print_json(rows)
        return
    print_halves("Per-prompt hook on real prompts and real pastes", rows)


@app.command("real-questions")
def real_questions(
    ctx: typer.Context,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Sessions with manifest.json and questions.json "
            "(default benchmarks/sessions/real).",
            show_default=False,
        ),
    ] = None,
    others: Annotated[
        Path | None,
        typer.Option(
            "--others",
            help="More sessions (a manifest.json) for the same store, with no questions "
            "(default benchmarks/sessions).",
            show_default=False,
        ),
    ] = None,
    no_others: Annotated[
        bool, typer.Option("--no-others", help="Only the sessions the questions are about.")
    ] = False,
    heldout: Annotated[
        bool,
        typer.Option(
            "--heldout",
            help="The held-out split's questions (benchmarks/sessions/heldout), its sessions "
            "in one store with the dev set's; never tune on it.",
        ),
    ] = False,
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh",
            help="The fresh split's questions (benchmarks/sessions/fresh), its sessions in "
            "one store with the dev set's; tune on its fresh-tune half only.",
        ),
    ] = False,
    fresh2: Annotated[
        bool,
        typer.Option(
            "--fresh2",
            help="The second fresh split's questions (benchmarks/sessions/fresh2), its "
            "sessions in one store with the dev set's; studied since s31 (no longer blind).",
        ),
    ] = False,
    fresh3: Annotated[
        bool,
        typer.Option(
            "--fresh3",
            help="The third fresh split's questions (benchmarks/sessions/fresh3: SpecStory "
            "histories), its sessions in one store with the dev set's; blind likewise.",
        ),
    ] = False,
    fresh4: Annotated[
        bool,
        typer.Option(
            "--fresh4",
            help="The fourth fresh split's questions (benchmarks/sessions/fresh4: eight "
            "sessions of each of three projects), its sessions in one store with the dev "
            "set's; blind likewise.",
        ),
    ] = False,
    fresh5: Annotated[
        bool,
        typer.Option(
            "--fresh5",
            help="The fifth fresh split's questions (benchmarks/sessions/fresh5: Claude Code "
            "transcripts of three projects), its sessions in one store with the dev set's; "
            "blind likewise.",
        ),
    ] = False,
    fresh6: Annotated[
        bool,
        typer.Option(
            "--fresh6",
            help="The sixth fresh split's questions (benchmarks/sessions/fresh6: Claude Code, "
            "Codex and OpenCode sessions of three projects), its sessions in one store with "
            "the dev set's; blind likewise.",
        ),
    ] = False,
    fresh7: Annotated[
        bool,
        typer.Option(
            "--fresh7",
            help="The seventh fresh split's questions (benchmarks/sessions/fresh7: Claude "
            "Code and Gemini CLI sessions of two projects), its sessions in one store with "
            "the dev set's; studied since s32 (no longer blind).",
        ),
    ] = False,
    fresh8: Annotated[
        bool,
        typer.Option(
            "--fresh8",
            help="The eighth fresh split's questions (benchmarks/sessions/fresh8: Claude "
            "Code, Codex and Gemini CLI sessions of two projects), its sessions in one store "
            "with the dev set's; studied since s35-unseen (no longer blind).",
        ),
    ] = False,
    fresh9: Annotated[
        bool,
        typer.Option(
            "--fresh9",
            help="The ninth fresh split's questions (benchmarks/sessions/fresh9: Claude "
            "Code, Copilot CLI, OpenCode and Codex sessions of three projects), its sessions "
            "in one store with the dev set's; its tune half studied since s37 (its check "
            "half unread).",
        ),
    ] = False,
    fresh10: Annotated[
        bool,
        typer.Option(
            "--fresh10",
            help="The tenth fresh split's questions (benchmarks/sessions/fresh10: Claude "
            "Code, Codex Desktop and Cursor sessions of three projects), its sessions in one "
            "store with the dev set's; blind (neither half read).",
        ),
    ] = False,
    plain: Annotated[
        bool,
        typer.Option(
            "--plain",
            help="Plain questions of the heldout and fresh3 sessions (benchmarks/sessions/"
            "plain: 'what did we do last time?'), each at its own time; tune on plain-tune.",
        ),
    ] = False,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Keep the split's store in this directory: a rerun asks it again without "
            "taking the sessions in (with --cache, fresh8 in 6 s, not 24 s) while its "
            "sessions (name, client, project, SHA-256) and the embedder are the same, else "
            "it is built there again. For a change to capture or distillation, give a new "
            "directory.",
            show_default=False,
        ),
    ] = None,
    cache: CacheOption = None,
    as_json: JsonOption = False,
) -> None:
    """Questions about real sessions taken in by the default path: found@5, two ways.

    With --json, each question's top 5 for the studied halves only; a blind half's
    questions are counted, not shown."""
    from benchmarks import real_questions as bench
    from benchmarks.haystack import CachedEmbedder

    named = [
        name
        for name, given in (
            ("heldout", heldout),
            ("fresh", fresh),
            ("fresh2", fresh2),
            ("fresh3", fresh3),
            ("fresh4", fresh4),
            ("fresh5", fresh5),
            ("fresh6", fresh6),
            ("fresh7", fresh7),
            ("fresh8", fresh8),
            ("fresh9", fresh9),
            ("fresh10", fresh10),
            ("plain", plain),
        )
        if given
    ]
    if len(named) > 1:
        raise UsageError(
            "--heldout, --fresh, --fresh2, --fresh3, --fresh4, --fresh5, --fresh6, --fresh7, "
            "--fresh8, --fresh9, --fresh10 and --plain each name a split: give one"
        )
    directory, beside = bench.SPLITS[named[0] if named else "dev"]
    settings = settings_for(ctx)
    # the sessions' texts embedded once: a rerun embeds only what changed (~70 CPU-s a run)
    embedder = CachedEmbedder(_open_cache(ctx, cache)[1]) if cache else None
    with err_console.status("") as status:
        report = bench.run(
            settings,
            data or directory,
            None if no_others else (others or bench.SESSIONS),
            embedder=embedder,
            note=status.update,
            beside=beside,
            store=store,
        )
    if as_json:
        print_json(report.to_dict())
        return
    table = Table(title="Real questions: found in the top 5 (%), and answered with nothing")
    for column in report.rows[0] if report.rows else []:
        table.add_column(column, justify="left" if column in ("scoping", "half") else "right")
    for row in report.rows:
        table.add_row(*(str(value) for value in row.values()))
    console.print(table)
    console.print(", ".join(f"{name} {value}" for name, value in report.load.items()))
    lost = bench.lost_everywhere(report.answers)
    if lost:
        halves = "; ".join(f"{half}: {', '.join(ids)}" for half, ids in lost.items())
        console.print(f"found from the project, lost everywhere: {halves}")


def _counts(text: str) -> list[int]:
    try:
        counts = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(
            f"--n takes comma-separated counts, like 10000,100000; not {text!r}"
        ) from None
    if not counts or min(counts) < 1:
        raise UsageError(f"--n takes positive counts, not {text!r}")
    return counts


@app.command()
def scale(
    ctx: typer.Context,
    n: Annotated[
        str, typer.Option("--n", help="Store sizes to measure, comma-separated.")
    ] = "10000,100000",
    rounds: Annotated[
        int, typer.Option("--rounds", min=1, help="In-process timing: times each query runs.")
    ] = 5,
    processes: Annotated[
        int, typer.Option("--processes", min=1, help="Whole `memctl recall` processes to time.")
    ] = 5,
    cache: CacheOption = None,
    as_json: JsonOption = False,
) -> None:
    """Insert rate, database size, recall latency and memory at N synthetic memories."""
    from benchmarks.scale import run

    counts = _counts(n)
    settings, embed_cache = _open_cache(ctx, cache)
    with err_console.status("") as status:
        rows = run(settings, embed_cache, counts, rounds, processes, note=status.update)
    if as_json:
        print_json([row.to_dict() for row in rows])
    else:
        render_scale(rows)


@app.command()
def chart(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="JSON files from `python -m benchmarks locomo|longmemeval --json`.",
            show_default=False,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="PNG file to write.")] = Path(
        "recall_at_k.png"
    ),
) -> None:
    """Chart recall@k per retriever from saved results, one panel each (needs matplotlib)."""
    from benchmarks.chart import recall_chart

    reports = []
    for path in results:
        try:
            reports.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read results from {path}: {exc}") from None
    recall_chart(reports, out)
    console.print(f"wrote {out}")


LABELS = {
    "recall": "R",
    "recall_all": "R_all",
    "recall_any": "R_any",
    "ndcg": "NDCG",
    "turn_recall": "turn R",
}


def _label(metric: str) -> str:
    """``recall_all@5`` -> ``R_all@5``: short column headers."""
    name, _, k = metric.partition("@")
    return f"{LABELS.get(name, name)}@{k}"


def _figure(value: float | None, percent: bool) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.1f}" if percent else f"{value:.3f}"


def render_quality(report: QualityReport, percent: bool) -> None:
    table = Table(title=f"{report.benchmark}: {report.data}", header_style="bold")
    table.add_column("group", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True, min_width=3)
    table.add_column("retriever", no_wrap=True)
    for metric in report.metrics:
        table.add_column(_label(metric), justify="right", no_wrap=True, min_width=5)
    for group in report.groups:
        for index, name in enumerate(report.retrievers):
            scores = report.scores[name].get(group, {})
            table.add_row(
                group if index == 0 else "",
                str(report.questions[group]) if index == 0 else "",
                name,
                *(_figure(scores.get(metric), percent) for metric in report.metrics),
                end_section=index == len(report.retrievers) - 1,
            )
    console.print(table)
    latency = Table(title="recall latency (ms)", header_style="bold", title_justify="left")
    for column in ("retriever", "p50", "p95", "mean"):
        latency.add_column(column, justify="left" if column == "retriever" else "right")
    for name, figures in report.latency_ms.items():
        latency.add_row(name, *(f"{figures[key]:.1f}" for key in ("p50", "p95", "mean")))
    console.print(latency)
    ingest = report.ingest
    console.print(
        f"ingest: {ingest['memories']:,} memories in {ingest['seconds']} s "
        f"({ingest['memories_per_s']}/s); embedded {ingest['texts_embedded']:,} texts "
        f"({ingest['texts_embedded_per_s']}/s), {ingest['embed_cache_hits']:,} from the cache"
    )
    for note in report.notes:
        console.print(f"note: {note}")
    unrelated = report.unrelated
    if unrelated:
        counts = unrelated["results"]
        assert isinstance(counts, dict)
        console.print(
            f"unrelated queries ({unrelated['queries']} x {unrelated['stores']} stores, "
            "top 10 asked), results returned: "
            + ", ".join(f"{name} {count}" for name, count in counts.items())
        )


def render_scale(rows: list[ScaleRow]) -> None:
    table = Table(title="scale: synthetic memories", header_style="bold")
    table.add_column("figure")
    for row in rows:
        table.add_column(f"{row.memories:,}", justify="right")
    lines = [
        ("insert (embed + write), memories/s", lambda r: f"{r.insert_per_s:,.0f}"),
        (
            "embed, texts/s (texts embedded)",
            lambda r: f"{r.embed_per_s:,.0f} ({r.texts_embedded:,})",
        ),
        ("write alone, memories/s", lambda r: f"{r.write_per_s:,.0f}"),
        ("database size, MiB", lambda r: f"{r.db_mib:,.1f}"),
        *(
            (f"in-process recall p50 / p95, ms: {name}", _latency(name))
            for name in (rows[0].recall_ms if rows else {})
        ),
        ("whole `memctl recall` median / max, ms", lambda r: _pair(r.process_ms)),
        ("whole process peak RSS, MiB", lambda r: f"{r.process_peak_mib:,.0f}"),
        ("bench process peak RSS so far, MiB", lambda r: f"{r.peak_rss_mib:,.0f}"),
    ]
    for label, cell in lines:
        table.add_row(label, *(cell(row) for row in rows))
    console.print(table)


def _pair(figures: dict[str, float]) -> str:
    return " / ".join(f"{value:.1f}" for value in figures.values())


def _latency(name: str) -> Callable[[ScaleRow], str]:
    return lambda row: _pair(row.recall_ms[name])
