"""Where each tuning key's default comes from: the benchmark that chose it, the reference
design it was taken from, or the reason for it when nothing measured it.

One entry per tuning key (``Key.tuning``); docs/configuration.md's tuning table shows them
(``make docs``) and tests/test_docs.py fails when a tuning key has none or a cited page
has no such section. The forms:

- ``measured: <page> § <section>``: a benchmark run chose it; the section has the numbers.
- ``issue N``: the stage's constant as the reference designs gave it (summarised in
  issue N), kept because nothing measured better; a section named after it measured it
  again.
- ``reasoned: ...``: a default no benchmark chose, and why it is what it is.
"""

from __future__ import annotations

RELEVANCE_1 = "measured: benchmarks.md § Relevance and measured defaults"
RELEVANCE_2 = "measured: benchmarks.md § Relevance, second round"
RELEVANCE_3 = "measured: benchmarks.md § Relevance, third round"
RECALL = "issue 3 (the reference recall pipeline)"
INGEST = "issue 2 (the reference ingest pipeline)"
MAINTAIN = "issue 15 (the reference maintenance tasks)"
MAINTAIN_SPEED = "measured: benchmarks.md § Maintenance"
ATTACKS = "measured: benchmarks.md § Attacks"
IMPORT = "issue 4 (file import)"
CONTEXT = "issue 24 (layered context, MemCC L0-L3); reasoned: the three fit a 1,500-token block"

SOURCES: dict[str, str] = {
    "embed.batch_size": "measured: benchmarks.md § Embedding (182 sentences/s at 32, 226 at 256"
    " for 8x the memory)",
    "ollama.timeout": "reasoned: a local model's answer to one embedding or chat call; longer "
    "means a hung server, and the rules take over",
    "store.busy_timeout_ms": "reasoned: a write waits out another process's transaction (a "
    "maintain batch, a sync) without a person noticing",
    "remember.importance": "reasoned: what a person stores by hand ranks above most facts "
    "distilled from sessions; not swept",
    "remember.question_floor": "measured: benchmarks.md § Questions stored with a memory "
    "(MiniLM: keeps 95 % of the paraphrase set's questions, 10 % of unrelated ones)",
    "recall.candidates": RECALL + ": limit x 3 from each leg",
    "recall.weight_vector": RELEVANCE_3 + " (fusion weights 0.4 / 0.6, were 0.5 / 0.5)",
    "recall.weight_bm25": RELEVANCE_3 + " (fusion weights 0.4 / 0.6, were 0.5 / 0.5)",
    "recall.weight_words": RELEVANCE_3 + " (word share in the score)",
    "recall.pinned_boost": RECALL,
    "recall.relevance_floor": RELEVANCE_2 + " (floors chosen on both benchmarks)",
    "recall.words_weight": RELEVANCE_1 + " (cosine + 0.3 x word share)",
    "recall.vocabulary_weight": "measured: benchmarks.md § Vocabulary (agentmemory weights "
    "its synonym groups 0.7) and § Kinds",
    "recall.lead_floor": "measured: benchmarks.md § Paraphrases",
    "recall.lead_margin": "measured: benchmarks.md § Paraphrases",
    "recall.crowd_margin": "measured: benchmarks.md § Near misses in a crowd",
    "recall.words_cosine": RELEVANCE_2 + " (words need meaning; floors on both benchmarks)",
    "recall.words_floor": RELEVANCE_1 + " (0.9 of the words)",
    "recall.words_alone_cosine": "measured: benchmarks.md § Words alone in another sense "
    "(no benchmark figure moves from 0.1 to 0.15; a first-hour store's false clear goes)",
    "recall.anchor_memories": RELEVANCE_2 + " (names: 56 / 26 / 10 unrelated results at 1 / 2 / 3)",
    "recall.common_name_share": "measured: benchmarks.md § Names most memories mention "
    "(LoCoMo: the vector leg alone, a speaker's name left out of the query)",
    "recall.agree_top": "measured: benchmarks.md § Clear needs two signals (2 halves the "
    "wrong clear matches at 1,000 memories but costs the real questions: off)",
    "recall.centred": "measured: benchmarks.md § Centred cosine (paraphrases gain on both "
    "halves, the real questions and LoCoMo's tune half lose: off)",
    "recall.density_weight": "measured: benchmarks.md § Hubness correction (CSLS, Conneau et "
    "al. 2018, weighs the density 0.5; 0.25 ranks the paraphrases' tune half best)",
    "recall.support_floor": RELEVANCE_1 + " (the others need cosine >= 0.2)",
    "recall.strangers_veto": "measured: benchmarks.md § Names the store never mentions",
    "recall.possible": "reasoned: --limit counts every row, clear ones first; the possible "
    "ones fill the rest (benchmarks.md § Clear and possible matches)",
    "recall.context_share": RELEVANCE_1 + " (neighbours, exp-score-context)",
    "recall.reply_share": RELEVANCE_2 + " (replies: 0.6, was 0.3)",
    "recall.question_factor": RELEVANCE_3 + " (a question gives way to its reply)",
    "recall.context_max_chars": RELEVANCE_1 + " (neighbours only for short memories: "
    "LongMemEval's long turns lost recall)",
    "recall.session_vectors": "measured: benchmarks.md § Real questions (0: found@5 and "
    "speed both better than 20 embedded per query)",
    "recall.message_vectors": "measured: benchmarks.md § Message vectors by the store's "
    "size (auto: LongMemEval and the real questions gain, a large store costs as words "
    "alone)",
    "recall.message_vectors_up_to": "measured: benchmarks.md § Message vectors by the "
    "store's size (100,000 messages with vectors recall at about the cost of 1,000,000 "
    "without)",
    "recall.cap": RECALL + ": keep limit x 2",
    "recall.depth": "measured: depths 10, 15, 20 and 30 on every benchmark; deeper lifts "
    "LoCoMo and LongMemEval's check half and loses real questions, held-out and fresh ones "
    "too (benchmarks.md § How deep recall searches)",
    "recall.llm_gate_candidates": "reasoned: the 5 closest memories, as many as a found@5 "
    "counts (benchmarks.md § Clear and possible matches)",
    "recall.llm_gate_floor": "reasoned: the rerank blend's own midpoint and above; not "
    "measured (the gate is off by default)",
    "recall.llm_model": "reasoned: Ollama's small general chat model, on most machines that "
    "run Ollama",
    "recall.rerank_weight": RECALL + ": 0.6 rerank + 0.4 original",
    "recall.translate": RECALL + ": the English pass is optional (an LLM call per query)",
    "recall.bm25_floor": RECALL,
    "recall.bm25_floor_keep": RECALL,
    "recall.half_life_days": RECALL + ": Weibull recency",
    "recall.half_life_importance": RECALL + ": Weibull recency",
    "recall.beta_core": RECALL + ": Weibull recency",
    "recall.beta_working": RECALL + ": Weibull recency",
    "recall.beta_peripheral": RECALL + ": Weibull recency",
    "recall.frequency_scale": RECALL,
    "recall.weight_recency": RECALL + ": composite 0.4 / 0.3 / 0.3",
    "recall.weight_frequency": RECALL + ": composite 0.4 / 0.3 / 0.3",
    "recall.weight_intrinsic": RECALL + ": composite 0.4 / 0.3 / 0.3",
    "recall.floor_core": RECALL + ": tier floors",
    "recall.floor_working": RECALL + ": tier floors",
    "recall.floor_peripheral": RECALL + ": tier floors",
    "recall.decay_base": RECALL + "; measured (benchmarks.md § Relevance and measured "
    "defaults): no change on LoCoMo at 1",
    "recall.importance_base": RECALL,
    "recall.length_norm": RECALL + " (500); measured (benchmarks.md § A long answer and the "
    "length stage): off, long answers rose on every real-questions set; LoCoMo and "
    "LongMemEval held",
    "recall.scope_global": RECALL + ": scopes",
    "recall.scope_other": RECALL + ": scopes",
    "recall.time_boost": "reasoned: a memory from the time the query names ranks as a pinned "
    "one does (recall.pinned_boost); not swept",
    "recall.spread_hops": RECALL + ": spreading activation",
    "recall.spread_decay": RECALL + ": spreading activation",
    "recall.spread_seeds": "reasoned: the top 5, the results a person reads first; not swept",
    "recall.graph_share": "measured: benchmarks.md § Entities and triples, and the graph "
    "stage (0.9 helped only LoCoMo's tune half and cost its check half; 0.6 changes no category)",
    "recall.graph_min_match": "measured: benchmarks.md § Entities and triples, and the graph "
    "stage (a third of the query's other words; 0.5 cost a single-hop question)",
    "recall.graph_entities": "reasoned: a question names few things; bounds the stage's reads",
    "recall.graph_edges": "measured: benchmarks.md § Entities and triples, and the graph "
    "stage (bounds a hop from an entity with hundreds of relations: stage max 72 ms)",
    "recall.graph_synthetic": "reasoned: one synthetic result, so a path never crowds out "
    "the memories that state it",
    "recall.superseded_factor": RECALL + ": status and conflicts",
    "recall.contradicted_factor": RECALL + ": status and conflicts",
    "recall.conflict_factor": RECALL + ": status and conflicts",
    "recall.cutoff": RECALL,
    "recall.mmr_threshold": RECALL + ": mmr",
    "recall.mmr_factor": RECALL + ": mmr",
    "recall.chars_per_token": RECALL + ": pack (tokens ~ len / 4)",
    "recall.cjk_chars_per_token": "measured: o200k_base, by benchmarks/token_estimate.py "
    "(benchmarks.md § What a session leaves behind; cl100k_base: 0.87, issue 3's figure)",
    "recall.strength_step": RECALL + ": a recall strengthens by 0.1",
    "ollama.connect_timeout": "reasoned: a local server answers a connection at once; 2 s "
    "tells a stopped Ollama from a busy one (ingest.md § Which LLM)",
    "llm.probe_cache_seconds": "reasoned: one check for Ollama a minute keeps a hook from "
    "paying for it every run",
    "llm.timeout": "reasoned: one extraction of 8,000 characters on a CPU-only local model",
    "llm.retries": "issue 5 (2 retries, 1 s and 2 s)",
    "llm.backoff_seconds": "issue 5 (2 retries, 1 s and 2 s)",
    "llm.temperature": "reasoned: extraction and judging must give the same answer twice",
    "ingest.spawn_worker": "reasoned: the hook returns at once and a detached worker distils; "
    "off for tests and for cron-only machines",
    "ingest.job_stale_seconds": ATTACKS + " (a killed --wait's job is run again)",
    "ingest.lock_wait_ms": ATTACKS + " (a hook under a held write lock spools after 2 s)",
    "ingest.job_max_attempts": "reasoned: a job failing 3 times fails for a reason a retry "
    "will not fix; it stays, marked failed",
    "maintain.decay_episodic": MAINTAIN + ": decay",
    "maintain.decay_semantic": MAINTAIN + ": decay",
    "maintain.decay_min_change": "reasoned: a smaller change is not worth a write and its "
    "event (maintain.md § Maintenance)",
    "maintain.consolidate_after_days": MAINTAIN + ": consolidate",
    "maintain.consolidate_max": MAINTAIN + ": consolidate",
    "maintain.merge_after_days": MAINTAIN + ": consolidate",
    "maintain.merge_similarity": MAINTAIN + ": consolidate",
    "maintain.merge_max_clusters": MAINTAIN + ": consolidate",
    "maintain.dedup_similarity": MAINTAIN + ": dedup",
    "maintain.exact_comparisons": MAINTAIN_SPEED,
    "maintain.threads": MAINTAIN_SPEED + " (BLAS on one thread)",
    "maintain.write_batch": MAINTAIN_SPEED + " (writes in batches)",
    "maintain.lsh_tables": "reasoned: 12 tables of 14 bits find most pairs at cosine >= 0.82 "
    "with small buckets at 100,000 memories; not swept",
    "maintain.lsh_bits": "reasoned: 12 tables of 14 bits find most pairs at cosine >= 0.82 "
    "with small buckets at 100,000 memories; not swept",
    "maintain.archive_strength": MAINTAIN + ": archive",
    "maintain.archive_unused_days": MAINTAIN + ": archive",
    "maintain.archive_max": MAINTAIN + ": archive",
    "maintain.backup_every_hours": "reasoned: maintain runs from cron every few hours; one "
    "backup a day (maintain.md § Maintenance)",
    "select.messages": INGEST + ": select",
    "select.max_bytes": INGEST + ": select",
    "digest.max_chars": "measured: swept 1600, 2000, 2400 on the gold set's tune half with "
    "digest.report_chars 500 and 800 (benchmarks.md § What a session leaves behind); "
    "the start block shortens a digest that does not fit",
    "digest.items": "reasoned: six items a section keep every section within "
    "digest.max_chars; not swept",
    "digest.report_chars": "measured: swept with digest.max_chars (benchmarks.md § What a "
    "session leaves behind): a sub-agent's conclusions and findings, not its whole report",
    "extract.max_facts": INGEST + ": extract",
    "extract.chunk_chars": INGEST + ": extract; measured for host tasks: benchmarks.md § What "
    "a host model is handed",
    "noise.similarity": INGEST + ": noise",
    "noise.learned_max": INGEST + ": noise",
    "admission.weight_utility": INGEST + ": admission",
    "admission.weight_confidence": INGEST + ": admission",
    "admission.weight_novelty": INGEST + ": admission",
    "admission.weight_recency": INGEST + ": admission",
    "admission.weight_prior": INGEST + ": admission",
    "admission.prior_profile": INGEST + ": admission",
    "admission.prior_preferences": INGEST + ": admission",
    "admission.prior_patterns": INGEST + ": admission",
    "admission.prior_cases": INGEST + ": admission",
    "admission.prior_entities": INGEST + ": admission",
    "admission.prior_events": INGEST + ": admission",
    "admission.reject": INGEST + ": admission",
    "admission.admit": INGEST + ": admission",
    "admission.recency_half_life_days": "reasoned: the same 30 days as recall's half-life "
    "(recall.half_life_days)",
    "reconcile.vector_top": INGEST + ": reconcile",
    "reconcile.fts_top": INGEST + ": reconcile",
    "reconcile.min_similarity": INGEST + ": reconcile",
    "reconcile.max_candidates": INGEST + ": reconcile",
    "reconcile.duplicate_similarity": "reasoned: the dedup threshold (maintain.dedup_similarity)",
    "reconcile.support_similarity": "reasoned: between a duplicate (0.95) and the same thing "
    "(0.7); the rules' thresholds were not swept",
    "reconcile.match_similarity": "reasoned: MiniLM's cosine of two sentences about one thing; "
    "the rules' thresholds were not swept",
    "reconcile.related_similarity": "reasoned: a shared topic in MiniLM's cosine; the rules' "
    "thresholds were not swept",
    "reconcile.support_boost": INGEST + ": SUPPORT (confidence + 0.1)",
    "import.split_chars": IMPORT,
    "import.split_overlap": IMPORT,
    "import.section_words": IMPORT,
    "import.conversation_lines": "reasoned: 3 speaker lines are a dialogue, 1 or 2 a quote",
    "import.concurrency": IMPORT + ": at most 3 extractions at once",
    "import.token_budget": "reasoned: five times a session's budget (ingest's 20,000) for one file",
    "import.max_facts": "measured: benchmarks.md § Attacks (a 50 MB text finishes)",
    "import.extract_chars": "measured: benchmarks.md § Attacks (a 50 MB text finishes)",
    "import.reconcile_batch": "reasoned: each batch its own transaction, short enough for a "
    "hook's write not to wait (store.busy_timeout_ms)",
    "hooks.recapture_hours": "reasoned: a transcript a client kept writing after its hook "
    "(resumed the next day) is caught within a day",
    "hooks.recapture_max": "reasoned: a hook stays fast: at most 3 other transcripts a run",
    "context.identity_budget": CONTEXT,
    "context.essentials_budget": CONTEXT,
    "context.recent_budget": CONTEXT,
    "mcp.search_limit": "reasoned: 8 memories answer a model's question without filling its "
    "context",
    "sync.max_file_bytes": "reasoned: one memory's YAML file is a few KB; a bigger file is not "
    "memctl's (sync.md § Sync)",
    "sync.push_retries": "measured: benchmarks.md § A team on one repository (gave up 32 of "
    "150 syncs at 3, 7 at 8)",
    "sync.git_timeout": "reasoned: a clone of a large repository over a slow link; a hung git "
    "is stopped",
    "sync.lock_wait": "reasoned: a cron sync and a person's wait for each other rather than fail",
}
