"""A PNG of Recall@k per retriever from saved benchmark results (matplotlib, bench extra only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memctl.errors import InputError, UsageError

# Published baselines, drawn dashed: the LoCoMo paper's Table 3 (DRAGON over dialog turns, all
# 10 conversations, categories 1-5) and a BM25 replication on all 470 LongMemEval_S questions.
PUBLISHED = {
    "locomo": ("DRAGON (paper)", {5: 0.567, 10: 0.662, 25: 0.767, 50: 0.827}),
    "longmemeval": ("BM25 (published, 470 q.)", {5: 0.764, 10: 0.843}),
}
PANELS = {
    "locomo": ("LoCoMo: evidence turns in the top k", "all 1-5", "recall@"),
    "longmemeval": ("LongMemEval_S: all evidence sessions in the top k", "overall", "recall_all@"),
}


def series(report: dict[str, Any], group: str, prefix: str) -> dict[str, dict[int, float]]:
    """{retriever: {k: value}} for the metrics named ``prefix<k>`` of ``group``."""
    try:
        return {
            name: {
                int(metric[len(prefix) :]): value
                for metric, value in report["scores"][name][group].items()
                if metric.startswith(prefix) and value is not None
            }
            for name in report["retrievers"]
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"not benchmark JSON (--json output): missing {exc}") from None


def recall_chart(reports: list[dict[str, Any]], out: Path) -> None:
    """One panel per report, with its published baseline, written as PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("the chart needs matplotlib: pip install matplotlib") from None
    unknown = [r.get("benchmark") for r in reports if r.get("benchmark") not in PANELS]
    if unknown:
        raise InputError(f"cannot chart results of benchmark {unknown[0]!r}")
    figure, axes = plt.subplots(1, len(reports), figsize=(6 * len(reports), 4.2), squeeze=False)
    for ax, report in zip(axes[0], reports, strict=True):
        title, group, prefix = PANELS[report["benchmark"]]
        for name, points in series(report, group, prefix).items():
            ks = sorted(points)
            ax.plot(ks, [points[k] for k in ks], marker="o", label=name)
        label, published = PUBLISHED[report["benchmark"]]
        ax.plot(list(published), list(published.values()), "k--", marker="s", label=label)
        ax.set_title(f"{title}\n({group})", fontsize=10)
        ax.set_xlabel("k")
        ax.set_ylabel("recall")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(out, dpi=120)
    plt.close(figure)
