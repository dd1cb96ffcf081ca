# Two entry points, each creating/refreshing the virtualenv it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,ortools,dask]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/oracledp demo --out demo-output

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/oracle_adult.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache
