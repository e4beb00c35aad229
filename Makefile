# Everyday developer commands; the README's Development section says the same.
.PHONY: setup test lint fmt docs bench

PY := .venv/bin/python

setup:
	./scripts/setup --test --bench

test:
	$(PY) -m pytest -q

lint:
	$(PY) -m ruff check . && $(PY) -m ruff format --check . && $(PY) -m mypy memctl

fmt:
	$(PY) -m ruff check --fix . && $(PY) -m ruff format .

docs:
	$(PY) scripts/gen_docs.py

bench:
	$(PY) benchmarks/embed_speed.py
	$(PY) benchmarks/ingest_speed.py
	$(PY) benchmarks/recall_speed.py --n 10000
	$(PY) -m benchmarks locomo --data ../shared/bench/locomo-dev.json --cache /tmp/memctl-bench
