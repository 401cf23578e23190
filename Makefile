# Everything runs from a virtualenv in .venv, created on first use from the clone itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: try test postgres lint typecheck harness unit shuffled generate bench clean

# pip's output (setuptools' warnings among it) goes to a log, shown whole when pip fails.
$(STAMP): pyproject.toml
	@echo "qctl: setting up $(VENV), 1 to 2 minutes (pip's log: $(VENV)/install.log)"
	@$(PYTHON) -m venv $(VENV)
	@( $(BIN)/python -m pip install -q --upgrade pip \
	  && $(BIN)/python -m pip install -q -e '.[test]' ) >$(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log >&2; \
	       echo "qctl: setting up $(VENV) failed: pip's log is above and in $(VENV)/install.log" >&2; \
	       exit 1; }
	@touch $(STAMP)
	@echo "qctl: $(VENV) is ready"

try: $(STAMP)  ## the live demo workload in the dashboard (embedded database)
	$(BIN)/qctl demo

test: lint typecheck harness unit shuffled  ## the whole test suite: ruff, mypy, pytest, a shuffled run

postgres:  ## a PostgreSQL server at the tests' default DSN (installs and starts one if none answers)
	bash scripts/postgres.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The test partners built before the tests, under their own limit (HARNESS_TIMEOUT,
# seconds): the Go harness (tests/go; without Go nothing, unless QCTL_REQUIRE_GO=1) and
# oban-py's Python 3.12 environment (tests/oban/.venv-obanpy; without a Python 3.12
# nothing, unless QCTL_REQUIRE_OBAN=1).
harness:
	@bash scripts/build_harness.sh

unit: $(STAMP) harness
	$(BIN)/pytest

# The conformance suites once more in a random order (pytest-randomly prints the seed;
# SHUFFLE_ARGS=--randomly-seed=N replays that order): every test stands on its own.
shuffled: $(STAMP)
	$(BIN)/pytest tests/conformance -p randomly $(SHUFFLE_ARGS)

generate: $(STAMP)  ## regenerate completions/, man/ and qctl/cli/help.txt from the command tree
	$(BIN)/python scripts/generate_docs.py

bench: $(STAMP)  ## benchmarks into docs/benchmarks.md (BENCH_ARGS=--quick for a smoke run)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
