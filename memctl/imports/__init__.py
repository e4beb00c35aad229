"""File import: documents, notes, chat exports and other tools' memories into memories.

``pipeline`` runs it: ``files`` (what to read) -> ``detect`` (format and
strategy) -> ``raw`` (the text stored first) -> ``distil`` (facts, in worker
threads: ``split``, ``sections``, ``summarise``, ingest's extract) ->
``dedupe`` and ingest's noise, admission, reconcile and apply (one writer).
Each format is a module of ``formats``.
"""

# --strategy: auto picks one of the others per file (see ``detect``).
STRATEGIES = ("auto", "atomic", "section", "document")
