# tuwviz: set-up, JupyterLab and tests in one place.
#
#   make lab     create .venv, install everything, build the kernels, start JupyterLab
#   make test       the same set-up, then the test suite (p and roots sampled; CI runs this)
#   make test-full  the same, plus the exhaustive sweeps (every p up to 17, every root)
#
# Everything lands in $(VENV) and build/; nothing is installed system-wide except
# Chromium for the browser tests (`make browser`, via apt-get).

VENV        ?= .venv
PYTHON      ?= python3
PY          = $(VENV)/bin/python
# Extras installed into the venv: `mpi` brings MPICH from PyPI. With a cluster's own MPI
# (mpi4py already built against it in $(VENV)), use `make lab EXTRAS=test`.
EXTRAS      ?= mpi,test
PYTEST_ARGS ?=
LAB_ARGS    ?=
CHROMIUM    ?= /usr/bin/chromium
STAMP       = $(VENV)/.installed
TEST_HOME   = $(CURDIR)/build/home
# The venv's bin first on PATH, as if activated, so mpiexec, mpicc and jupyter are found.
ACTIVATE    = PATH="$(abspath $(VENV))/bin:$$PATH"

.DEFAULT_GOAL := help
.PHONY: help setup kernels lab test test-full browser clean

help: ## list the targets
	@echo "tuwviz make targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
	    awk 'BEGIN {FS = ":.*## "} {printf "  make %-9s %s\n", $$1, $$2}'
	@echo "Variables: VENV=$(VENV) PYTHON=$(PYTHON) EXTRAS=$(EXTRAS) PYTEST_ARGS=... LAB_ARGS=..."

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	    { echo "tuwviz needs Python 3.10 or newer; '$(PYTHON)' is older (set PYTHON=...)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --disable-pip-version-check -e ".[$(EXTRAS)]"
	$(PY) -m tuwviz.kernels
	@touch $@

setup: $(STAMP) ## create .venv, install tuwviz with MPI from PyPI, build the C kernels

kernels: $(STAMP) ## (re)build the C kernels now (they also rebuild on change by themselves)
	$(PY) -m tuwviz.kernels

lab: $(STAMP) ## start JupyterLab on 127.0.0.1 (token on): the repository, opened in notebooks/
	$(ACTIVATE) $(VENV)/bin/tuwviz lab $(LAB_ARGS)

# Tests keep IPython and Jupyter state inside build/home, never in ~.  The quick run's
# per-test hang guard is 600 s (no quick test comes near it), so a hang fails in minutes.

test test-full: export IPYTHONDIR := $(TEST_HOME)/ipython
test test-full: export JUPYTER_CONFIG_DIR := $(TEST_HOME)/jupyter/config
test test-full: export JUPYTER_DATA_DIR := $(TEST_HOME)/jupyter/data
test test-full: export JUPYTER_RUNTIME_DIR := $(TEST_HOME)/jupyter/runtime

test: $(STAMP) browser ## set up, then run the test suite, p and roots sampled (PYTEST_ARGS=... to narrow)
	@mkdir -p "$(IPYTHONDIR)" "$(JUPYTER_CONFIG_DIR)" "$(JUPYTER_DATA_DIR)" "$(JUPYTER_RUNTIME_DIR)"
	$(ACTIVATE) $(PY) -m pytest --durations=15 --timeout=600 $(PYTEST_ARGS)

test-full: $(STAMP) browser ## everything in `make test` plus the exhaustive sweeps (run before resolving)
	@mkdir -p "$(IPYTHONDIR)" "$(JUPYTER_CONFIG_DIR)" "$(JUPYTER_DATA_DIR)" "$(JUPYTER_RUNTIME_DIR)"
	$(ACTIVATE) $(PY) -m pytest --durations=15 -m "full or not full" $(PYTEST_ARGS)

# Playwright drives Debian's Chromium (no browser download is possible here, so never
# `playwright install`). Installed only when missing; without apt-get or root/sudo this
# warns and goes on, except under CI (CI set), where a missing browser is an error.
browser: ## install Chromium for the browser tests with apt-get, if missing
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	fail() { echo "make browser: $$1" >&2; \
	    if [ -n "$$CI" ]; then exit 1; fi; \
	    echo "make browser: continuing; tests that need a browser will not pass" >&2; exit 0; }; \
	command -v apt-get >/dev/null 2>&1 || \
	    fail "$(CHROMIUM) is missing and apt-get is not available: install Chromium yourself"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; \
	elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	else fail "$(CHROMIUM) is missing; installing it needs root or sudo"; fi; \
	echo "make browser: installing Chromium with apt-get (a few minutes, once)"; \
	$$SUDO apt-get update && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium || \
	    fail "apt-get could not install chromium"

clean: ## remove build/ and .venv
	rm -rf build $(VENV) tuwviz.egg-info
