# acmelike: two commands on a fresh machine, with Python 3.12+ (today's stack: newest JAX, no TensorFlow).
#   make demo   - create .venv and train DQN on CartPole-v1 in one process (local replay)
#   make test   - create .venv and run every test but the classic stack's
# The classic stack (Python 3.10: dm-launchpad, dm-reverb, TensorFlow 2.8) runs Launchpad programs and
# --replay reverb; its commands come right after in README.md:
#   make venv-launchpad - create .venv-launchpad
#   make demo-launchpad - train DQN on CartPole-v1 as a local_mp program (a process per node, two actors)
#   make test-launchpad - create .venv-launchpad and run the tests marked `classic` (they need its packages)
# And:
#   make test-long - the long tests (pytest -m long), each on its stack
#   make bench  - the benchmarks (BENCH_MODE=quick|full), with .venv, .venv-launchpad and .venv-bench (SBX)
#   make notebook - run notebooks/*.ipynb top to bottom in .venv's kernel (make test runs them on a short budget)
#   make docs   - build the documentation site (docs/, mkdocs.yml) into site/ with `mkdocs build --strict`
# Point PYTHON312 (or PYTHON310) at an interpreter if it lives elsewhere; 3.13 works for PYTHON312 too.

PYTHON312 ?= $(shell PYENV_VERSION=3.12.1 pyenv which python3.12 2>/dev/null || command -v python3.12 || command -v python3.13)
PYTHON310 ?= $(shell PYENV_VERSION=3.10.13 pyenv which python3.10 2>/dev/null || command -v python3.10)
VENV := .venv
PY := $(VENV)/bin/python
VENV_LAUNCHPAD := .venv-launchpad
PY_LAUNCHPAD := $(VENV_LAUNCHPAD)/bin/python
RUN_DIR ?= runs/demo-dqn-cartpole
DEMO_STEPS ?= 100000
PYTEST_ARGS ?=
# Test processes (pytest-xdist). On today's stack XLA runs single-threaded in the tests (tests/conftest.py), so one
# process leaves a core idle: on a 2-core VM (2026-12-01) two workers ran its main part in 1,858 s, where one
# process was 1.35x slower over the first sixth (the learning runs, handed out first) and took 2,956 s on a slower
# day. The classic stack keeps one process: there XLA's thread pool already uses both cores, and TEST_WORKERS=2 ran
# its main part in 2,678 s (one local_mp test then timed out starting its program) against about 2,100 s in one.
# With workers, tests that share a trained run share an xdist_group (--dist loadgroup keeps each group on one
# worker). Tests marked `alone` (Ray on a two-node cluster: its port allocation races under load) run first, one at
# a time; the main run comes last so that CI's output ends with its summary.
TEST_WORKERS ?= 2
TEST_WORKERS_LAUNCHPAD ?= 0
parallel = $(if $(filter 0,$(1)),,-n $(1) --dist loadgroup)

.PHONY: demo test test-long venv venv-launchpad demo-launchpad test-launchpad clean notebook docs results

$(VENV)/.installed: setup.py constraints-latest.txt
	@test -n "$(PYTHON312)" || { echo "Python 3.12+ not found: install it, or set PYTHON312=/path/to/python3.12"; exit 1; }
	$(PYTHON312) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints-latest.txt -e '.[test,notebook]'
	touch $@

venv: $(VENV)/.installed

$(VENV_LAUNCHPAD)/.installed: setup.py constraints.txt
	@test -n "$(PYTHON310)" || { echo "Python 3.10 not found (the classic stack needs it): set PYTHON310=/path/to/python3.10"; exit 1; }
	$(PYTHON310) -m venv $(VENV_LAUNCHPAD)
	$(PY_LAUNCHPAD) -m pip install --quiet --upgrade pip
	$(PY_LAUNCHPAD) -m pip install --quiet -c constraints.txt -e '.[full,test]'
	touch $@

venv-launchpad: $(VENV_LAUNCHPAD)/.installed

demo: venv
	$(PY) -m launch --agent dqn --env CartPole-v1 --steps $(DEMO_STEPS) --seed 0 --run-dir $(RUN_DIR) --overwrite

demo-launchpad: venv-launchpad
	$(PY_LAUNCHPAD) -m launch --agent dqn --env CartPole-v1 --launch local_mp --actors 2 --steps $(DEMO_STEPS) \
		--seed 0 --run-dir runs/demo-launchpad-dqn-cartpole --overwrite

# Every test not marked `classic`; none skips for a package this stack can have (-rs lists any skip and its reason).
test: venv
	$(PY) -m pytest -q -rs --durations=5 -m "alone and not long and not classic" $(PYTEST_ARGS) tests || test $$? -eq 5
	$(PY) -m pytest -q -rs --durations=25 $(call parallel,$(TEST_WORKERS)) -m "not long and not alone and not classic" $(PYTEST_ARGS) tests

# ACMELIKE_CLASSIC_STACK=1: here a test's Reverb/Launchpad/TensorFlow that fails to import is an error, not a skip.
test-launchpad: venv-launchpad
	ACMELIKE_CLASSIC_STACK=1 $(PY_LAUNCHPAD) -m pytest -q -rs --durations=5 -m "alone and not long and classic" $(PYTEST_ARGS) tests || test $$? -eq 5
	ACMELIKE_CLASSIC_STACK=1 $(PY_LAUNCHPAD) -m pytest -q -rs --durations=25 $(call parallel,$(TEST_WORKERS_LAUNCHPAD)) -m "not long and not alone and classic" $(PYTEST_ARGS) tests

# Long tests (marked `long`, deselected by pytest.ini): distributed learning runs and slow datasets.
test-long: venv venv-launchpad
	$(PY) -m pytest -q -rs -m "long and not classic" $(PYTEST_ARGS) tests || test $$? -eq 5
	ACMELIKE_CLASSIC_STACK=1 $(PY_LAUNCHPAD) -m pytest -q -rs -m "long and classic" $(PYTEST_ARGS) tests

notebook: venv
	$(VENV)/bin/jupyter execute notebooks/*.ipynb

# The documentation site. mkdocstrings reads docstrings by static analysis (griffe); docs/hooks.py imports the registry
# (no TensorFlow or Reverb) to generate the agent, config and flag tables. --strict turns every warning (a broken
# link, a missing snippet) into an error. The site navigates opened from disk: open site/index.html.
$(VENV)/.docs-installed: $(VENV)/.installed setup.py constraints-latest.txt
	$(PY) -m pip install --quiet -c constraints-latest.txt -e '.[docs]'
	touch $@

docs: $(VENV)/.docs-installed
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) $(VENV_LAUNCHPAD) runs site

# Benchmarks (benchmarks/README.md). Quick by default; `make bench BENCH_MODE=full` for the long run.
# .venv-bench holds SBX, the peer library of the time-to-solve comparison, on Python 3.12 as ours: torch goes in
# first, alone (benchmarks/constraints-sbx.txt). If it cannot be built, the benchmarks still run and say why SBX is
# missing.
BENCH_MODE ?= quick
VENV_BENCH := .venv-bench
PY_BENCH := $(VENV_BENCH)/bin/python

$(VENV_BENCH)/.installed: benchmarks/constraints-sbx.txt
	@test -n "$(PYTHON312)" || { echo "Python 3.12+ not found: set PYTHON312=/path/to/python3.12"; exit 1; }
	$(PYTHON312) -m venv $(VENV_BENCH)
	$(PY_BENCH) -m pip install --quiet --upgrade pip
	$(PY_BENCH) -m pip install --quiet -c benchmarks/constraints-sbx.txt torch
	$(PY_BENCH) -m pip install --quiet -c benchmarks/constraints-sbx.txt sbx-rl
	touch $@

.PHONY: bench
bench:
	@# The three venvs at once (pip mostly waits on downloads); SBX's may fail: time_to_solve then says why.
	-$(MAKE) --no-print-directory -j3 venv venv-launchpad $(VENV_BENCH)/.installed
	$(MAKE) --no-print-directory venv venv-launchpad
	$(PY) benchmarks/run_all.py --$(BENCH_MODE) --sbx-python $(PY_BENCH) --classic-python $(PY_LAUNCHPAD)

# Results beside published numbers (docs/results/): every missing (agent, task, seed) cell of SUITE (classic,
# mujoco, minatar, dmc, jax; benchmarks/results_runner/suites.py), then docs/results/$(SUITE).md and its PNGs.
# Resumable: finished cells are kept. RESULTS_ARGS adds flags, e.g. RESULTS_ARGS="--agents ppo --seeds 0-1". The
# extras it installs: rliable (the statistics), mujoco (the mujoco suite), gymnax (the minatar and jax suites),
# dm-control (dmc), MinAtar (the jax suite's single-process Breakout rows).
SUITE ?= classic
RESULTS_ARGS ?=
results: venv
	$(PY) -m pip install --quiet -c constraints-latest.txt -e '.[results,mujoco,anakin,dmc,minatar]'
	$(PY) -m benchmarks.results_runner --suite $(SUITE) $(RESULTS_ARGS)
