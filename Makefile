# Everyday developer commands; docs/architecture.md's Development section says the same.
.PHONY: setup test test-fast lint fmt docs bench

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
	$(PY) scripts/gen_mcp_answers.py
	$(PY) scripts/gen_schema.py

# LOCOMO=FILE also runs LoCoMo on that file (docs/benchmarks.md says where the data comes from).
bench:
	$(PY) benchmarks/embed_speed.py
	$(PY) benchmarks/ingest_speed.py
	$(PY) benchmarks/recall_speed.py --n 10000
	$(if $(LOCOMO),$(PY) -m benchmarks locomo --data $(LOCOMO) --cache /tmp/memctl-bench,@echo "make bench LOCOMO=FILE also runs LoCoMo (docs/benchmarks.md: the data)")

# The inner loop: no processes, no real model, no assistant clients (tests/conftest.py marks
# them slow / e2e); `make test` and CI run everything.
test-fast:
	$(PY) -m pytest -q -m "not slow and not e2e"
