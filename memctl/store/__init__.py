"""The only package that speaks SQL; ``writes`` is the one write path over it (every change
to a memory, an edge or the event log, with its event and its revert)."""
