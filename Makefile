# acmelike: two commands on a fresh machine.
#   make demo   - create .venv (full stack, Python 3.10) and train DQN on CartPole-v1 in one process
#   make test   - create .venv and run the tests
# The full stack needs Python 3.10 (dm-launchpad/dm-reverb wheels); point PYTHON310 at yours if it lives elsewhere.

PYTHON310 ?= $(shell PYENV_VERSION=3.10.13 pyenv which python3.10 2>/dev/null || command -v python3.10)
VENV := .venv
PY := $(VENV)/bin/python
RUN_DIR ?= runs/demo-dqn-cartpole
DEMO_STEPS ?= 100000
PYTEST_ARGS ?=

.PHONY: demo test venv clean

$(VENV)/.installed: setup.py constraints.txt
	@test -n "$(PYTHON310)" || { echo "Python 3.10 not found: set PYTHON310=/path/to/python3.10"; exit 1; }
	$(PYTHON310) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[full,test]'
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(PY) -m launch --agent dqn --env CartPole-v1 --steps $(DEMO_STEPS) --seed 0 --run-dir $(RUN_DIR)

test: venv
	$(PY) -m pytest -q $(PYTEST_ARGS) tests

clean:
	rm -rf $(VENV) runs
