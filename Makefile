# The two set-up commands of the README: each creates the virtualenv and installs pdeval itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test docs bench bench-dask notebooks clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	rm -f $(VENV)/.installed-* && touch $@

demo: $(STAMP)
	$(BIN)/pdeval report --out report

test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4

# the documentation, warnings as errors; notebooks are shown with their committed outputs
docs: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	$(BIN)/python -m sphinx -b html -W --keep-going docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python bench/run.py

bench-dask: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python bench/dask_large.py

notebooks: $(STAMP)
	$(BIN)/python scripts/run_notebooks.py

clean:
	rm -rf $(VENV) report docs/_build docs/api docs/notebooks
