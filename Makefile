# Two entry points, each creating/refreshing the virtualenv it needs.
# Installs are pinned by constraints.txt (the versions the README's figures were measured with);
# pyproject.toml keeps compatible ranges for library users.  `make lock` refreshes the pins.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
EXTRAS := test,cli,ortools,dask,peers
# pytest-xdist processes for the default run (the machines here have 2 cores)
TEST_JOBS ?= 2

.PHONY: demo test lint bench lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt --upgrade pip

# The demo needs the library and its command line (the cli extra: typer, rich, matplotlib);
# the tests also need the optional backends, dask and the synthetic-data peers (MST, AIM on mbi).
$(DEMO_STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[cli]"
	touch $(DEMO_STAMP)

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[$(EXTRAS)]"
	touch $(STAMP) $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/oracledp demo --out demo-output

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks lab scripts
	$(BIN)/python -m pytest -n $(TEST_JOBS)
	$(BIN)/python scripts/release_checks.py

bench: $(STAMP)
	$(BIN)/python benchmarks/oracle_adult.py

# Resolve pyproject's ranges afresh in a scratch venv and freeze the result into constraints.txt.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet -e ".[$(EXTRAS)]"
	{ sed -n '1,/^pip==/{/^#/p}' constraints.txt; \
	  .lock-venv/bin/python -m pip --version | awk '{print "pip==" $$2}'; \
	  .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^oracledp'; } > constraints.new
	mv constraints.new constraints.txt
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) demo-output .pytest_cache
