"""Offline data and agents: Minari datasets as ReplaySample batches, recording a policy, BC and discrete CQL."""

import json
import os

import numpy as np
import pytest
from stack import DQN_EXPERT_GROUP, require

require("minari")

from acmelike.offline import DatasetSpaceError, MinariIterator, check_dataset_fits  # noqa: E402
from acmelike.types import ReplaySample, SampleInfo, Transition  # noqa: E402
from agents.cql.learning import conservative_penalty  # noqa: E402


@pytest.fixture()
def datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    return tmp_path / "minari"


def test_iterator_yields_replay_samples_of_one_step_transitions(datasets):
    from launch.cli.record import record

    result = record(dataset_id="cartpole/random-v0", episodes=5, environment="CartPole-v1", seed=3)
    assert result["episodes"] == 5 and str(datasets) in result["path"]
    iterator = MinariIterator("cartpole/random-v0", batch_size=32, discount=0.9, seed=0)
    assert iterator.size == result["steps"] and iterator.episodes == 5
    sample = next(iterator)
    assert isinstance(sample, ReplaySample) and isinstance(sample.info, SampleInfo)
    assert isinstance(sample.data, Transition)
    data = sample.data
    assert data.observation.shape == data.next_observation.shape == (32, 4)
    assert data.observation.dtype == np.float32 and data.action.dtype == np.int32 and data.action.shape == (32,)
    assert sample.info.key.dtype == np.uint64 and np.all(sample.info.table_size == iterator.size)
    np.testing.assert_allclose(sample.info.probability, 1.0 / iterator.size)
    # Every random CartPole episode ends in a termination: exactly one transition per episode has discount 0.
    discounts = iterator.transitions.discount
    assert np.sum(discounts == 0.0) == 5 and np.all(discounts[discounts > 0] == np.float32(0.9))
    # Consecutive transitions chain: next_observation of one is the observation of the next (same episode).
    same_episode = discounts[:-1] > 0
    np.testing.assert_array_equal(iterator.transitions.next_observation[:-1][same_episode],
                                  iterator.transitions.observation[1:][same_episode])


def test_a_dataset_of_another_environment_is_refused_by_name(datasets):
    from launch.experiments.parts import read_environment_spec
    from launch.cli.record import record
    from launch.experiments.make import make_experiment_config

    record(dataset_id="acrobot/random-v0", episodes=1, environment="Acrobot-v1")
    spec = read_environment_spec(make_experiment_config(agent="dqn", environment="CartPole-v1",
                                                        max_num_actor_steps=1))
    with pytest.raises(DatasetSpaceError, match="'acrobot/random-v0'.*does not fit the environment: observations"):
        check_dataset_fits("acrobot/random-v0", spec)


def test_a_missing_dataset_names_where_it_was_looked_for(datasets):
    with pytest.raises(FileNotFoundError, match=f"No local Minari dataset 'cartpole/none-v0' at {datasets}"):
        MinariIterator("cartpole/none-v0", batch_size=4, discount=0.99)


def test_conservative_penalty_is_logsumexp_minus_the_data_action():
    q = np.array([[1.0, 2.0], [0.0, 0.0]], np.float32)
    actions = np.array([1, 0])
    expected = np.mean([np.log(np.exp(1) + np.exp(2)) - 2.0, np.log(2.0)])
    np.testing.assert_allclose(conservative_penalty(q, actions), expected, rtol=1e-6)
    # Zero only when all the mass is on the data's action, never negative.
    assert float(conservative_penalty(np.array([[100.0, 0.0]]), np.array([0]))) == pytest.approx(0.0, abs=1e-6)


# Learning from recorded data: an expert DQN snapshot, its episodes and random ones.

@pytest.fixture(scope="module")
def recorded(tmp_path_factory, dqn_cartpole_expert):
    from tests.stack import require

    import minari

    from launch.cli.record import record

    root = tmp_path_factory.mktemp("offline")
    previous = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root / "minari")
    try:
        run_dir, summary = dqn_cartpole_expert
        assert summary["average_return_last_20"] >= 490.0, summary
        expert = record(dataset_id="cartpole/expert-v0", episodes=10, run_dir=run_dir, seed=1)
        record(dataset_id="cartpole/random-v0", episodes=200, environment="CartPole-v1", seed=2)
        minari.combine_datasets(
            [minari.load_dataset("cartpole/expert-v0"), minari.load_dataset("cartpole/random-v0")],
            "cartpole/mixed-v0",
        )
        yield {"expert_return": expert["mean_return"], "root": root}
    finally:
        if previous is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous


def _train(agent: str, dataset: str, root, steps: int, stop_at: float = 400.0) -> dict:
    from launch.engines.offline import run_offline
    from launch.experiments.make import make_offline_experiment_config

    config = make_offline_experiment_config(
        agent=agent, dataset=dataset, environment="CartPole-v1", max_num_learner_steps=steps, seed=0,
        run_dir=str(root / f"{agent}-{dataset.replace('/', '-')}"), evaluation_every=100,
        stop_at_average_return=stop_at,
    )
    summary = run_offline(config)
    print(json.dumps({k: summary[k] for k in ("agent", "dataset", "learner_steps", "evaluations")}))
    return summary


@DQN_EXPERT_GROUP
def test_bc_clones_an_expert_dataset(recorded):
    assert recorded["expert_return"] >= 450.0  # the greedy snapshot of a DQN that averaged 490 in training
    summary = _train("bc", "cartpole/expert-v0", recorded["root"], steps=2000)
    assert summary["average_evaluation_return"] >= 400.0


@DQN_EXPERT_GROUP
def test_cql_learns_from_mixed_expert_and_random_data(recorded):
    summary = _train("cql", "cartpole/mixed-v0", recorded["root"], steps=3000)
    assert summary["average_evaluation_return"] >= 400.0

