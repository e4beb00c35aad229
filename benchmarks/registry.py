"""The retrievers a benchmark's ``-r NAME`` chooses among: the baselines and memctl's views
(``benchmarks.retrievers``) and the experiments (``benchmarks.experiments``), which are
built on the retrievers: so the names of both are joined here, above the two."""

from __future__ import annotations

from benchmarks.experiments import EXPERIMENTS
from benchmarks.retrievers import (
    BASELINES,
    Retriever,
    memctl_clear,
    memctl_prompt,
    memctl_recall,
    memctl_sessions,
)
from memctl.errors import UsageError


def choose(names: list[str] | None) -> dict[str, Retriever]:
    """The named retrievers (default: the three baselines); unknown names are a UsageError.

    ``memctl-search`` is what MCP memory_search reads, ``memctl-clear`` the clear matches
    alone, ``memctl-prompt`` what the per-prompt hook adds, ``memctl-sessions`` recall with
    the session messages fused in (the CLI's default); ``exp-*`` names are the
    experiments of benchmarks.experiments.
    """
    if not names:
        return dict(BASELINES)
    views = {
        "memctl-search": memctl_recall,  # memory_search reads what `memctl recall` shows
        "memctl-clear": memctl_clear,
        "memctl-prompt": memctl_prompt,
        "memctl-sessions": memctl_sessions,
    }
    available = {**BASELINES, **views, **EXPERIMENTS}
    unknown = [n for n in names if n not in available]
    if unknown:
        raise UsageError(
            f"unknown retriever {', '.join(unknown)}: expected one of {', '.join(available)}"
        )
    return {name: available[name] for name in dict.fromkeys(names)}
