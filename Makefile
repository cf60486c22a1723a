# tuwviz: set-up, JupyterLab and tests in one place.
#
#   make lab     create .venv, install everything, build the kernels, start JupyterLab
#   make test       the same set-up, then the test suite (p and roots sampled; CI runs this)
#   make test-full  the same, plus the exhaustive sweeps (every p up to 17, every root)
#
# Everything lands in $(VENV) and build/; nothing is installed system-wide except
# Chromium for the browser tests (`make browser`) and SimGrid for the simulated runs
# (`make simgrid`), via apt-get.

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
.PHONY: help setup kernels lab test test-full browser simgrid slurm clean

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

test: $(STAMP) browser simgrid ## set up, then run the test suite, p and roots sampled (PYTEST_ARGS=... to narrow)
	@mkdir -p "$(IPYTHONDIR)" "$(JUPYTER_CONFIG_DIR)" "$(JUPYTER_DATA_DIR)" "$(JUPYTER_RUNTIME_DIR)"
	$(ACTIVATE) $(PY) -m pytest --durations=15 --timeout=600 $(PYTEST_ARGS)

test-full: $(STAMP) browser simgrid slurm ## everything in `make test` plus the exhaustive sweeps (run before resolving)
	@mkdir -p "$(IPYTHONDIR)" "$(JUPYTER_CONFIG_DIR)" "$(JUPYTER_DATA_DIR)" "$(JUPYTER_RUNTIME_DIR)"
	$(ACTIVATE) $(PY) -m pytest --durations=15 -m "full or not full" $(PYTEST_ARGS)

# System packages the tests need, installed with apt-get only when missing.  Without
# apt-get or root/sudo this warns and goes on, except under CI (CI set), where a missing
# package is an error.  $(call apt_install,PRESENT-TEST,PACKAGE,WHAT)
define apt_install
	@if $(1); then exit 0; fi; \
	fail() { echo "make: $$1" >&2; \
	    if [ -n "$$CI" ]; then exit 1; fi; \
	    echo "make: continuing; tests that need $(3) will not pass" >&2; exit 0; }; \
	command -v apt-get >/dev/null 2>&1 || \
	    fail "$(3) is missing and apt-get is not available: install $(2) yourself"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; \
	elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	else fail "$(3) is missing; installing $(2) needs root or sudo"; fi; \
	echo "make: installing $(2) with apt-get for $(3) (a few minutes, once)"; \
	$$SUDO apt-get update && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y $(2) || \
	    fail "apt-get could not install $(2)"
endef

# Playwright drives Debian's Chromium (no browser download is possible here, so never
# `playwright install`).
browser: ## install Chromium for the browser tests with apt-get, if missing
	$(call apt_install,[ -x "$(CHROMIUM)" ],chromium,a browser)

# SimGrid's SMPI (smpicc, smpirun) runs the kernels on simulated platforms (--backend smpi).
simgrid: ## install SimGrid (libsimgrid-dev) for the simulated runs with apt-get, if missing
	$(call apt_install,command -v smpirun >/dev/null 2>&1,libsimgrid-dev,SimGrid SMPI)

# SLURM (munge, slurmctld, slurmd, the clients): the full tier starts a real one on this
# machine (tests/support/slurm.py) to run the batch commands under srun.
slurm: ## install SLURM and munge for the SLURM tests with apt-get, if missing
	$(call apt_install,command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v srun >/dev/null 2>&1 && command -v munged >/dev/null 2>&1,munge slurmctld slurmd slurm-client,SLURM)

clean: ## remove build/ and .venv
	rm -rf build $(VENV) tuwviz.egg-info
