"""Benchmarks: recall quality on public datasets, and speed at scale."""
