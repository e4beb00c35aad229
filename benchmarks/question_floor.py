"""Where to set ``remember.question_floor``: how many questions each cosine floor keeps.

    .venv/bin/python benchmarks/question_floor.py [--floors 0.05,0.1,0.15,0.2,0.25]

The paraphrase set's 120 facts (``benchmarks/paraphrase/facts.jsonl``) and their
hand-written questions, embedded with the configured model (MiniLM by default). Per
floor: the share of facts whose own question reaches it (kept: it should be), of facts
paired with another fact's question (a fixed random pairing), and of every fact paired
with every unrelated question (``unrelated.jsonl``; dropped: it should be). The figures
and the chosen floor are in docs/benchmarks.md, "Questions stored with a memory".
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.paraphrase import DATA, load_facts, load_unrelated  # noqa: E402
from memctl.config import settings_from_flags  # noqa: E402
from memctl.embed import get_embedder  # noqa: E402

PAIRING_SEED = 1  # the other-fact pairing, fixed so runs compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floors", default="0.05,0.1,0.15,0.2,0.25")
    floors = [float(f) for f in parser.parse_args().floors.split(",")]
    import numpy as np

    facts = load_facts(DATA / "facts.jsonl")
    unrelated = [question for _, question in load_unrelated(DATA / "unrelated.jsonl")]
    embedder = get_embedder(settings_from_flags(None, {}))
    fact_vectors = np.array(embedder.embed([f.fact for f in facts]))
    questions = np.array(embedder.embed([f.question for f in facts]))
    others = np.array(embedder.embed(unrelated))
    own = (fact_vectors * questions).sum(axis=1)
    rng = random.Random(PAIRING_SEED)
    pairing = [rng.choice([j for j in range(len(facts)) if j != i]) for i in range(len(facts))]
    other_fact = np.array([fact_vectors[i] @ questions[j] for i, j in enumerate(pairing)])
    off_topic = (fact_vectors @ others.T).ravel()
    print("floor  own kept  other fact's kept  unrelated kept")
    for floor in floors:
        print(
            f"{floor:5.2f}  {100 * (own >= floor).mean():7.1f} %  "
            f"{100 * (other_fact >= floor).mean():16.1f} %  "
            f"{100 * (off_topic >= floor).mean():13.1f} %"
        )


if __name__ == "__main__":
    main()
