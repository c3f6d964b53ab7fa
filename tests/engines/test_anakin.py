"""Anakin: the gymnax adapter's step semantics, the Step stream's rows, n-step transitions, and PPO/DQN learning
fully jitted (several seeds vmapped in one call), with the summary and files of the other runners."""

import json
import os
import signal

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from program_launcher import Launcher, last_json_line
from stack import require
from tensorboard_events import read_scalars

require("gymnax")

from acmelike.actors import categorical_policy_core  # noqa: E402
from acmelike.anakin import StepRecord, StepStream, make_gymnax_environment, n_step_transitions  # noqa: E402
from acmelike.checkpointing import latest_checkpoint  # noqa: E402
from agents.dqn import DQNConfig  # noqa: E402
from agents.ppo import PPOConfig  # noqa: E402
from launch.engines.anakin import AnakinConfig, parse_seeds, run_anakin  # noqa: E402
from launch.registry import anakin_agents  # noqa: E402

CARTPOLE = "gymnax/CartPole-v1"


def test_gymnax_step_tells_truncation_from_termination():
    environment = make_gymnax_environment(CARTPOLE)
    state, _ = environment.reset(jax.random.PRNGKey(0))
    # One step before the 500-step limit, pole upright: the step is last, but only truncated.
    _, timestep = environment.step(jax.random.PRNGKey(1), state.replace(time=499), 0)
    assert bool(timestep.last) and float(timestep.discount) == 1.0
    # The pole past its threshold: terminated.
    _, timestep = environment.step(jax.random.PRNGKey(1), state.replace(theta=jnp.asarray(0.5)), 0)
    assert bool(timestep.last) and float(timestep.discount) == 0.0
    # The observation is the one after the step, not a reset one.
    np.testing.assert_allclose(timestep.observation[2], 0.5, atol=0.05)


def test_environment_names_are_checked():
    with pytest.raises(ValueError, match="gymnax/CartPole-v1"):
        make_gymnax_environment("gymnax/NoSuchEnv-v0")
    with pytest.raises(ValueError, match="gymnax/<id>"):
        AnakinConfig(agent="ppo", environment="CartPole-v1", max_num_actor_steps=10)
    with pytest.raises(ValueError, match=", ".join(anakin_agents())):
        AnakinConfig(agent="nope", environment=CARTPOLE, max_num_actor_steps=10)


def test_step_stream_rows_are_a_continue_sequence_adders_rows():
    """Per episode of n actions: n rows with start on the first, then one padding row (last observation,
    zeros, not real); the next row starts the next episode; the real rows' rewards sum to the episode return."""
    environment = make_gymnax_environment(CARTPOLE)
    policy = categorical_policy_core(lambda params, observations: jnp.zeros(observations.shape[:1] + (2,)))
    stream = StepStream(environment, policy)
    state = stream.init(jax.random.PRNGKey(0), 2)
    _, rows, outputs = jax.jit(lambda s, k: stream.unroll(None, s, k, 200))(state, jax.random.PRNGKey(1))
    for env in range(2):
        starts = np.flatnonzero(np.asarray(rows.start_of_episode[env]))
        real = np.asarray(outputs.real[:, env])
        returns = np.asarray(outputs.episode_return[:, env])
        assert starts[0] == 0 and len(starts) >= 3
        for begin, end in zip(starts[:-1], starts[1:]):
            padding = end - 1
            assert not real[padding] and real[begin:padding].all()
            assert float(rows.reward[env, padding]) == 0.0 and int(rows.action[env, padding]) == 0
            assert float(rows.discount[env, padding - 1]) == 0.0  # CartPole episodes this short terminate
            assert float(rows.extras["log_prob"][env, padding]) == 0.0
            assert returns[padding - 1] == pytest.approx(float(rows.reward[env, begin:padding].sum()))
            assert np.isnan(np.delete(returns[begin:end], padding - 1 - begin)).all()


def test_n_step_transitions_stop_at_episode_ends():
    def records(discounts, lasts):
        return StepRecord(
            observation=jnp.arange(3.0)[None, :, None],
            action=jnp.array([[5, 6, 7]]),
            reward=jnp.array([[1.0, 2.0, 4.0]]),
            discount=jnp.array([discounts]),
            last=jnp.array([lasts]),
            next_observation=(10 + jnp.arange(3.0))[None, :, None],
        )

    def check(transition, reward, discount, next_observation):
        assert float(transition.reward[0]) == pytest.approx(reward)
        assert float(transition.discount[0]) == pytest.approx(discount)
        assert float(transition.next_observation[0, 0]) == next_observation
        assert float(transition.observation[0, 0]) == 0.0 and int(transition.action[0]) == 5

    gamma = 0.5
    check(n_step_transitions(records([1.0, 1.0, 1.0], [False] * 3), gamma), 1 + 0.5 * 2 + 0.25 * 4, 0.125, 12.0)
    check(n_step_transitions(records([1.0, 0.0, 1.0], [False, True, False]), gamma), 2.0, 0.0, 11.0)  # terminated
    check(n_step_transitions(records([1.0, 1.0, 1.0], [False, True, False]), gamma), 2.0, 0.25, 11.0)  # truncated


def test_parse_seeds():
    assert parse_seeds("3") == (3,)
    assert parse_seeds("0-3,8") == (0, 1, 2, 3, 8)
    for bad in ("3-1", "a", "1,1"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)


@pytest.fixture(scope="module")
def ppo_two_seeds(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp("anakin_ppo"))
    summary = run_anakin(
        AnakinConfig(
            agent="ppo",
            environment=CARTPOLE,
            max_num_actor_steps=500_000,
            seeds=(0, 1),
            agent_config=PPOConfig(),
            run_dir=run_dir,
            stop_at_average_return=400.0,
            iterations_per_call=16,
            progress_period_s=0,
        )
    )
    return summary, run_dir


def test_ppo_learns_cartpole_on_every_vmapped_seed(ppo_two_seeds):
    summary, _ = ppo_two_seeds
    assert [s["seed"] for s in summary["seeds"]] == [0, 1]
    for seed_summary in summary["seeds"]:
        assert seed_summary["average_return_last_20"] >= 400.0, seed_summary
        assert seed_summary["env_steps"] <= 500_000
    # The seeds ran different episodes: per-seed results, not one result repeated.
    assert summary["seeds"][0]["episodes"] != summary["seeds"][1]["episodes"]


def test_anakin_writes_the_runners_summary_and_learning_curve(ppo_two_seeds):
    summary, run_dir = ppo_two_seeds
    with open(os.path.join(run_dir, "summary.json")) as f:
        assert json.load(f) == json.loads(json.dumps(summary))  # tuples come back as lists
    for seed in (0, 1):
        directory = os.path.join(run_dir, f"seed_{seed}")
        with open(os.path.join(directory, "summary.json")) as f:
            seed_summary = json.load(f)
        for key in ("agent", "env", "env_steps", "wall_seconds", "average_return_last_20", "threshold",
                    "steps_to_threshold", "steps_per_second", "learner_steps", "episodes", "seed", "config", "launch",
                    "compile_seconds", "device"):
            assert key in seed_summary, key
        assert seed_summary["threshold"] == 475.0  # gymnasium's CartPole-v1 reward_threshold
        assert seed_summary["agent"] == "ppo" and seed_summary["env"] == CARTPOLE and seed_summary["seed"] == seed
        assert os.path.getsize(os.path.join(directory, "learning_curve.png")) > 0
        assert os.path.getsize(os.path.join(directory, "actor.csv")) > 0


def test_dqn_learns_cartpole():
    summary = run_anakin(
        AnakinConfig(
            agent="dqn",
            environment=CARTPOLE,
            max_num_actor_steps=60_000,
            agent_config=DQNConfig(hidden_sizes=(64, 64), epsilon_decay_steps=2_500),
            stop_at_average_return=DQN_THRESHOLD,
            iterations_per_call=128,
            progress_period_s=0,
        )
    )
    assert summary["average_return_last_20"] >= DQN_THRESHOLD, summary


DQN_THRESHOLD = 150.0


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--env", "CartPole-v1", "--launch", "anakin"], "gymnax/<id>"),
        (["--env", CARTPOLE, "--launch", "anakin", "--eval-every", "1000"], "--eval-every"),
        (["--env", CARTPOLE, "--launch", "anakin", "--seeds", "2-1"], "--seeds"),
        (["--env", CARTPOLE, "--launch", "anakin", "--config", "unroll_length=0"], "unroll_length"),
        (["--env", "CartPole-v1", "--seeds", "0-3"], "--launch anakin"),
    ],
)
def test_command_line_rejects_what_anakin_cannot_run(arguments, message, capsys):
    from launch.cli.train import main

    with pytest.raises(SystemExit):
        main(["--agent", "ppo", "--steps", "10"] + arguments)
    assert message in capsys.readouterr().err


def test_ctrl_c_ends_an_anakin_run_cleanly_with_an_interrupted_summary(tmp_path):
    """SIGINT to the command once its jitted loop runs, as a terminal's Ctrl-C sends it: the run stops after the
    call in flight, keeps a checkpoint, writes its summaries marked interrupted with the signal's name, and exits
    130. A subprocess: the test is about the process (its signal and exit code), and a run that never stops fails
    here at its deadline, with its stacks, instead of holding up the suite."""
    run_dir = tmp_path / "run"
    actor_log = run_dir / "seed_0" / "actor.csv"
    launcher = Launcher("--launch", "anakin", "--agent", "ppo", "--env", CARTPOLE, "--seeds", "0,1",
                        "--steps", 5_000_000, "--progress-seconds", 60, run_dir=run_dir, command_line=True,
                        own_process_group=True, separate_stderr=True)
    # The loop has started once the first episodes are logged (compiling can take a minute on a loaded machine).
    launcher.wait_until(lambda: actor_log.exists() and actor_log.stat().st_size > 200, timeout=300,
                        what="seed 0's first episodes in actor.csv")
    launcher.signal_group(signal.SIGINT)
    assert launcher.wait(timeout=120) == 130, launcher.errors[-3000:]
    assert "Traceback" not in launcher.errors
    summary = last_json_line(launcher.output)
    assert summary["interrupted"] is True and summary["signal"] == "SIGINT", summary
    assert all(s["interrupted"] and s["env_steps"] < 5_000_000 for s in summary["seeds"])
    assert json.loads((run_dir / "summary.json").read_text())["interrupted"] is True
    assert (run_dir / "seed_1" / "learning_curve.png").exists()
    assert latest_checkpoint(str(run_dir / "checkpoints")) is not None  # `--resume` continues from here
    assert launcher.left_behind() == []


def test_a_killed_run_resumes_from_its_checkpoint_to_the_uninterrupted_result(tmp_path, monkeypatch):
    """Checkpoints after every call; the process dies in its fourth call, and the checkpoint of the third is lost
    with it (killed between the logs and the save). The resumed run cuts the logs back to the second checkpoint and
    computes exactly what the uninterrupted run did: same returns, same CSV rows, same TensorBoard curves."""
    import dataclasses
    import shutil

    from acmelike.checkpointing import CheckpointError, list_checkpoints
    from launch.engines import anakin

    def config(run_dir, **changes):
        return AnakinConfig(agent="dqn", environment=CARTPOLE, max_num_actor_steps=5 * 8 * 32, seeds=(0, 1),
                            agent_config=DQNConfig(hidden_sizes=(32,), min_replay_size=100), run_dir=str(run_dir),
                            iterations_per_call=8, progress_period_s=0, tensorboard=True, **changes)

    uninterrupted = run_anakin(config(tmp_path / "whole"))

    compile_programs = anakin.compile_programs

    def dies_in_the_fourth_call(*args):
        (init, chunk), calls = compile_programs(*args), []

        def call(*chunk_args):
            calls.append(None)
            if len(calls) == 4:
                raise RuntimeError("killed")
            return chunk(*chunk_args)

        return init, call

    monkeypatch.setattr(anakin, "compile_programs", dies_in_the_fourth_call)
    run_dir = tmp_path / "cut"
    with pytest.raises(RuntimeError, match="killed"):
        run_anakin(config(run_dir, checkpoint_every_minutes=1e-9))
    monkeypatch.setattr(anakin, "compile_programs", compile_programs)
    checkpoints = list_checkpoints(str(run_dir / "checkpoints"))
    assert len(checkpoints) == 2  # max_to_keep: after the second and the third call
    shutil.rmtree(checkpoints[-1])

    actor_log = (run_dir / "seed_0" / "actor.csv").read_text()
    with pytest.raises(CheckpointError, match="seeds"):  # another run's checkpoint: refused, nothing touched
        run_anakin(dataclasses.replace(config(run_dir), seeds=(0, 2), resume=True))
    assert (run_dir / "seed_0" / "actor.csv").read_text() == actor_log

    resumed = run_anakin(anakin.read_anakin_config(str(run_dir)))
    for whole, cut in zip(uninterrupted["seeds"], resumed["seeds"]):
        for key in ("env_steps", "episodes", "learner_steps", "average_return_last_20"):
            assert whole[key] == cut[key], key
    for seed in ("seed_0", "seed_1"):
        for log in ("actor.csv", "learner.csv"):
            assert (run_dir / seed / log).read_text() == (tmp_path / "whole" / seed / log).read_text(), log
        for label in ("actor", "learner"):  # the killed run's third call is in its events; the resumed run hides it
            events = run_dir / seed / "tensorboard" / label
            assert read_scalars(str(events)) == read_scalars(str(tmp_path / "whole" / seed / "tensorboard" / label))
    assert read_scalars(str(run_dir / "seed_0" / "tensorboard" / "actor"), purge=False) != read_scalars(
        str(tmp_path / "whole" / "seed_0" / "tensorboard" / "actor"), purge=False)  # there was something to hide


def test_resuming_a_run_without_a_checkpoint_says_so(tmp_path):
    from acmelike.checkpointing import CheckpointError

    config = AnakinConfig(agent="ppo", environment=CARTPOLE, max_num_actor_steps=100, run_dir=str(tmp_path), resume=True)
    with pytest.raises(CheckpointError, match="no complete Anakin checkpoint"):
        run_anakin(config)
    (tmp_path / "summary.json").write_text(json.dumps({"interrupted": True}))  # stopped before its first checkpoint
    with pytest.raises(CheckpointError, match="no complete Anakin checkpoint"):
        run_anakin(config)
    (tmp_path / "summary.json").write_text(json.dumps({"interrupted": False}))  # a normal end keeps no checkpoint
    with pytest.raises(CheckpointError, match="the run finished .* larger --steps"):
        run_anakin(config)
