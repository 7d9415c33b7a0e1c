# Two commands do all the set-up on a fresh machine:
#   make run    install into .venv, then convert and benchmark sample_models/ on this host
#   make test   install into .venv, then run the whole test suite (what CI runs)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.nnlite-installed
RUN_DIR ?= runs/sample_models
RUN_ARGS ?=
# PyTorch's CPU wheels; constraints.txt pins torch to the +cpu build, so a CUDA build can never come in.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
PIP_INSTALL := $(BIN)/pip install --quiet -c constraints.txt

.PHONY: install run test clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch and torchvision first, their CPU builds from PyTorch's index (exact versions in
	# constraints.txt), so that nothing later resolves them to CUDA builds from PyPI.
	$(PIP_INSTALL) --extra-index-url $(TORCH_INDEX) torch torchvision
	$(PIP_INSTALL) -e '.[dev]'
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
