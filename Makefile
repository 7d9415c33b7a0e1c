# Two commands do all the set-up on a fresh machine:
#   make run    install into .venv, then convert and benchmark sample_models/ on this host
#   make test   install into .venv, then run the whole test suite (what CI runs)
# and `make docs` serves the documentation site (mkdocs.yml) on http://127.0.0.1:8000.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.nnlite-installed
RUN_DIR ?= runs/sample_models
RUN_ARGS ?=
# constraints.txt pins torch to its +cpu build, so a CUDA build can never come in. pip finds it where
# this machine's pip configuration points (a local wheel); elsewhere give PyTorch's CPU index:
#   make install TORCH_INDEX=<PyTorch's CPU wheel index URL>
TORCH_INDEX ?=
PIP_INSTALL := $(BIN)/pip install --quiet -c constraints.txt

.PHONY: install run test docs clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch and torchvision first (exact versions in constraints.txt), so that nothing later
	# resolves torch to a CUDA build.
	$(PIP_INSTALL) $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) torch torchvision
	$(PIP_INSTALL) -e '.[dev,ray,executorch]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/nnlite run sample_models --out $(RUN_DIR) $(RUN_ARGS)

test: $(STAMP)
	-$(BIN)/nnlite doctor
	$(BIN)/ruff check .
	$(BIN)/mypy
	bash android-app/test-core.sh
	# Two worker processes, each test file whole on one of them (its module fixtures built once): most
	# tests wait on subprocesses, so the two cores overlap them.
	$(BIN)/python -m pytest -q -rs -p no:cacheprovider -n 2 --dist loadfile --durations=20

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) runs
