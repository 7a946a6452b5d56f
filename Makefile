# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv and install polyfw with the exact versions of constraints.txt first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.polyfw-installed
export OMP_WAIT_POLICY := passive

.PHONY: demo test docs install clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,mpi,docs]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/polyfw demo

# first what a machine of another kind or a user of the wheel would meet: the ISA-dependent tests under
# each narrower ISA this machine executes, and the wheel installed (not editable) into a fresh venv
test: $(STAMP)
	for isa in $$($(BIN)/python -c 'from codegen.intrinsics import narrower_isas; print(*narrower_isas())'); do \
	    echo "ISA-dependent tests under POLYFW_ISA=$$isa"; \
	    POLYFW_ISA=$$isa $(BIN)/python -m pytest -q -n auto -m "isa and not slow" || exit 1; \
	done
	PYTHON=$(PYTHON) bash scripts/wheel_check.sh
	$(MAKE) docs
	$(BIN)/python -m pytest -n auto

# the documentation site, from docs/ (pages, the notebooks' committed outputs, the docstrings, the benchmarks'
# records); any warning fails the build. Open docs/_build/html/index.html.
docs: $(STAMP)
	rm -rf docs/_build
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis docs/_build docs/performance.md
