"""An offline run started from Python (`launch.train` with an OfflineExperimentConfig) records the launch the
command line's --dataset records, "offline", and resumes from Python and from the command line; a run directory
in which launch.train recorded an offline run as "single" (before it recorded "offline") resumes too."""

import json

import pytest

import launch
from launch.cli.train import main
from launch.lifecycle.run_directory import RunOptions, read_run_options, write_run_options
from tests.engines.test_offline_runs import dataset  # noqa: F401 - the recorded Minari dataset (a fixture)

SMALL_BC = ["batch_size=16", "hidden_sizes=16"]


def test_a_python_offline_run_records_launch_offline_and_resumes_by_either_route(dataset, tmp_path, capsys):  # noqa: F811
    run_dir = str(tmp_path / "bc")

    def config(steps):
        return launch.make_offline_experiment_config(
            agent="bc", dataset=dataset, environment="CartPole-v1", max_num_learner_steps=steps, run_dir=run_dir,
            evaluation_every=0, config_overrides=SMALL_BC, progress_period_s=60)

    first = launch.train(config(10))
    assert first["launch"] == "offline" and read_run_options(run_dir).launch == "offline"
    with pytest.raises(ValueError, match="runs offline"):  # an OfflineExperimentConfig runs on no other engine
        launch.train(config(20), resume=True, launch="single")
    online = launch.make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=10,
                                           run_dir=run_dir)
    with pytest.raises(ValueError, match="is an offline run"):  # nor is it resumed as an online run
        launch.train(online, resume=True)
    assert launch.train(config(20), resume=True)["learner_steps"] == 20

    capsys.readouterr()
    assert main(["--resume", run_dir, "--steps", "30"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["learner_steps"] == 30

    write_run_options(run_dir, RunOptions(launch="single"))  # what launch.train wrote before
    assert launch.train(config(40), resume=True)["learner_steps"] == 40
    assert read_run_options(run_dir).launch == "offline"
