"""The config keys: each one's dotted name, default, allowed values and one line of
documentation, and which of them are a person's choices.

Every tunable constant of memctl is a key in ``KEYS``. ``USER_KEYS`` names the ~30
choices a person makes; the rest are the stages' tuning constants. docs/configuration.md's
two tables (settings, tuning) and ``config.values`` are generated from them
(scripts/gen_docs.py); ``config.settings`` layers their values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from memctl.errors import ConfigError, did_you_mean

ENV_PREFIX = "MEMCTL_"


@dataclass(frozen=True)
class Key:
    """A config key: its dotted name, default, allowed values and documentation."""

    name: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    @property
    def attr(self) -> str:
        return self.name.replace(".", "_")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.attr.upper()

    @property
    def tuning(self) -> bool:
        """A stage's constant rather than a choice a person makes (``USER_KEYS``)."""
        return self.name not in USER_KEYS

    def allowed(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        kind = _KIND_NAMES.get(type(self.default), type(self.default).__name__)
        bounds = []
        if self.minimum is not None:
            bounds.append(f">= {self.minimum:g}")
        if self.maximum is not None:
            bounds.append(f"<= {self.maximum:g}")
        return kind + (" " + " and ".join(bounds) if bounds else "")

    def parse(self, value: Any) -> Any:
        """The value converted to this key's type, or a ConfigError naming what is allowed."""
        if self.choices == SWITCH:  # true / false are a plain switch's on / off
            value = _switch_word(value)
        try:
            parsed = _convert(self.default, value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"bad value {value!r} for {self.name}: expected {self.allowed()}"
            ) from None
        too_low = self.minimum is not None and parsed < self.minimum
        too_high = self.maximum is not None and parsed > self.maximum
        if (self.choices and parsed not in self.choices) or too_low or too_high:
            raise ConfigError(f"bad value {value!r} for {self.name}: expected {self.allowed()}")
        return parsed


_KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
# The choices of a switch that may also decide by itself (``recall.message_vectors``).
SWITCH = ("auto", "on", "off")


def _switch_word(value: Any) -> Any:
    """A switch's value as one of SWITCH: true and false (and their words) as on and off."""
    text = str(value).strip().lower()
    if value is True or text in TRUE_WORDS:
        return "on"
    if value is False or text in FALSE_WORDS:
        return "off"
    return text


def _convert(default: Any, value: Any) -> Any:
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
        raise ValueError(value)
    if isinstance(default, int | float) and isinstance(value, bool):
        raise ValueError(value)  # YAML's yes/true is not the number 1
    if isinstance(default, int):
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        return int(value)
    if isinstance(default, float):
        number = float(value)
        if not math.isfinite(number):  # nan passes every bound check
            raise ValueError(value)
        return number
    if isinstance(value, dict | list):
        raise TypeError(value)
    return str(value)


def _unit(name: str, default: float, doc: str) -> Key:
    """A key between 0 and 1."""
    return Key(name, default, doc, minimum=0.0, maximum=1.0)


# The recall pipeline's constants (memctl/retrieve/); `recall.mode` presets override
# the ones a person has not set (docs/recall.md, "Recall modes").
RECALL_KEYS: tuple[Key, ...] = (
    Key(
        "recall.mode",
        "smart",
        "Preset of recall constants: smart, focused (coding), deep, working (recent).",
        choices=("smart", "focused", "deep", "working"),
    ),
    Key("recall.pinned_boost", 1.5, "Fused score multiplier of pinned memories.", minimum=0.0),
    Key(
        "recall.relevance_floor",
        0.45,
        "Cosine + words_weight x word share at which a memory shows a query is about it.",
        minimum=0.0,
    ),
    _unit(
        "recall.words_weight",
        0.3,
        "Weight of the share of the query's content words (by rarity) a memory contains.",
    ),
    _unit(
        "recall.vocabulary_weight",
        0.7,
        "Weight of the software vocabulary's synonyms of a query's words (PR: pull request), "
        "and of the instances of a kind it names (pets: dog), against the query's own words "
        "(BM25 and word share); 0: no expansion.",
    ),
    _unit(
        "recall.lead_floor",
        0.36,
        "Cosine at which the memory closest in meaning shows a query is about it, when it "
        "leads the next closest by recall.lead_margin (meaning alone: the words it shares are "
        "weighed by recall.relevance_floor).",
    ),
    _unit(
        "recall.lead_margin",
        0.05,
        "Cosine by which the closest memory must lead the next for recall.lead_floor to apply "
        "(a question in other words stands out from the store; an unrelated one scores flat).",
    ),
    _unit(
        "recall.crowd_margin",
        0.15,
        "Cosine + words_weight x word share by which a memory must exceed the cosine of the "
        "query's 10th closest memory for recall.relevance_floor to apply (in a store crowded "
        "around the query the floor rises with the crowd: a near miss by meaning has many "
        "memories about as close; not for a query naming a name the store knows); 0: off.",
    ),
    _unit(
        "recall.words_cosine",
        0.3,
        "Cosine below which a memory's shared words do not add to its relevance (words "
        "alone, with little of the meaning, are a shared topic, not an answer).",
    ),
    _unit(
        "recall.words_floor",
        0.9,
        "Share of the query's content words (by rarity) with which a memory alone shows it.",
    ),
    _unit(
        "recall.words_alone_cosine",
        0.1,
        "Cosine below which recall.words_floor of the query's words do not show a memory "
        "(every word held, in another sense: 'run' in 'its HBO run', 'tests' in a "
        "'testing-gitflows' path, is a coincidence when the meaning is unrelated).",
    ),
    Key(
        "recall.anchor_memories",
        3,
        "Memories that must mention a name the query writes capitalised (a person, a "
        "project) for a memory holding it to show the query is about the store; 0: never.",
        minimum=0,
    ),
    _unit(
        "recall.common_name_share",
        0.1,
        "Share of the memories a name the query writes capitalised must be mentioned in for "
        "the vector legs to embed the query without it (a name nearly every memory holds "
        "says nothing about which answers; it still makes its memories clear), and BM25 "
        "too when no memory holds another word of the query; 0: never.",
    ),
    Key(
        "recall.agree_top",
        0,
        "Cosine + words reaching recall.relevance_floor show relevance only in the memory "
        "closest in meaning or one both the vector and BM25 legs rank in this top (for a "
        "query naming no name the store knows); 0: alone.",
        minimum=0,
    ),
    Key(
        "recall.centred",
        False,
        "Rank by closeness in meaning with the store's mean vector taken from the query and "
        "every memory (the relevance gate keeps the raw cosine).",
    ),
    Key(
        "recall.density_weight",
        0.25,
        "Rank the possible matches by closeness in meaning less this x how crowded each "
        "memory's neighbourhood is (its mean cosine to its 10 nearest memories), in a store "
        "of 200 memories or more; 0: off (labels and clear matches keep the raw cosine).",
        minimum=0.0,
    ),
    _unit(
        "recall.support_floor",
        0.2,
        "Cosine at which other memories join one that shows the query is about it.",
    ),
    Key(
        "recall.strangers_veto",
        True,
        "A name the query writes capitalised that no memory mentions vetoes evidence by "
        "meaning alone (recall.relevance_floor, recall.lead_floor), by another name the store "
        "knows, and by one word said inside the query's time: the query is about someone or "
        "something the store does not know (not all-capital words, days, months). So does, "
        "in a store of 200 memories or more, a software term no memory names in any spelling.",
    ),
    Key(
        "recall.possible",
        1000,
        "Possible matches (the best of those the relevance gate did not label clear) "
        "`memctl recall` and MCP memory_search show after the clear ones, in the rows of "
        "--limit the clear ones leave: at most this many; never in injected context; 0: "
        "clear matches only.",
        minimum=0,
        maximum=1000,
    ),
    _unit(
        "recall.context_share",
        0.3,
        "Share of a result's score its neighbouring memories of the same session inherit.",
    ),
    _unit(
        "recall.reply_share",
        0.6,
        "Share of a question's score the memory after it in its session (its reply) inherits.",
    ),
    _unit(
        "recall.question_factor",
        0.8,
        "Score multiplier of a memory that asks a question when its reply, the memory after "
        "it, inherits from it (the reply, not the question, holds the answer).",
    ),
    Key(
        "recall.context_max_chars",
        400,
        "Only memories up to this long inherit their neighbours' scores or pass theirs on.",
        minimum=0,
    ),
    Key(
        "recall.session_vectors",
        0,
        "The best session messages (by BM25) without a stored vector embedded per query to "
        "compare with memories (0: those compete on their words alone).",
        minimum=0,
    ),
    Key(
        "recall.message_vectors",
        "auto",
        "Session messages are found by their stored vectors too, not only by their words "
        "(the slow path embeds each session's messages, maintain those from before); auto: "
        "while the store holds at most recall.message_vectors_up_to messages, past it none "
        "(their vectors dropped); true / false are on / off.",
        choices=SWITCH,
    ),
    Key(
        "recall.message_vectors_up_to",
        100_000,
        "With recall.message_vectors auto, the most session messages a store may hold for "
        "its messages to have vectors.",
        minimum=0,
    ),
    Key(
        "recall.depth",
        10,
        "Rows the retrieval legs, the cap and the possible pool are counted in, whatever the "
        "limit asked for: the first k rows of any limit are the rows of limit k.",
        minimum=1,
        maximum=1000,
    ),
    Key(
        "recall.cap",
        2,
        "Keep recall.depth x this many relevant candidates (deeper only to fill a larger limit).",
        minimum=1,
    ),
    Key("recall.rerank", False, "Rerank candidates with an LLM through Ollama."),
    Key(
        "recall.llm_gate",
        False,
        "When no memory shows a query is about the store, ask an Ollama chat model "
        "(recall.llm_model) whether the closest ones answer it (recall waits for it).",
    ),
    Key(
        "recall.llm_gate_candidates",
        5,
        "Closest memories (by meaning) the LLM second opinion judges.",
        minimum=1,
        maximum=20,
    ),
    _unit("recall.llm_gate_floor", 0.6, "LLM relevance (0-1) at which a memory shows a query."),
    Key("recall.llm_model", "llama3.2", "Ollama chat model for reranking and translation."),
    _unit("recall.rerank_weight", 0.6, "Share of the LLM score in a reranked score."),
    Key("recall.translate", False, "Also search with the English translation of a query."),
    _unit("recall.bm25_floor", 0.75, "Normalised BM25 from which the BM25 floor applies."),
    _unit("recall.bm25_floor_keep", 0.95, "Share of its pre-rerank score a strong match keeps."),
    Key("recall.half_life_days", 30.0, "Recency half-life at importance 0, in days.", minimum=0.01),
    Key(
        "recall.half_life_importance",
        1.5,
        "Half-life grows by e^(this x importance).",
        minimum=0.0,
    ),
    Key("recall.beta_core", 0.8, "Weibull shape of core memories.", minimum=0.01),
    Key("recall.beta_working", 1.0, "Weibull shape of working memories.", minimum=0.01),
    Key("recall.beta_peripheral", 1.3, "Weibull shape of peripheral memories.", minimum=0.01),
    Key(
        "recall.frequency_scale",
        5.0,
        "Frequency is 1 - e^(-access_count / this).",
        minimum=0.01,
    ),
    _unit("recall.weight_recency", 0.4, "Share of recency in the decay composite."),
    _unit("recall.weight_frequency", 0.3, "Share of access frequency in the decay composite."),
    _unit("recall.weight_intrinsic", 0.3, "Share of importance x confidence in the composite."),
    _unit("recall.floor_core", 0.9, "Lowest decay composite of a core memory."),
    _unit("recall.floor_working", 0.7, "Lowest decay composite of a working memory."),
    _unit("recall.floor_peripheral", 0.5, "Lowest decay composite of a peripheral memory."),
    _unit("recall.decay_base", 0.3, "Decay multiplies the score by base + (1 - base) x composite."),
    _unit(
        "recall.importance_base",
        0.7,
        "Importance multiplies the score by base + (1 - base) x importance.",
    ),
    Key(
        "recall.length_norm",
        0,
        "Content length (characters) above which the part of a longer memory's score its "
        "words earned is damped; 0: off.",
        minimum=0,
    ),
    _unit("recall.scope_global", 0.8, "Score multiplier of global memories."),
    _unit("recall.scope_other", 0.4, "Score multiplier of other projects' memories."),
    Key(
        "recall.time_boost",
        1.5,
        "Score multiplier of memories inside a time window named by the query.",
        minimum=1.0,
    ),
    Key("recall.spread_hops", 2, "Hops of spreading activation over relations.", minimum=0),
    _unit("recall.spread_decay", 0.5, "Activation multiplier per hop (times the edge weight)."),
    Key("recall.spread_seeds", 5, "Top results that spread activation.", minimum=0),
    _unit(
        "recall.graph_share",
        0.6,
        "Share of the best score given to a memory stating a graph edge the query matches "
        "(0: the graph stage lifts nothing).",
    ),
    _unit(
        "recall.graph_min_match",
        0.34,
        "Share of the query's other words a graph edge must hold to lift its memories.",
    ),
    Key("recall.graph_entities", 4, "The query's entities the graph stage starts from.", minimum=0),
    Key("recall.graph_edges", 400, "Graph edges read per hop from the entities.", minimum=1),
    Key(
        "recall.graph_synthetic",
        1,
        "Two-hop graph paths no candidate states, each added as one synthetic result.",
        minimum=0,
    ),
    _unit("recall.superseded_factor", 0.5, "Score multiplier of superseded memories."),
    _unit("recall.contradicted_factor", 0.3, "Score multiplier of contradicted memories."),
    _unit("recall.conflict_factor", 0.3, "Multiplier of the weaker side of a contradiction."),
    _unit("recall.cutoff", 0.005, "Drop results whose final score is below this."),
    _unit("recall.mmr_threshold", 0.85, "Word-Jaccard above which a result is a near duplicate."),
    _unit("recall.mmr_factor", 0.5, "Score multiplier of a near duplicate."),
    Key("recall.chars_per_token", 4.0, "Characters per token when packing a budget.", minimum=0.1),
    Key(
        "recall.cjk_chars_per_token",
        1.17,
        "Chinese characters (and CJK punctuation) per token when packing a budget.",
        minimum=0.1,
    ),
    Key(
        "recall.context_budget",
        1500,
        "Token budget of --format context when --budget is not given (0: none).",
        minimum=0,
    ),
    Key(
        "recall.strength_step",
        0.1,
        "Strength a recalled memory gains (capped at 1).",
        minimum=0.0,
        maximum=1.0,
    ),
)


KEYS: tuple[Key, ...] = (
    Key(
        "embedder",
        "local",
        "Embedding provider: the bundled MiniLM model, an Ollama server, or hash (words "
        "only, no model: for tests and machines without the model).",
        choices=("local", "ollama", "hash"),
    ),
    Key("embed.batch_size", 32, "Texts embedded per batch.", minimum=1, maximum=4096),
    Key("embed.model_dir", "", "Directory of the local model files; empty finds them itself."),
    Key(
        "ollama.host",
        "http://127.0.0.1:11434",
        "Ollama server URL (OLLAMA_HOST is used when this key is not set).",
    ),
    Key("ollama.embed_model", "nomic-embed-text", "Ollama model used when embedder is ollama."),
    Key("ollama.timeout", 30.0, "Seconds to wait for an Ollama answer.", minimum=0.1),
    Key("store.busy_timeout_ms", 5000, "How long a write waits for a locked database.", minimum=0),
    Key(
        "scope.personal_global",
        True,
        "Profile and preferences memories (distilled, or remembered with that --category) "
        "go to the global scope unless a scope is given.",
    ),
    Key(
        "remember.category",
        "auto",
        "Category given to `memctl remember` and MCP `memory_store` memories without one; "
        "auto: classified by the extraction rules.",
        choices=("auto", "profile", "preferences", "entities", "events", "cases", "patterns"),
    ),
    Key(
        "remember.importance",
        0.8,
        "Importance given to `memctl remember` memories.",
        minimum=0.0,
        maximum=1.0,
    ),
    _unit(
        "remember.question_floor",
        0.15,
        "Cosine a question stored with a memory (MCP memory_store, host distillation) must "
        "reach with the memory's text to be kept; the others are dropped as off-topic.",
    ),
    Key("recall.limit", 10, "Memories returned by `memctl recall`.", minimum=1, maximum=1000),
    Key(
        "recall.resident",
        True,
        "Answer `memctl recall` and the start and prompt hooks from a resident process per"
        " home (`memctl daemon`), started by the session-start hook, the MCP server or a"
        " recall that finds none; off: each loads the model itself.",
    ),
    Key(
        "recall.resident_idle",
        1200.0,
        "Seconds without a request after which the resident recall process exits.",
        minimum=1.0,
    ),
    Key(
        "recall.candidates",
        3,
        "Each retrieval leg fetches recall.depth x this many candidates (deeper only to fill a "
        "larger limit).",
        minimum=1,
        maximum=50,
    ),
    Key("recall.weight_vector", 0.4, "Fusion weight of the vector leg.", minimum=0.0),
    Key("recall.weight_bm25", 0.6, "Fusion weight of the BM25 leg.", minimum=0.0),
    Key(
        "recall.weight_words",
        0.25,
        "Fusion weight of the share of the query's content words (by rarity) a memory holds.",
        minimum=0.0,
    ),
    *RECALL_KEYS,
    Key("list.limit", 50, "Rows shown by `memctl list` and `memctl events`.", minimum=1),
    Key(
        "llm",
        "auto",
        "Language model for ingest and import: auto (Ollama when it answers, else the rules), "
        "ollama, openai (any OpenAI-compatible chat endpoint), claude-code or codex (that "
        "assistant's CLI run headless by the worker: your own model quota), or none "
        "(rule-based stages only).",
        choices=("auto", "ollama", "openai", "claude-code", "codex", "none"),
    ),
    Key(
        "llm.headless_model",
        "",
        "With llm claude-code or codex: the model the CLI runs (empty: the CLI's default).",
    ),
    Key(
        "ollama.connect_timeout",
        2.0,
        "Seconds to wait to connect to Ollama (or the openai endpoint); a server not reached "
        "is not retried.",
        minimum=0.05,
    ),
    Key(
        "llm.probe_cache_seconds",
        60,
        "llm auto: how long the answer of the check for Ollama is reused (0: check every run).",
        minimum=0,
    ),
    Key("ollama.chat_model", "llama3.2", "Ollama chat model used when llm is ollama (or auto)."),
    Key(
        "openai.base_url",
        "https://api.openai.com/v1",
        "Base URL of the OpenAI-compatible chat endpoint used when llm is openai (llama.cpp, "
        "LM Studio, vLLM, Ollama's /v1, OpenAI, OpenRouter).",
    ),
    Key("openai.model", "gpt-4o-mini", "Model asked for when llm is openai."),
    Key(
        "openai.api_key_env",
        "OPENAI_API_KEY",
        "Name of the environment variable holding the API key (the key itself is never "
        "stored in config); unset or empty: no key is sent.",
    ),
    Key("llm.timeout", 120.0, "Seconds to wait for one LLM answer.", minimum=0.1),
    Key(
        "llm.retries", 2, "Retries after a failed LLM call before falling back to rules.", minimum=0
    ),
    Key(
        "llm.backoff_seconds",
        1.0,
        "Wait before the first LLM retry; doubled for each further retry.",
        minimum=0.0,
    ),
    Key("llm.temperature", 0.0, "Sampling temperature of LLM calls.", minimum=0.0, maximum=2.0),
    Key("ingest.token_budget", 20000, "LLM tokens one ingest run may use.", minimum=0),
    Key(
        "llm.daily_token_budget",
        1_000_000,
        "LLM tokens all runs together may use in a day (local time), headless assistants' "
        "quota included; past it a run falls back to the rules (0: no daily limit).",
        minimum=0,
    ),
    Key(
        "ingest.spawn_worker",
        True,
        "Start a detached worker after `memctl ingest`; off leaves jobs to `memctl maintain`.",
    ),
    Key(
        "ingest.job_stale_seconds",
        900,
        "A running job claimed longer ago than this is taken to be abandoned and retried.",
        minimum=1,
    ),
    Key(
        "ingest.lock_wait_ms",
        2000,
        "How long a hook's ingest waits for a busy database before it spools the transcript "
        "to $MEMCTL_HOME/spool for the next ingest or maintain to store.",
        minimum=0,
    ),
    Key(
        "ingest.host_distil",
        False,
        "With no local LLM, leave fact extraction to the host assistant (MCP tools) "
        "instead of the rules; the session digest is written either way.",
    ),
    Key("ingest.job_max_attempts", 3, "Attempts at a job before it is marked failed.", minimum=1),
    Key(
        "maintain.tasks",
        "rescrub,jobs,decay,consolidate,dedup,archive,graph,profile,upkeep,sync",
        "The tasks `memctl maintain` runs, in this order (--only and --skip choose among them); "
        "rescrub runs first when unnamed, unless named off as -rescrub.",
    ),
    Key(
        "maintain.decay_episodic",
        0.15,
        "Strength an episodic memory loses per day unused: strength x e^(-rate x days).",
        minimum=0.0,
    ),
    Key("maintain.decay_semantic", 0.03, "... and a semantic one (pinned: never).", minimum=0.0),
    _unit(
        "maintain.decay_min_change",
        0.05,
        "Decay writes a strength only when it fell by at least this share since last written.",
    ),
    Key(
        "maintain.consolidate_after_days",
        3.0,
        "Episodic memories older than this are distilled into semantic facts.",
        minimum=0.0,
    ),
    Key("maintain.consolidate_max", 20, "Episodes consolidated per run.", minimum=0),
    Key(
        "maintain.merge_after_days",
        7.0,
        "Semantic memories older than this may be merged with similar ones.",
        minimum=0.0,
    ),
    _unit("maintain.merge_similarity", 0.82, "Cosine from which old semantic memories merge."),
    Key("maintain.merge_max_clusters", 10, "Clusters merged per run.", minimum=0),
    _unit("maintain.dedup_similarity", 0.95, "Cosine from which two memories are duplicates."),
    Key(
        "maintain.exact_comparisons",
        25_000_000,
        "Up to this many comparisons (new memories x all) similar pairs are found exactly; "
        "above, by LSH buckets.",
        minimum=0,
    ),
    Key(
        "maintain.threads",
        1,
        "Threads numpy's BLAS may use during maintain (its comparisons are many small "
        "blocks: more threads mostly wait for each other, and cron shares the machine).",
        minimum=1,
    ),
    Key(
        "maintain.write_batch",
        500,
        "Dedup writes this many clusters' folds in one transaction.",
        minimum=1,
    ),
    Key("maintain.lsh_tables", 12, "LSH hash tables (more find more pairs, slower).", minimum=1),
    Key("maintain.lsh_bits", 14, "Hyperplanes per LSH table (fewer: bigger buckets).", minimum=1),
    _unit("maintain.archive_strength", 0.1, "Memories weaker than this may be archived ..."),
    Key(
        "maintain.archive_unused_days",
        30.0,
        "... when nobody recalled them for this many days.",
        minimum=0.0,
    ),
    Key("maintain.archive_max", 50, "Memories archived per run.", minimum=0),
    Key(
        "maintain.backups",
        7,
        "Backups kept under $MEMCTL_HOME/backups (the newest); 0 makes none.",
        minimum=0,
    ),
    Key(
        "maintain.backup_every_hours",
        24.0,
        "A backup is made when the store changed and the newest is this old (0: every run "
        "that changed something).",
        minimum=0.0,
    ),
    Key("maintain.token_budget", 20000, "LLM tokens one maintain run may use.", minimum=0),
    Key(
        "select.messages",
        20,
        "The slow path distils a session's new messages in batches of at most this many.",
        minimum=1,
    ),
    Key("select.max_bytes", 200_000, "... and at most this many bytes a batch.", minimum=1000),
    Key(
        "digest.max_chars",
        2400,
        "Longest session digest (the episodic memory each session becomes), in characters.",
        minimum=200,
    ),
    Key(
        "digest.items",
        6,
        "Items a digest lists per section (requests, decisions, files, commands, errors).",
        minimum=1,
    ),
    Key(
        "digest.report_chars",
        800,
        "Characters of each sub-agent's report a digest keeps (conclusions, headings and "
        "findings first); the stored session keeps the report whole.",
        minimum=50,
    ),
    Key("extract.max_facts", 50, "Facts one extraction may return.", minimum=1),
    Key(
        "extract.chunk_chars",
        8000,
        "Transcript characters sent per LLM call, and per host-model (MCP) task.",
        minimum=500,
    ),
    Key(
        "noise.similarity",
        0.82,
        "A fact this similar to a noise prototype or learned noise vector is dropped.",
        minimum=0.0,
        maximum=1.0,
    ),
    Key(
        "noise.learned_max",
        200,
        "Learned noise vectors kept (from `memctl forget --noise`); the oldest go first.",
        minimum=0,
    ),
    Key("admission.weight_utility", 0.1, "Admission weight of importance.", minimum=0.0),
    Key("admission.weight_confidence", 0.1, "Admission weight of confidence.", minimum=0.0),
    Key("admission.weight_novelty", 0.1, "Admission weight of novelty.", minimum=0.0),
    Key("admission.weight_recency", 0.1, "Admission weight of recency.", minimum=0.0),
    Key("admission.weight_prior", 0.6, "Admission weight of the category prior.", minimum=0.0),
    *(
        Key(
            f"admission.prior_{name}",
            prior,
            f"Category prior of {name} facts.",
            minimum=0.0,
            maximum=1.0,
        )
        for name, prior in (
            ("profile", 0.95),
            ("preferences", 0.90),
            ("patterns", 0.85),
            ("cases", 0.80),
            ("entities", 0.75),
            ("events", 0.45),
        )
    ),
    Key("admission.reject", 0.45, "Facts scoring below this are rejected.", minimum=0.0),
    Key(
        "admission.admit",
        0.60,
        "Facts scoring this or more are admitted; between reject and this, as peripheral.",
        minimum=0.0,
    ),
    Key(
        "admission.recency_half_life_days",
        30.0,
        "Age of a message at which its facts' recency score halves.",
        minimum=0.01,
    ),
    Key("reconcile.vector_top", 5, "Existing memories gathered per fact by vector.", minimum=0),
    Key("reconcile.fts_top", 5, "Existing memories gathered per fact by full text.", minimum=0),
    Key(
        "reconcile.min_similarity",
        0.3,
        "Vector neighbours less similar than this are not gathered.",
        minimum=0.0,
        maximum=1.0,
    ),
    Key("reconcile.max_candidates", 60, "Existing memories shown per batch, at most.", minimum=1),
    Key(
        "reconcile.duplicate_similarity",
        0.95,
        "Rules: a fact this similar to a memory says nothing new (SKIP).",
        minimum=0.0,
        maximum=1.0,
    ),
    Key(
        "reconcile.support_similarity",
        0.85,
        "Rules: this similar, same subject and polarity, the fact supports the memory.",
        minimum=0.0,
        maximum=1.0,
    ),
    Key(
        "reconcile.match_similarity",
        0.7,
        "Rules: this similar, the fact is about the same thing (merge, supersede, contradict).",
        minimum=0.0,
        maximum=1.0,
    ),
    Key(
        "reconcile.related_similarity",
        0.5,
        "Rules: this similar and qualifying, the fact contextualizes the memory.",
        minimum=0.0,
        maximum=1.0,
    ),
    Key("reconcile.support_boost", 0.1, "Confidence a SUPPORT adds (up to 1).", minimum=0.0),
    Key(
        "import.split_chars",
        80_000,
        "`memctl import`: a text longer than this is distilled in chunks of at most this size.",
        minimum=1000,
    ),
    Key(
        "import.split_overlap", 2000, "Characters each chunk repeats of the one before.", minimum=0
    ),
    Key(
        "import.section_words",
        500,
        "A document with headings and at least this many words makes one memory a section.",
        minimum=1,
    ),
    Key(
        "import.conversation_lines",
        3,
        "A text with this many lines starting with user:, assistant:, human: or ai: is a "
        "conversation.",
        minimum=1,
    ),
    Key("import.concurrency", 3, "Files distilled at once (writing is one at a time).", minimum=1),
    Key("import.token_budget", 100_000, "LLM tokens the import of one file may use.", minimum=0),
    Key(
        "import.max_facts",
        2000,
        "Atomic import: facts one file may give; extraction stops there (the whole text "
        "stays stored and searchable).",
        minimum=1,
    ),
    Key(
        "import.extract_chars",
        10_000_000,
        "Atomic import: characters of one file facts are extracted from; the rest is stored "
        "and searchable, not distilled (bounds the time a huge file takes).",
        minimum=1000,
    ),
    Key(
        "import.reconcile_batch",
        50,
        "Facts reconciled (and written) together; later batches see the earlier ones.",
        minimum=1,
    ),
    Key(
        "hooks.timeout",
        10,
        "Seconds a client gives each memctl hook (written at install).",
        minimum=1,
    ),
    Key(
        "hooks.recapture_hours",
        24.0,
        "A capture hook captures again the transcripts that grew within this many hours.",
        minimum=0.0,
    ),
    Key(
        "hooks.recapture_max", 3, "Other sessions' transcripts one hook captures again.", minimum=0
    ),
    Key(
        "context.identity_budget",
        300,
        "Tokens of a session's context for the identity files (L0, verbatim; cut beyond).",
        minimum=0,
    ),
    Key(
        "context.essentials_budget",
        700,
        "Tokens for profile, preferences and the project's pinned facts and conventions (L1).",
        minimum=0,
    ),
    Key(
        "context.recent_budget",
        500,
        "Tokens for recent work: latest session digests, recent cases and events (L2).",
        minimum=0,
    ),
    Key(
        "context.prompt_budget",
        300,
        "Tokens the per-prompt hook (install --per-prompt) may add to a prompt (L3).",
        minimum=1,
    ),
    Key(
        "context.compact",
        False,
        "Compact context for the hooks: half the essentials (L1), no recent work (L2), at "
        "most 3 memories per prompt (L3).",
    ),
    Key(
        "mcp.search_limit",
        8,
        "Memories `memory_search` returns when no limit is given.",
        minimum=1,
        maximum=100,
    ),
    Key(
        "mcp.ingest_paths",
        "",
        "Folders (separated by `:`) whose files MCP `memory_ingest` may read, besides the "
        "clients' transcript folders.",
    ),
    Key("sync.remote", "", "Git repository `memctl sync` shares memories through (URL or path)."),
    Key(
        "sync.include",
        "promoted",
        "What `memctl sync` publishes: promoted (shared) memories, or all (a personal "
        "repository) but those withheld with `memctl unpromote`.",
        choices=("promoted", "all"),
    ),
    Key("sync.readonly", False, "Pull and import, never commit or push (a published memory)."),
    Key("sync.auto", False, "`memctl maintain` also syncs."),
    Key(
        "sync.trust",
        "",
        "Machines (host ids or their first characters, separated by spaces, or `all`) whose "
        "memories may open a session's start block and rank among your own in recall; "
        "others' are recalled when asked for, after your own. A host whose key "
        "`memctl sync trust HOST:KEY` gave (kept in `sync-hosts.keys`, not here) is "
        "trusted only in the files its key signed (docs/sync.md).",
    ),
    Key(
        "sync.max_file_bytes",
        1_048_576,
        "A repository file larger than this is skipped, unread.",
        minimum=1024,
    ),
    Key("sync.push_retries", 8, "Pushes retried after the remote moved meanwhile.", minimum=0),
    Key(
        "sync.git_timeout",
        120.0,
        "Seconds a clone, fetch or push may take before it is stopped.",
        minimum=1.0,
    ),
    Key(
        "sync.lock_wait",
        60.0,
        "Seconds a sync waits for another one to finish before giving up.",
        minimum=0.0,
    ),
)
# The choices a person makes: where models and the store live, which LLM, budgets,
# scopes, hooks, sync (docs/configuration.md "Settings"). Every other key is a stage's
# tuning constant: a documented default with its reason, still overridable the same
# ways for experiments, listed apart ("Tuning") and left out of `memctl config show`
# unless set or asked for with --all.
USER_KEYS = frozenset(
    {
        "embedder",
        "embed.model_dir",
        "ollama.host",
        "ollama.embed_model",
        "ollama.chat_model",
        "llm",
        "llm.headless_model",
        "openai.base_url",
        "openai.model",
        "openai.api_key_env",
        "scope.personal_global",
        "remember.category",
        "recall.limit",
        "recall.resident",
        "recall.resident_idle",
        "recall.mode",
        "recall.llm_gate",
        "recall.rerank",
        "recall.context_budget",
        "list.limit",
        "ingest.token_budget",
        "llm.daily_token_budget",
        "ingest.host_distil",
        "maintain.tasks",
        "maintain.backups",
        "maintain.token_budget",
        "hooks.timeout",
        "context.prompt_budget",
        "context.compact",
        "mcp.ingest_paths",
        "sync.remote",
        "sync.include",
        "sync.readonly",
        "sync.auto",
        "sync.trust",
    }
)
# Keys a project's .memctl/config.yaml may not set: it came with the repository, and these
# say where the person's data goes or whose word memctl trusts. A cloned repository naming
# a model server or provider would receive every session's text (``ollama.host``,
# ``openai.base_url``, ``llm``), the variable holding an API key would send that variable
# (``openai.api_key_env: GITHUB_TOKEN``), a sync remote would receive the shared memories,
# ``sync.trust`` would open sessions with anyone's memories and rank them as the person's,
# ``mcp.ingest_paths`` would let MCP read more of the disk, and the store's embedder is the
# whole store's. The person sets them in the home's config.yaml, the environment or a flag.
PERSONAL_KEYS = frozenset(
    {
        "embedder",
        "embed.model_dir",
        "ollama.host",
        "ollama.embed_model",
        "llm",
        "openai.base_url",
        "openai.api_key_env",
        "mcp.ingest_paths",
        "sync.remote",
        "sync.include",
        "sync.readonly",
        "sync.auto",
        "sync.trust",
    }
)
KEYS_BY_NAME = {key.name: key for key in KEYS}
KEY_NAMES_BY_ATTR = {key.attr: key.name for key in KEYS}


def key_named(name: str) -> Key:
    """The key called ``name``, or a ConfigError naming the closest known key."""
    key = KEYS_BY_NAME.get(name)
    if key is None:
        raise ConfigError(
            f"unknown config key {name!r}{did_you_mean(name, KEYS_BY_NAME)}; "
            "see `memctl config show --all`"
        )
    return key
