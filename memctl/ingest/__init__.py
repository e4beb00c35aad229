"""Conversation ingest: transcripts in, durable memories out.

Fast path (what a session-end hook waits for): ``capture`` parses a
transcript (``parse``, one module per client format, reading ``source`` as a
stream), applies ``privacy``, stores the new messages verbatim and queues a
job; ``worker`` runs the queue in a detached process.

Slow path (``pipeline``): select -> privacy -> ``extract`` (LLM, or
``extract_rules``) -> ``noise`` -> ``admission`` -> ``reconcile`` (LLM in
``reconcile_llm``, or ``reconcile_rules``) -> ``apply``; a ``run`` records
what it did, and ``undo`` reverts it.

Other pipelines reuse the distillation on their own text: wrap it in
``facts.Passage``s, start a ``run.Run`` (``start_run``), then
``extract.extract(run, passages) -> list[Fact]``, ``pipeline.embed(run,
facts)``, the fact stages (``noise.drop_noise``, ``admission.admit``),
``reconcile.decide(run, facts) -> list[Decision]`` and, inside a
transaction, ``apply.apply(run, decisions)`` and ``store.runs.save_run``.
"""
