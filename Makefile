# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv and install polyfw with the exact versions of constraints.txt first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.polyfw-installed
export OMP_WAIT_POLICY := passive

.PHONY: demo test install clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,mpi]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/polyfw demo

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
