# acmelike: two commands on a fresh machine.
#   make demo   - create .venv (full stack, Python 3.10) and train DQN on CartPole-v1 in one process
#   make test   - create .venv and run the tests
#   make test-latest - create .venv-latest (Python 3.12+, newest JAX, no TensorFlow) and run the pure-JAX tests
#   make test-long - the long tests (pytest -m long): distributed learning runs, kill -9 and resume of a program
#   make bench  - create .venv and .venv-bench (SBX, Python 3.11) and run the benchmarks (BENCH_MODE=quick|full)
#   make notebook - run notebooks/*.ipynb top to bottom in .venv's kernel (make test runs them on a short budget)
#   make docs   - build the documentation site (docs/, mkdocs.yml) into site/ with `mkdocs build --strict`
# The full stack needs Python 3.10 (dm-launchpad/dm-reverb wheels); point PYTHON310 at yours if it lives elsewhere.

PYTHON310 ?= $(shell PYENV_VERSION=3.10.13 pyenv which python3.10 2>/dev/null || command -v python3.10)
PYTHON312 ?= $(shell PYENV_VERSION=3.12.1 pyenv which python3.12 2>/dev/null || command -v python3.12)
# SBX's benchmark venv only (the torch 2.13.0 file on these machines is for Python 3.11).
PYTHON311 ?= $(shell PYENV_VERSION=3.11.7 pyenv which python3.11 2>/dev/null || command -v python3.11)
VENV := .venv
PY := $(VENV)/bin/python
VENV_LATEST := .venv-latest
PY_LATEST := $(VENV_LATEST)/bin/python
RUN_DIR ?= runs/demo-dqn-cartpole
DEMO_STEPS ?= 100000
PYTEST_ARGS ?=
# Test processes (pytest-xdist). The default is one: on 2 cores, TEST_WORKERS=2 ran the full stack's main part in
# 2,678 s (one local_mp test then timed out starting its program) against about 2,100 s in one process, because
# the learning runs, half the CPU time, only share the two cores. On the latest stack XLA runs single-threaded in
# the tests: its thread pool hung two runs there (tests/conftest.py). With workers, learning runs are handed out
# first, and tests that share a trained run share an xdist_group (--dist loadgroup keeps each group on one worker).
# Tests marked `alone` (Ray on a two-node cluster: its port allocation races under load) run first, one at a time;
# the main run comes last so that CI's output ends with its summary (on the latest stack every `alone` test skips:
# they need Reverb).
TEST_WORKERS ?= 0
PYTEST_PARALLEL := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup)

.PHONY: demo test test-long test-latest venv venv-latest clean notebook docs results

$(VENV)/.installed: setup.py constraints.txt
	@test -n "$(PYTHON310)" || { echo "Python 3.10 not found: set PYTHON310=/path/to/python3.10"; exit 1; }
	$(PYTHON310) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[full,test,notebook]'
	touch $@

venv: $(VENV)/.installed

$(VENV_LATEST)/.installed: setup.py constraints-latest.txt
	@test -n "$(PYTHON312)" || { echo "Python 3.12+ not found: set PYTHON312=/path/to/python3.12"; exit 1; }
	$(PYTHON312) -m venv $(VENV_LATEST)
	$(PY_LATEST) -m pip install --quiet --upgrade pip
	$(PY_LATEST) -m pip install --quiet -c constraints-latest.txt -e '.[test]'
	touch $@

venv-latest: $(VENV_LATEST)/.installed

demo: venv
	$(PY) -m launch --agent dqn --env CartPole-v1 --steps $(DEMO_STEPS) --seed 0 --run-dir $(RUN_DIR) --overwrite

# ACMELIKE_FULL_STACK=1: on the full stack a test needing Reverb/Launchpad fails rather than skips.
test: venv
	ACMELIKE_FULL_STACK=1 $(PY) -m pytest -q --durations=5 -m "alone and not long" $(PYTEST_ARGS) tests || test $$? -eq 5
	ACMELIKE_FULL_STACK=1 $(PY) -m pytest -q --durations=25 $(PYTEST_PARALLEL) -m "not long and not alone" $(PYTEST_ARGS) tests

# Long tests (marked `long`, deselected by pytest.ini): distributed learning runs and slow datasets.
test-long: venv
	ACMELIKE_FULL_STACK=1 $(PY) -m pytest -q -m long $(PYTEST_ARGS) tests

# Tests needing Reverb/Launchpad/TensorFlow skip here, each naming the missing package (-rs lists them).
test-latest: venv-latest
	$(PY_LATEST) -m pytest -q -rs -m "alone and not long" $(PYTEST_ARGS) tests || test $$? -eq 5
	$(PY_LATEST) -m pytest -q -rs --durations=25 $(PYTEST_PARALLEL) -m "not long and not alone" $(PYTEST_ARGS) tests

notebook: venv
	$(VENV)/bin/jupyter execute notebooks/*.ipynb

# The documentation site. mkdocstrings reads docstrings by static analysis (griffe): nothing of ours is imported,
# so no Reverb or TensorFlow loads. --strict turns every warning (a broken link, a missing snippet) into an error.
$(VENV)/.docs-installed: $(VENV)/.installed setup.py constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e '.[docs]'
	touch $@

docs: $(VENV)/.docs-installed
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) $(VENV_LATEST) runs site

# Benchmarks (benchmarks/README.md). Quick by default; `make bench BENCH_MODE=full` for the long run.
# .venv-bench holds SBX, the peer library of the time-to-solve comparison: torch 2.13.0 goes in first, alone
# (a CPU build on these machines). If it cannot be built, the benchmarks still run and say why SBX is missing.
BENCH_MODE ?= quick
VENV_BENCH := .venv-bench
PY_BENCH := $(VENV_BENCH)/bin/python

$(VENV_BENCH)/.installed: benchmarks/constraints-sbx.txt
	@test -n "$(PYTHON311)" || { echo "Python 3.11 not found: set PYTHON311=/path/to/python3.11"; exit 1; }
	$(PYTHON311) -m venv $(VENV_BENCH)
	$(PY_BENCH) -m pip install --quiet --upgrade pip
	$(PY_BENCH) -m pip install --quiet -c benchmarks/constraints-sbx.txt torch
	$(PY_BENCH) -m pip install --quiet -c benchmarks/constraints-sbx.txt sbx-rl
	touch $@

.PHONY: bench
bench:
	@# The three venvs at once (pip mostly waits on downloads); SBX's may fail: time_to_solve then says why.
	-$(MAKE) --no-print-directory -j3 venv venv-latest $(VENV_BENCH)/.installed
	$(MAKE) --no-print-directory venv venv-latest
	$(PY) benchmarks/run_all.py --$(BENCH_MODE) --sbx-python $(PY_BENCH) --latest-python $(PY_LATEST)

# Results beside published numbers (docs/results/): every missing (agent, task, seed) cell of SUITE (classic,
# mujoco, minatar; benchmarks/results_runner/suites.py), then docs/results/$(SUITE).md and its PNGs. Resumable:
# finished cells are kept. RESULTS_ARGS adds flags, e.g. RESULTS_ARGS="--agents ppo --seeds 0-1". The extras it
# installs: rliable (the statistics), mujoco (the mujoco suite), gymnax (the minatar suite).
SUITE ?= classic
RESULTS_ARGS ?=
results: venv
	$(PY) -m pip install --quiet -c constraints.txt -e '.[results,mujoco,anakin]'
	$(PY) -m benchmarks.results_runner --suite $(SUITE) $(RESULTS_ARGS)
