"""The registry as data: every registered agent gets smoke tests; configs from the command line; summaries."""

import csv
import dataclasses
import json
import math
import subprocess
import sys

import jax
import numpy as np
import pytest
from fakes import fake_environment_factory, fake_multiagent_environment, random_transition_batches, smoke_overrides
from program_launcher import Launcher, line_after
from run_helpers import REPO, command_line, environment
from stack import long_test, require

from launch.experiments.make import make_agent_config, make_experiment_config
from launch.registry import AGENTS, agent_definition, anakin_agents, offline_agents, online_agents

SMOKE_STEPS = 200


def _jax_environment(name: str) -> str:
    """The JAX environment an agent's Anakin form is smoke-tested on (skips where jaxmarl is missing)."""
    if not agent_definition(name).multiagent:
        return "gymnax/Pendulum-v1" if agent_definition(name).action_space == "continuous" else "gymnax/CartPole-v1"
    require("jaxmarl")
    return "jaxmarl/MPE_simple_spread_v3"


def _fake_environment_factory(definition):
    """The fake environment an agent's smoke tests run on: multi-agent agents get three agents (leaving early)."""
    if definition.multiagent:
        return fake_multiagent_environment
    return fake_environment_factory(definition.action_space)


def _smoke_config(name, run_dir, num_envs=1):
    definition = agent_definition(name)
    return make_experiment_config(
        agent=name, environment="fake", max_num_actor_steps=SMOKE_STEPS * num_envs, seed=0, run_dir=str(run_dir),
        environment_factory=_fake_environment_factory(definition),
        config_overrides=smoke_overrides(name), progress_period_s=60.0, num_envs=num_envs,
    )


# Every agent acts batched here (--num-envs 4: four fake environments stepped together, one policy call), except
# multi-agent agents, which act for several agents in one environment per actor and refuse --num-envs above 1
# (tests/agents/test_multiagent.py), on the default (local) replay. Unbatched, every agent acts on Reverb as a
# local_mt program (below) and on the local replay in the reproducibility test.
@pytest.mark.parametrize("name", online_agents())
def test_every_registered_agent_trains_single_process_on_a_fake_environment(name, tmp_path):
    from launch import run_single_process

    num_envs = 1 if agent_definition(name).multiagent else 4
    summary = run_single_process(_smoke_config(name, tmp_path, num_envs))
    assert summary["agent"] == name and summary["env_steps"] >= SMOKE_STEPS * num_envs
    assert summary["learner_steps"] > 0, f"{name}'s learner never stepped within {SMOKE_STEPS} steps: {summary}"
    written = json.loads((tmp_path / "config.json").read_text())
    assert written["num_envs"] == num_envs and written["agent_config"] == json.loads(json.dumps(summary["config"]))


# TD3, D4PG and MPO are wired into a distributed program exactly as SAC is (the off-policy continuous path), so
# they run as local_mt programs in the long tests only: each run costs a launcher start-up (35-50 s on a loaded
# machine). PPO runs as a local_mt program in tests/engines/test_distributed.py (the same config both ways).
RUN_ELSEWHERE_IN_CI = {"td3", "d4pg", "mpo", "ppo"}


# The program script builds single-agent fakes; multi-agent agents run as programs in tests/agents/test_multiagent.py.
@pytest.mark.classic
@pytest.mark.parametrize("name", [
    pytest.param(name, marks=long_test) if name in RUN_ELSEWHERE_IN_CI else name for name in online_agents()
    if not agent_definition(name).multiagent
])
def test_every_registered_agent_runs_as_a_local_mt_program(name, tmp_path):
    require("launchpad")
    launcher = Launcher("smoke", "--agent", name, "--launch", "local_mt", "--actors", 2, "--steps", SMOKE_STEPS,
                        run_dir=tmp_path)
    assert launcher.wait(timeout=180) == 0, launcher.output[-5000:]
    summary = json.loads(line_after(launcher.output, "DISTRIBUTED "))
    assert summary["env_steps"] >= SMOKE_STEPS and summary["launch"] == "local_mt"
    assert launcher.left_behind() == []


def _anakin_smoke_run(name, run_dir) -> dict:
    """The agent's own `anakin.py` form, found through its registry entry, under the smoke config: seeds 3 and 4
    vmapped in one call, each writing its files under `run_dir/seed_<n>`."""
    from launch.engines.anakin import AnakinConfig, run_anakin

    return run_anakin(AnakinConfig(
        agent=name, environment=_jax_environment(name), max_num_actor_steps=SMOKE_STEPS * 4, seeds=(3, 4),
        agent_config=make_agent_config(name, smoke_overrides(name)), run_dir=str(run_dir), progress_period_s=60.0,
        iterations_per_call=8,
    ))


_ANAKIN_SMOKE_RUNS = {}


@pytest.fixture
def anakin_smoke_run(tmp_path_factory):
    """(run directory, summary) of `_anakin_smoke_run(name)`, run once per agent and test process: the smoke test
    and the reproducibility test read the same run (each run compiles the agent's whole loop, 15-45 s)."""
    def run(name):
        if name not in _ANAKIN_SMOKE_RUNS:
            run_dir = tmp_path_factory.mktemp(f"anakin-{name}")
            _ANAKIN_SMOKE_RUNS[name] = run_dir, _anakin_smoke_run(name, run_dir)
        return _ANAKIN_SMOKE_RUNS[name]
    return run


@pytest.mark.parametrize("name", anakin_agents())
def test_every_anakin_form_trains_fully_jitted_on_a_jax_environment(name, anakin_smoke_run):
    """It collects steps, updates with finite losses, and writes the runner's summary for each seed."""
    run_dir, summary = anakin_smoke_run(name)
    assert [seed_summary["seed"] for seed_summary in summary["seeds"]] == [3, 4], summary
    for seed_summary in summary["seeds"]:
        assert seed_summary["agent"] == name and seed_summary["env_steps"] >= SMOKE_STEPS, seed_summary
        assert seed_summary["learner_steps"] > 0, f"{name}'s Anakin form never updated: {seed_summary}"
        # A multi-agent form's summary carries each agent's average return beside the team's, their sum.
        window = seed_summary["return_window"]
        agents = [value for key, value in seed_summary.items() if key.startswith(f"average_return_last_{window}/")]
        assert len(agents) == (3 if agent_definition(name).multiagent else 0), seed_summary
        if agents:
            assert sum(agents) == pytest.approx(seed_summary[f"average_return_last_{window}"], abs=0.05), seed_summary
        with open(run_dir / f"seed_{seed_summary['seed']}" / "learner.csv") as f:
            rows = list(csv.DictReader(f))
        losses = [float(row[key]) for row in rows for key in _loss_keys(name)]
        assert losses and all(math.isfinite(loss) for loss in losses), losses


def _loss_keys(name):
    """The losses the agent's learning step reports (learner.csv's columns that must stay finite)."""
    from launch.engines.anakin import make_environment

    definition = agent_definition(name)
    config = make_agent_config(name, smoke_overrides(name))
    return definition.anakin(make_environment(_jax_environment(name)), config).loss_keys


# Reproducibility: the same seed gives the same run, bit for bit. Columns that time the run are left out.
_TIMING_COLUMNS = ("steps_per_second", "seconds", "walltime", "time")


def _logged(run_dir, label) -> dict:
    """{column: values} of `<run_dir>/<label>.csv`, timing columns left out."""
    with open(run_dir / f"{label}.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows, f"{run_dir}/{label}.csv has no rows"
    return {column: [row[column] for row in rows] for column in rows[0]
            if not any(part in column for part in _TIMING_COLUMNS)}


def _final_parameters(run_dir) -> list:
    from launch.lifecycle.snapshots import load_snapshot

    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(load_snapshot(str(run_dir)).params)]


def _assert_identical(first: dict, second: dict) -> None:
    assert first.keys() == second.keys()
    for name in first:
        if name == "parameters":
            assert all(np.array_equal(a, b) for a, b in zip(first[name], second[name])), "parameters differ"
        else:
            assert first[name] == second[name], f"{name} differs"


def _single_process_run(name, seed, run_dir, steps=3 * SMOKE_STEPS) -> dict:
    from launch import run_single_process

    config = dataclasses.replace(_smoke_config(name, run_dir), seed=seed, max_num_actor_steps=steps)
    summary = run_single_process(config)
    assert summary["learner_steps"] > 0, summary
    return {"actor": _logged(run_dir, "actor"), "learner": _logged(run_dir, "learner"),
            "parameters": _final_parameters(run_dir)}


@pytest.mark.parametrize("name", online_agents())
def test_same_seed_single_process_runs_are_bit_identical(name, tmp_path):
    """Episode returns, every logged loss and the final parameters, for each registered agent, with the default
    replay (no flag); a different seed changes them (so the comparison is not of constants): a shorter run of
    another seed already starts with other episodes and losses than this seed's run."""
    first = _single_process_run(name, 3, tmp_path / "first")
    _assert_identical(first, _single_process_run(name, 3, tmp_path / "again"))
    other = _single_process_run(name, 4, tmp_path / "other", steps=SMOKE_STEPS)

    def head(logged, rows):
        return {column: values[:rows] for column, values in logged.items()}

    episodes = len(other["actor"]["episode_return"])
    learned = len(next(iter(other["learner"].values())))
    assert (head(other["actor"], episodes) != head(first["actor"], episodes)
            or head(other["learner"], learned) != head(first["learner"], learned))


# One interpreter runs every registered online agent in one process (default replay), an offline agent and an Anakin
# one, then names the heavy packages loaded; then it loads the Reverb backend, to show the check sees them.
_NO_TENSORFLOW_CHECK = """
import importlib, json, pathlib, sys
sys.path[:0] = ["tests", "tests/agents"]
import test_registry as registry
from launch import run_single_process
from launch.registry import agent_definition, anakin_agents, offline_agents, online_agents

def heavy():
    return sorted({name.split(".")[0] for name in sys.modules} & {"tensorflow", "reverb"})

root = pathlib.Path(sys.argv[1])
for name in online_agents():
    run_single_process(registry._smoke_config(name, root / name))
registry._offline_run(offline_agents()[0], root / "offline")
anakin = next(name for name in anakin_agents() if not agent_definition(name).multiagent)
registry._anakin_smoke_run(anakin, root / "anakin")
runs = heavy()
try:
    importlib.import_module("acmelike.replay.reverb_tables")
except ImportError:
    backend = None  # the latest stack: no Reverb to load
else:
    backend = heavy()
print(json.dumps({"runs": runs, "backend": backend}))
"""


def test_single_process_offline_and_anakin_runs_import_neither_tensorflow_nor_reverb(tmp_path):
    """A short single-process run of every registered online agent (default replay), an offline run and an Anakin
    run, in one fresh interpreter: neither `tensorflow` nor `reverb` is in sys.modules afterwards."""
    result = subprocess.run([sys.executable, "-c", _NO_TENSORFLOW_CHECK, str(tmp_path)], cwd=REPO, env=environment(),
                            capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-5000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["runs"] == [], f"the runs imported {found['runs']}"
    if found["backend"] is not None:  # the check would have seen them
        assert found["backend"] == ["reverb", "tensorflow"], found


def test_the_registry_tells_online_offline_and_anakin_agents_apart():
    assert set(online_agents()) | {name for name in AGENTS if agent_definition(name).offline} == set(AGENTS)
    assert {"bc", "cql", "cql_continuous"} <= {name for name in AGENTS if agent_definition(name).offline}
    assert {"dqn", "ppo"} <= set(anakin_agents()) and not set(anakin_agents()) - set(online_agents())


def _offline_run(name, run_dir, seed=0) -> dict:
    """The offline agent `name` under its smoke config: 20 learner steps on random batches of the fake
    environment's spaces (drawn from `seed`), evaluated every 10."""
    import functools

    from acmelike.specs import make_environment_spec
    from launch.engines.offline import run_offline
    from launch.experiments.config import OfflineExperimentConfig

    definition = agent_definition(name)
    agent_config = make_agent_config(name, smoke_overrides(name))
    environment_factory = fake_environment_factory(definition.action_space)
    spec = make_environment_spec(environment_factory(0))
    batch = agent_config.batch_size * agent_config.num_sgd_steps_per_step
    config = OfflineExperimentConfig(
        builder=definition.make_builder(agent_config), environment_factory=environment_factory,
        network_factory=functools.partial(definition.make_networks, config=agent_config),
        dataset_factory=functools.partial(random_transition_batches, spec, batch), dataset="random",
        max_num_learner_steps=20, evaluation_every=10, num_evaluation_episodes=1, agent=name,
        environment="fake", run_dir=str(run_dir), progress_period_s=60.0, seed=seed,
    )
    return run_offline(config)


@pytest.mark.parametrize("name", offline_agents())
def test_every_offline_agent_trains_on_a_dataset_and_is_evaluated(name, tmp_path):
    """Each offline agent, from its registry entry and smoke config: learner steps on dataset batches of its
    environment's spaces, evaluation rounds in the environment, a checkpoint and a snapshot."""
    summary = _offline_run(name, tmp_path)
    assert summary["learner_steps"] == 20 and [step for step, _ in summary["evaluations"]] == [10, 20], summary
    assert summary["failures"] == [] and (tmp_path / "snapshots").is_dir(), summary
    with open(tmp_path / "learner.csv") as f:
        assert len(list(csv.DictReader(f))) > 0


@pytest.mark.parametrize("name", offline_agents())
def test_same_seed_offline_runs_are_bit_identical(name, tmp_path):
    def run(seed, run_dir):
        summary = _offline_run(name, run_dir, seed=seed)
        return {"learner": _logged(run_dir, "learner"), "evaluations": summary["evaluations"],
                "parameters": _final_parameters(run_dir)}

    first = run(3, tmp_path / "first")
    _assert_identical(first, run(3, tmp_path / "again"))
    other = run(4, tmp_path / "other")
    assert other["learner"] != first["learner"]
    assert not all(np.array_equal(a, b) for a, b in zip(first["parameters"], other["parameters"]))


@pytest.mark.parametrize("name", anakin_agents())
def test_same_seed_anakin_runs_are_bit_identical(name, anakin_smoke_run, tmp_path):
    """A second call with the same seeds repeats each seed's run bit for bit; the two seeds' runs differ."""
    first_dir, _ = anakin_smoke_run(name)
    _anakin_smoke_run(name, tmp_path)

    def logged(run_dir, seed):
        return {"actor": _logged(run_dir / f"seed_{seed}", "actor"),
                "learner": _logged(run_dir / f"seed_{seed}", "learner")}

    for seed in (3, 4):
        _assert_identical(logged(first_dir, seed), logged(tmp_path, seed))
    assert logged(first_dir, 3)["learner"] != logged(first_dir, 4)["learner"]


def test_every_registered_agent_is_importable_and_named_consistently():
    for name in AGENTS:
        definition = agent_definition(name)
        assert definition.name == name
        make_agent_config(name, smoke_overrides(name))  # the smoke config is a valid config


def test_unknown_agent_lists_the_registry():
    with pytest.raises(ValueError, match=rf"Unknown agent 'dqnn'. Choose one of: {', '.join(sorted(AGENTS))}"):
        agent_definition("dqnn")


# --config overrides.


def test_overrides_are_parsed_to_the_field_types():
    config = make_agent_config("dqn", ["learning_rate=5e-4", "n_step=5", "hidden_sizes=32,16", "samples_per_insert=8"])
    assert config.learning_rate == 5e-4 and config.n_step == 5 and config.hidden_sizes == (32, 16)
    assert isinstance(config.samples_per_insert, float)
    assert make_agent_config("ppo", ["normalize_advantages=false"]).normalize_advantages is False


@pytest.mark.parametrize(
    "assignment, message",
    [
        ("no_such_field=1", r"DQNConfig has no field 'no_such_field'. Valid fields: batch_size, discount"),
        ("n_step=three", r"--config n_step='three': expected int"),
        ("n_step=2.5", r"--config n_step='2.5': expected int"),
        ("n_step=0", r"DQNConfig.n_step = 0; it must be >= 1"),
        ("learning_rate", r"--config expects field=value"),
    ],
)
def test_bad_overrides_name_the_field_and_what_is_allowed(assignment, message):
    with pytest.raises(ValueError, match=message):
        make_agent_config("dqn", [assignment])


def test_bad_override_on_the_command_line_is_a_parser_error():
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--config", "no_such_field=1")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "Valid fields:" in result.stderr and "learning_rate" in result.stderr


def test_command_line_writes_the_resolved_config_and_threshold_fields(tmp_path):
    result = command_line("--agent", "dqn", "--env", "CartPole-v1", "--steps", "300",
                          "--config", "learning_rate=5e-4", "--run-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["threshold"] == 475.0 and "steps_to_threshold" in summary  # CartPole's reward_threshold
    assert "average_return_last_20" in summary and summary["return_window"] == 20
    assert not any("475" in key or "cartpole" in key.lower() for key in summary)
    assert json.loads((tmp_path / "config.json").read_text())["agent_config"]["learning_rate"] == 5e-4
    assert summary["config"]["learning_rate"] == 5e-4


def test_threshold_comes_from_gymnasium_else_the_target_return_else_none():
    assert make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=1).target_return == 475.0
    factory = fake_environment_factory("discrete")
    kwargs = dict(agent="dqn", environment="fake", max_num_actor_steps=1, environment_factory=factory)
    assert make_experiment_config(**kwargs).target_return is None
    assert make_experiment_config(**kwargs, target_return=30.0).target_return == 30.0


def test_an_agent_given_the_wrong_action_space_names_the_agents_that_fit():
    factory = fake_environment_factory("continuous")
    with pytest.raises(ValueError) as error:
        make_experiment_config(agent="dqn", environment="fake", max_num_actor_steps=1, environment_factory=factory)
    message = str(error.value)
    assert "DQN" in message and "BoundedArray" in message and "Agents for continuous actions:" in message
