"""How close memctl's token estimate (recall's pack, the start block) comes to real BPE
tokenizers, per language: English prose, code, Chinese, Japanese and Korean.

    .venv/bin/python -m pip install bpe-openai   # the tokenizers (not a memctl dependency)
    .venv/bin/python benchmarks/token_estimate.py

English is README.md, code is memctl/retrieve/fit.py, Chinese the user and assistant text
of the Chinese gold session, Japanese and Korean the texts of
benchmarks/data/token_samples.json. For each it prints the characters, the tokens of
cl100k_base and o200k_base, memctl's estimate, and the estimate over each real count
(1.00 is exact; above 1 the block spends more of its budget than it needs).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memctl.config import load_settings  # noqa: E402
from memctl.retrieve.params import recall_params  # noqa: E402
from memctl.retrieve.stages.pack import estimate_tokens  # noqa: E402

SAMPLES = ROOT / "benchmarks" / "data" / "token_samples.json"
CHINESE = ROOT / "benchmarks" / "sessions" / "real" / "cc2-written-zh-order.jsonl"
ENGLISH_CHARS = 6000  # README.md's first characters: prose, a table, a few commands
ENCODINGS = ("cl100k_base", "o200k_base")


def said(path: Path) -> str:
    """The text of a Claude Code transcript's user and assistant messages."""
    texts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        content = json.loads(line).get("message", {}).get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if isinstance(b, dict)]
    return "\n".join(t for t in texts if t)


def texts() -> dict[str, str]:
    samples = json.loads(SAMPLES.read_text(encoding="utf-8"))
    return {
        "English": (ROOT / "README.md").read_text(encoding="utf-8")[:ENGLISH_CHARS],
        "code": (ROOT / "memctl" / "retrieve" / "fit.py").read_text(encoding="utf-8"),
        "Chinese": said(CHINESE),
        "Japanese": samples["japanese"],
        "Korean": samples["korean"],
    }


def main() -> None:
    try:
        import bpe_openai
    except ImportError:
        sys.exit("needs the tokenizers: .venv/bin/python -m pip install bpe-openai")
    encodings = {name: bpe_openai.get_encoding(name) for name in ENCODINGS}
    with tempfile.TemporaryDirectory() as home:
        params = recall_params(load_settings(Path(home)))  # the defaults
    print(
        "| text | characters | "
        + " | ".join(ENCODINGS)
        + " | memctl's estimate | "
        + " | ".join(f"estimate / {n}" for n in ENCODINGS)
        + " |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, text in texts().items():
        counts = [len(e.encode(text)) for e in encodings.values()]
        estimate = estimate_tokens(text, params)
        ratios = " | ".join(f"{estimate / c:.2f}" for c in counts)
        print(
            f"| {name} | {len(text)} | "
            + " | ".join(map(str, counts))
            + f" | {estimate} | {ratios} |"
        )


if __name__ == "__main__":
    main()
