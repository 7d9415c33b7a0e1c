# Two commands do all the set-up on a fresh machine:
#   make run    install into .venv, then convert and benchmark sample_models/ on this host
#   make test   install into .venv, then run the whole test suite (what CI runs)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.nnlite-installed
RUN_DIR ?= runs/sample_models
RUN_ARGS ?=

.PHONY: install run test clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch first, pinned to the CPU wheel: an unpinned torch pulls a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/nnlite run sample_models --out $(RUN_DIR) $(RUN_ARGS)

test: $(STAMP)
	$(BIN)/ruff check .
	bash android-app/test-core.sh
	$(BIN)/python -m pytest -q -p no:cacheprovider

clean:
	rm -rf $(VENV) runs
