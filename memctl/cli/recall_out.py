"""recall's output, without Typer: the command (``memctl.cli.recall``) and the fast lane
(``memctl.cli.fastlane``) parse their options and hand the request here."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from memctl.api.recall import (
    Recalled,
    RecallRequest,
    RecallResult,
    elsewhere_hint,
    excerpt,
    explain,
    host_fields,
    is_message_id,
    message_speaker,
)
from memctl.api.recall import recall as api_recall
from memctl.cli import render as out
from memctl.cli.render import MemoryTable, age, print_json, short_id, warn
from memctl.errors import UsageError

if TYPE_CHECKING:
    from memctl.api.config import Context
    from memctl.api.sessions import Origin

FORMATS = ("table", "json", "context", "ids")
LINE = 200  # characters of a result's text a table shows (folded to the terminal's width)


def parse_budget(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        budget = int(text)
    except ValueError:
        budget = 0
    if budget < 1:
        raise UsageError(f"--budget takes a number of tokens (1 or more), not {text!r}")
    return budget


def show(context: Context, request: RecallRequest, fmt: str, with_explain: bool) -> None:
    """Recall and print the answer in ``fmt`` (the Typer command's and the fast lane's)."""
    response = api_recall(context, request)
    for warning in response.result.warnings:
        warn(warning)
    report = response.why_not
    if report is not None:
        if fmt == "json":
            print_json(report.to_dict())
        else:
            out.console.print(
                out.fit(
                    f"{short_id(report.memory_id)}: {report.reason}"
                    + ("" if report.recalled else f" (stage: {report.stage})")
                ),
                soft_wrap=True,
            )
        return
    if fmt == "context":
        sys.stdout.write((response.context or "") + "\n")
        return
    came: dict[str, list[Origin]] = {}
    labels: dict[str, str] = {}
    if with_explain:  # the sessions' API brings the transcript parsers: only for --explain
        from memctl.api.projects import project_labels
        from memctl.api.sessions import origins

        found = response.result.results
        came = origins(context, [r.memory for r in found])
        labels = project_labels(context, [r.memory.scope for r in found])
    hint = elsewhere_hint(response.elsewhere, "add --all-scopes")
    render(
        response.result, fmt, with_explain, hint, came, response.hosts, response.following, labels
    )


def render(
    result: RecallResult,
    fmt: str,
    with_explain: bool,
    hint: str | None = None,
    came: dict[str, list[Origin]] | None = None,
    hosts: dict[str, str] | None = None,
    following: frozenset[str] = frozenset(),
    labels: dict[str, str] | None = None,
) -> None:
    """Print the results; ``hint`` (matches in other scopes) is a line of the table output
    and a warning of the JSON, never part of the results; ``came`` (by memory id) the
    session ranges each was distilled from, for --explain; ``hosts`` (by memory id) the
    results another machine pushed; ``following``, those of them that follow the user's
    own (their host not in sync.trust); ``labels`` (scope -> project label) name another
    project in the terminal's --explain as the viewer does."""
    came = came or {}
    if fmt == "json":
        print_json(json_answer(result, with_explain, hint, came, hosts or {}, following))
    elif fmt == "ids":
        sys.stdout.writelines(item.memory.id + "\n" for item in result.results)
    elif not result.results:
        out.print_blocks(["no memories found", *([hint] if hint else [])])
    else:
        out.print_blocks(
            [
                *tables(result, hosts or {}, following),
                *([hint] if hint and not result.clear else []),
            ]
        )
        if with_explain:
            print_explain(result, came, labels or {})


def json_answer(
    result: RecallResult,
    with_explain: bool,
    hint: str | None,
    came: dict[str, list[Origin]],
    hosts: dict[str, str],
    following: frozenset[str] = frozenset(),
) -> dict[str, object]:
    """``--format json``'s answer. Each result's ``host``: the id of the machine a synced
    memory came from, null for the user's own and for session messages; ``trusted``:
    whether that host is in sync.trust (null without a host). An untrusted host's result
    follows the user's own of its label whatever its score (``api.recall``)."""
    return {
        "query": result.query,
        "mode": result.run.params.mode if result.run else None,
        "results": [
            {
                **r.to_dict(),
                **host_fields(hosts.get(r.memory.id), r.memory.id in following),
                **(
                    {
                        "explain": {
                            **explain(r, result.steps_of(r.memory.id)),
                            "sources": [o.to_dict() for o in came.get(r.memory.id, [])],
                        }
                    }
                    if with_explain
                    else {}
                ),
            }
            for r in result.results
        ],
        "warnings": [*result.warnings, *([hint] if hint else [])],
    }


NO_CLEAR, ALSO = "no clear match; possible:", "also possible:"


def tables(
    result: RecallResult, hosts: dict[str, str], following: frozenset[str]
) -> list[str | MemoryTable]:
    """The clear matches, then a line saying what follows, then the possible ones. Of each
    label, the results of a machine not in sync.trust (``following``; ``hosts``: memory
    id -> host) follow the user's own whatever their score (``api.recall``), under a line
    saying so: each table is in the order of the score it shows. A trusted machine's rank
    among the user's own, their text led by their host."""
    clear = result.clear
    possible = [r for r in result.results if not r.clear]
    blocks: list[str | MemoryTable] = []
    if clear:
        blocks += _own_then_synced(clear, 1, result.query, CLEAR_SCORE, hosts, following)
    if possible:
        blocks.append(ALSO if clear else NO_CLEAR)
        first = len(clear) + 1
        blocks += _own_then_synced(possible, first, result.query, POSSIBLE_SCORE, hosts, following)
    return blocks


def _own_then_synced(
    items: list[Recalled],
    first: int,
    query: str,
    scored: str,
    hosts: dict[str, str],
    following: frozenset[str],
) -> list[str | MemoryTable]:
    """The user's own results (and trusted machines'), then the line naming the untrusted
    machines and their results."""
    own = [i for i in items if i.memory.id not in following]
    synced = [i for i in items if i.memory.id in following]
    blocks: list[str | MemoryTable] = []
    if own:
        blocks.append(results_table(own, first, query, scored, hosts))
    if synced:
        blocks.append(synced_line(sorted({hosts[i.memory.id] for i in synced}), bool(own)))
        blocks.append(results_table(synced, first + len(own), query, scored))
    return blocks


def synced_line(hosts: list[str], after_own: bool) -> str:
    """The line above another machine's results: whose, and why they follow the user's own."""
    named = ", ".join(f"host {short_id(h)}" for h in hosts)
    return f"from {named} (sync)" + (", after your own:" if after_own else ":")


# A possible match is ranked by its relevance, on another scale than the clear matches'
# pipeline score (docs/recall.md): its column says so, so it never reads as a better match.
CLEAR_SCORE, POSSIBLE_SCORE = "score", "relevance"


def results_table(
    items: list[Recalled],
    first: int,
    query: str,
    scored: str = CLEAR_SCORE,
    hosts: dict[str, str] | None = None,
) -> MemoryTable:
    """Results numbered from ``first``; a session message shows its ``SESSION#N``; a long
    memory, its part that answers ``query`` (``excerpt``), led by ``(host ID)`` when another
    machine pushed it (``hosts``: a trusted machine's, among the user's own)."""
    headers = ("#", scored, "id", "age", "category")
    rows = [
        [
            str(rank),
            f"{item.score:.4f}",
            short_id(item.memory.id),
            age(item.dated_at),
            "message" if item.is_message else str(item.memory.category),
        ]
        for rank, item in enumerate(items, start=first)
    ]
    hosts = hosts or {}
    summaries = [
        host_mark(hosts.get(i.memory.id))
        + replaced_mark(i)
        + speaker_mark(i)
        + excerpt(i.memory.summary, i.memory.content, query, LINE)
        + answering_mark(i)
        for i in items
    ]
    return headers, rows, summaries


def speaker_mark(item: Recalled) -> str:
    """Who said a session message, when its capture named them and its text does not open
    with them (an import's chat message does: ``Tim: ...``)."""
    speaker = message_speaker(item.memory) if item.is_message else ""
    said = f"{speaker}: " if speaker else ""
    return "" if item.memory.content.startswith(said) else said


def answering_mark(item: Recalled) -> str:
    """What follows a row's text when a message folded into it answers (``answering.py``):
    its ``SESSION#N`` (``sessions expand`` opens it) and its sentences that answer."""
    found = item.answering
    return f" ↳ from {short_id(found.message)}: {found.text}" if found else ""


def host_mark(host: str | None) -> str:
    """What leads a trusted machine's result among the user's own: where it came from."""
    return f"(host {short_id(host)}) " if host else ""


def replaced_mark(item: Recalled) -> str:
    """What leads a result no longer true: what superseded or contradicts it ("(superseded
    by 3f897797) My editor is vim."); its row follows the clear matches."""
    if not item.no_longer_true:
        return ""
    by = f" by {short_id(item.replaced_by)}" if item.replaced_by else ""
    return f"({item.match_reason}{by}) "


def print_explain(
    result: RecallResult, came: dict[str, list[Origin]], labels: dict[str, str]
) -> None:
    for rank, item in enumerate(result.results, start=1):
        info = explain(item, result.steps_of(item.memory.id), labels)
        legs = ", ".join(f"{leg} #{v['rank']}" for leg, v in info["legs"].items()) or "the graph"
        factors = ", ".join(f"{stage} {value:.3g}" for stage, value in item.factors.items())
        title = f"#{rank} {short_id(item.memory.id)} score {item.score:.4f}"
        out.console.print(title, style="bold")
        out.console.print(out.fit(f"  match:    {item.match_why or item.match}"), soft_wrap=True)
        out.console.print(out.fit(f"  found by: {legs}"), soft_wrap=True)
        out.console.print(out.fit(f"  factors:  {factors}"), soft_wrap=True)
        if info["graph_path"]:
            out.console.print(out.fit(f"  graph:    {info['graph_path']}"), soft_wrap=True)
        source = info["source"] or "-"
        if info["session_id"]:
            source += f" (session {info['session_id']})"
        out.console.print(out.fit(f"  source:   {source}"), soft_wrap=True)
        found = came.get(item.memory.id, [])
        for origin in found:
            out.console.print(out.fit(f"  from:     {origin.text()}"), soft_wrap=True)
        if item.answering:
            part = item.answering
            said = f"{short_id(part.message)} (cosine {part.cosine:.2f}): {part.text}"
            out.console.print(out.fit(f"  answers:  {said}"), soft_wrap=True)
        for key in item.members:
            if is_message_id(key):
                out.console.print(f"  message:  {short_id(key)} (the same, said in the session)")
            else:
                out.console.print(f"  memory:   {key[:8]} (the same, distilled from it)")
        if item.is_message:
            out.console.print(f"  open it:  memctl sessions expand {short_id(item.memory.id)}")
        elif any(origin.stored for origin in found):
            out.console.print(
                f"  open them: memctl sessions expand {item.memory.id[:8]}", soft_wrap=True
            )
        for step in info["steps"]:
            out.console.print(out.fit(f"  {step['stage']}: {step['why']}"), soft_wrap=True)
