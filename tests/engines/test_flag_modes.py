"""Every flag of `python -m launch` works, or is refused, in every mode: generated from the types of
`launch.cli.options` (a flag works in a launch whose class has its field).

For each (flag, mode) cell the command line is planned in-process (`launch.cli.train.plan`: parsed, checked and
configured, nothing trained): where the table says the flag works, the plan carries its value into that mode's
config or options; elsewhere the parser exits 2 naming the flag and the mode. A field added to the types without an
example here fails `test_every_flag_of_the_types_has_an_example`.
"""

import contextlib
import io
import os

import pytest
from stack import require

from launch.cli.options import DISTRIBUTED, LAUNCHES, all_flags, launches_of
from launch.cli.train import plan
from launch.engines.anakin import AnakinConfig, write_anakin_config
from launch.experiments.config import OfflineExperimentConfig
from launch.experiments.make import make_experiment_config, make_offline_experiment_config
from launch.lifecycle.run_directory import RunOptions, write_config, write_run_options

DATASET, OTHER_DATASET = "cartpole/random-v0", "cartpole/other-v0"
# Every mode is planned here, also on a stack without its packages (which test_missing_packages.py covers).
pytestmark = pytest.mark.usefixtures("packages_present")


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    """Two small recorded CartPole datasets, under a MINARI_DATASETS_PATH of this module's own."""
    require("minari")
    from launch.cli.record import record

    previous = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(tmp_path_factory.mktemp("minari"))
    try:
        for seed, name in enumerate((DATASET, OTHER_DATASET)):
            record(dataset_id=name, episodes=2, environment="CartPole-v1", seed=seed)
        yield
    finally:
        if previous is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous


def base_arguments(launch, directory):
    """A command line that plans in `mode`, with a run directory (several flags act on one)."""
    run_dir = ["--run-dir", str(directory / f"run-{launch}")]
    if launch == "offline":
        return ["--agent", "bc", "--env", "CartPole-v1", "--dataset", DATASET, *run_dir]
    if launch == "anakin":
        return ["--agent", "ppo", "--env", "gymnax/CartPole-v1", "--launch", "anakin", *run_dir]
    return ["--agent", "dqn", "--env", "CartPole-v1", "--launch", launch, *run_dir]


def saved_run(launch, directory):
    """A run directory to resume, as a run of `mode` leaves it before its first checkpoint."""
    run_dir = str(directory / f"saved-{launch}")
    if launch == "anakin":
        write_anakin_config(AnakinConfig(agent="ppo", environment="gymnax/CartPole-v1", max_num_actor_steps=100,
                                         run_dir=run_dir))
        return run_dir
    if launch == "offline":
        write_config(make_offline_experiment_config(
            agent="bc", dataset=DATASET, environment="CartPole-v1", max_num_learner_steps=100, run_dir=run_dir))
    else:
        write_config(make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100,
                                            run_dir=run_dir))
    write_run_options(run_dir, RunOptions(launch=launch))
    return run_dir


def _read(config, online, offline=None, anakin=None):
    """The attribute of the planned config that holds a setting, by config type."""
    if isinstance(config, AnakinConfig):
        return getattr(config, anakin or online)
    if isinstance(config, OfflineExperimentConfig):
        return getattr(config, offline or online)
    return getattr(config, online)


class Example:
    """How to give a flag (`arguments(mode)`, added to the mode's base command line) and how to see it in the plan
    (`carried(plan, mode)`)."""

    def __init__(self, arguments, carried):
        self.arguments = arguments
        self.carried = carried


AGENT = {"anakin": "dqn", "offline": "cql"}  # another agent than the base command line's, that fits the mode
# Offline: CartPole-v0 has the spaces of the recorded CartPole-v1 data.
ENV = {"anakin": "gymnax/Acrobot-v1", "offline": "CartPole-v0"}

EXAMPLES = {
    "--agent": Example(lambda m: ["--agent", AGENT.get(m, "ppo")],
                       lambda p, m: _read(p.config, "agent", anakin="agent") == AGENT.get(m, "ppo")),
    "--env": Example(lambda m: ["--env", ENV.get(m, "Acrobot-v1")],
                     lambda p, m: _read(p.config, "environment", anakin="environment")
                     == ENV.get(m, "Acrobot-v1")),
    "--steps": Example(lambda m: ["--steps", "1234"],
                       lambda p, m: _read(p.config, "max_num_actor_steps", offline="max_num_learner_steps") == 1234),
    "--seed": Example(lambda m: ["--seed", "7"], lambda p, m: _read(p.config, "seed", anakin="seeds") in (7, (7,))),
    "--run-dir": Example(lambda m: ["--run-dir", "elsewhere"], lambda p, m: p.config.run_dir == "elsewhere"),
    "--overwrite": Example(lambda m: ["--overwrite"], lambda p, m: p.overwrite is True),
    "--config": Example(lambda m: ["--config", "learning_rate=0.005"],
                        lambda p, m: _read(p.config, "agent_config").learning_rate == 0.005),
    "--eval-every": Example(lambda m: ["--eval-every", "77"], lambda p, m: p.config.evaluation_every == 77),
    "--target-return": Example(lambda m: ["--target-return", "123.5"], lambda p, m: p.config.target_return == 123.5),
    "--return-window": Example(lambda m: ["--return-window", "7"], lambda p, m: p.config.return_window == 7),
    "--progress-seconds": Example(lambda m: ["--progress-seconds", "2.5"],
                                  lambda p, m: p.config.progress_period_s == 2.5),
    # A distributed program stops at a target when an evaluation round reaches it: it needs --eval-every too.
    "--stop-at-return": Example(lambda m: ["--stop-at-return", "99"]
                                + (["--eval-every", "10"] if m in DISTRIBUTED else []),
                                lambda p, m: p.config.stop_at_average_return == 99.0),
    "--launch": Example(lambda m: ["--launch", m if m != "offline" else "single"],
                        lambda p, m: p.launch == m and (m == "anakin" or p.options.launch == m)),
    "--actors": Example(lambda m: ["--actors", "3"], lambda p, m: p.options.actors == 3),
    "--ray-address": Example(lambda m: ["--ray-address", "10.0.0.1:6379"],
                             lambda p, m: p.ray_options.address == "10.0.0.1:6379"),
    "--ray-resources": Example(lambda m: ["--ray-resources", "actor=worker"],
                               lambda p, m: set(p.ray_options.resources["actor"]) == {"worker"}),
    "--ray-max-restarts": Example(lambda m: ["--ray-max-restarts", "5"], lambda p, m: p.ray_options.max_restarts == 5),
    # A single-process run starts a server only with --replay reverb (the default local replay starts none).
    "--bind-address": Example(lambda m: ["--bind-address", "0.0.0.0"] + (["--replay", "reverb"] * (m == "single")),
                              lambda p, m: p.options.bind_address == "0.0.0.0"),
    "--num-envs": Example(lambda m: ["--num-envs", "4"], lambda p, m: p.config.num_envs == 4),
    "--action-repeat": Example(lambda m: ["--action-repeat", "4"], lambda p, m: p.config.action_repeat == 4),
    "--inference": Example(lambda m: ["--inference", "central"], lambda p, m: p.config.inference == "central"),
    "--replay": Example(lambda m: ["--replay", "reverb"], lambda p, m: p.config.replay == "reverb"),
    "--seeds": Example(lambda m: ["--seeds", "0-2"], lambda p, m: p.config.seeds == (0, 1, 2)),
    "--checkpoint-every": Example(lambda m: ["--checkpoint-every", "2.5"],
                                  lambda p, m: (p.config if m == "anakin" else p.options).checkpoint_every_minutes
                                  == 2.5),
    "--tensorboard": Example(lambda m: ["--tensorboard"],
                             lambda p, m: (p.config.tensorboard if m == "anakin" else p.options.tensorboard) is True),
    "--resume": None,  # its command line is a run directory alone: see `_cell_arguments`
    "--dataset": Example(lambda m: ["--dataset", OTHER_DATASET],
                         lambda p, m: p.config.dataset == p.config.agent_config.dataset_id == OTHER_DATASET),
    "--list-config": Example(lambda m: ["--list-config"], lambda p, m: "learning_rate" in p.listing),
    "--compilation-cache": Example(lambda m: ["--compilation-cache", "off"], lambda p, m: p.compilation_cache == "off"),
    # The minatar preset's DQN reads images (torso minatar_conv): on CartPole the command line puts the MLP back.
    "--preset": Example(lambda m: ["--preset", "minatar"] + ([] if m == "anakin" else ["--config", "torso=mlp"]),
                        lambda p, m: _read(p.config, "agent_config").learning_rate == (5e-4 if m == "anakin" else 3e-4)
                        and (m == "anakin" or p.config.preset == "minatar")),
}


def _cell_arguments(flag, launch, directory):
    if flag != "--resume":
        return base_arguments(launch, directory) + EXAMPLES[flag].arguments(launch)
    if launch in launches_of("--resume"):
        return ["--resume", saved_run(launch, directory)]  # the run's own mode, from its directory
    return base_arguments(launch, directory) + ["--resume", str(directory / "any")]


def _plan(arguments):
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        try:
            return plan(arguments), errors.getvalue()
        except SystemExit as exit:
            return exit, errors.getvalue()


CELLS = [(flag, launch) for flag in all_flags() for launch in LAUNCHES]


@pytest.mark.filterwarnings("ignore:.*CartPole-v0 is out of date")
@pytest.mark.parametrize("flag, launch", CELLS, ids=[f"{flag}-{launch}" for flag, launch in CELLS])
def test_a_flag_works_where_the_table_says_and_is_refused_elsewhere(flag, launch, tmp_path, request):
    if launch == "offline" or flag == "--dataset":
        request.getfixturevalue("datasets")
    arguments = _cell_arguments(flag, launch, tmp_path)
    result, errors = _plan(arguments)
    if launch in launches_of(flag):
        assert not isinstance(result, SystemExit), f"{arguments} was refused: {errors}"
        assert result.launch == launch
        carried = (lambda p, m: p.options.resume and p.config.run_dir == arguments[1]) if flag == "--resume" \
            else EXAMPLES[flag].carried
        assert carried(result, launch), f"{flag} did not reach the {launch} plan: {result}"
    else:
        assert isinstance(result, SystemExit) and result.code == 2, f"{arguments} was not refused: {result}"
        message = errors.strip().splitlines()[-1]
        assert flag in message and launch in message and "Traceback" not in errors, message


def test_every_flag_of_the_types_has_an_example():
    assert set(all_flags()) == set(EXAMPLES)


def test_a_default_value_is_never_a_refusal(tmp_path):
    # --num-envs defaults to 1 and --inference to local: left out, an Anakin plan does not mind them.
    result, errors = _plan(base_arguments("anakin", tmp_path))
    assert not isinstance(result, SystemExit), errors


def test_an_offline_agent_without_a_dataset_is_told_what_is_missing():
    result, errors = _plan(["--agent", "bc", "--env", "CartPole-v1", "--steps", "10"])
    assert isinstance(result, SystemExit) and result.code == 2
    assert "bc learns offline" in errors and "--dataset" in errors


def test_an_online_agent_with_a_dataset_is_told_it_is_online(datasets):
    result, errors = _plan(["--agent", "dqn", "--env", "CartPole-v1", "--dataset", DATASET])
    assert isinstance(result, SystemExit) and result.code == 2
    assert "dqn learns online" in errors and "drop --dataset" in errors


def test_offline_eval_every_zero_means_no_evaluator(datasets, tmp_path):
    result, _ = _plan(base_arguments("offline", tmp_path) + ["--eval-every", "0"])
    assert result.config.evaluation_every == 0
    result, errors = _plan(base_arguments("offline", tmp_path) + ["--eval-every", "0", "--stop-at-return", "100"])
    assert isinstance(result, SystemExit) and "stop_at_average_return" in errors and "evaluation_every" in errors


def test_list_config_prints_every_field_of_the_agent_config_with_its_default(capsys):
    import dataclasses

    from agents.sac import SACConfig
    from launch.cli.train import main

    assert main(["--agent", "sac", "--list-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for field in dataclasses.fields(SACConfig):
        line = next((line for line in lines if line.split()[:1] == [field.name]), None)
        assert line is not None, f"{field.name} is not listed"
        assert repr(field.default) in line, line


def test_list_config_with_a_preset_shows_the_values_that_preset_sets_for_the_task(capsys):
    from launch.cli.train import main
    from launch.experiments.presets import preset_values

    assert main(["--agent", "d4pg", "--env", "Hopper-v5", "--preset", "mujoco", "--list-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "--preset mujoco" in lines[1]
    values = preset_values("mujoco", "d4pg", "Hopper-v5")
    assert values["v_max"] == 500.0  # the task's own entry, over the agent's
    for field, value in values.items():
        line = next(line for line in lines if line.split()[:1] == [field])
        assert line.split()[3] == repr(value).replace(" ", "") or repr(value) in line, line
    unset = next(line for line in lines if line.split()[:1] == ["tau"])  # D4PG's preset keeps tau's default
    assert unset.split()[2] == "0.005" and unset.split()[3] != "0.005"


def test_a_resumed_run_keeps_its_num_envs_and_inference(tmp_path):
    """--resume needs no flags: what the run was launched with comes back from its config.json."""
    run_dir = str(tmp_path / "run")
    write_config(make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100,
                                        run_dir=run_dir, num_envs=4, inference="central"))
    write_run_options(run_dir, RunOptions(launch="local_mt", actors=2))
    result, errors = _plan(["--resume", run_dir])
    assert result.config.num_envs == 4 and result.config.inference == "central", errors


def test_a_resumed_run_keeps_its_replay_and_refuses_another(tmp_path):
    """A checkpoint holds the replay in its own format: --resume brings the run's replay back, and a --replay that
    contradicts it is a parser error naming both."""
    run_dir = str(tmp_path / "run")
    write_config(make_experiment_config(agent="dqn", environment="CartPole-v1", max_num_actor_steps=100,
                                        run_dir=run_dir, replay="reverb"))
    write_run_options(run_dir, RunOptions(launch="single"))
    result, errors = _plan(["--resume", run_dir])
    assert result.config.replay == "reverb", errors
    result, errors = _plan(["--resume", run_dir, "--replay", "local"])
    assert isinstance(result, SystemExit) and result.code == 2, errors
    assert "--replay" in errors and "'reverb'" in errors, errors


def test_an_anakin_run_directory_is_kept_as_every_launch_keeps_one(tmp_path):
    run_dir = saved_run("anakin", tmp_path)
    assert sorted(os.listdir(run_dir)) == ["config.json", "run_options.json"]
    result, errors = _plan(["--resume", run_dir])
    assert result.launch == "anakin" and result.config.resume and result.config.environment == "gymnax/CartPole-v1", \
        errors


def test_an_anakin_run_directory_of_the_old_format_is_resumed_and_says_so(tmp_path, capsys):
    """Before config.json and run_options.json, an Anakin run kept its settings in anakin.json (`environment` for
    `env`): such a directory is still resumed as it was started, with a line that says what was read."""
    import dataclasses
    import json

    from launch.experiments.make import make_agent_config

    run_dir = tmp_path / "old"
    run_dir.mkdir()
    old = {"agent": "ppo", "environment": "gymnax/CartPole-v1", "max_num_actor_steps": 100, "seeds": [0, 3],
           "threshold": None, "return_window": 20, "stop_at_average_return": None, "iterations_per_call": 64,
           "progress_period_s": 5.0, "tensorboard": False, "checkpoint_every_minutes": 10.0,
           "agent_config": dataclasses.asdict(make_agent_config("ppo", ["learning_rate=0.001"]))}
    (run_dir / "anakin.json").write_text(json.dumps(old))
    result, errors = _plan(["--resume", str(run_dir)])
    assert not isinstance(result, SystemExit), errors
    assert result.config.seeds == (0, 3) and result.config.environment == "gymnax/CartPole-v1"
    assert result.config.agent_config.learning_rate == 0.001 and result.config.resume
    assert "anakin.json" in capsys.readouterr().out


def _bounded_cells():
    """(flag, launch, a value past the flag's bound) for every field the types declare `bounded`, in every launch
    that has it."""
    import dataclasses

    from launch.cli.options import RunFlags, flag_of, launch_class

    cells = []
    for launch in LAUNCHES:
        for field in dataclasses.fields(RunFlags) + dataclasses.fields(launch_class(launch)):
            if "bounds" in field.metadata:
                minimum, strictly, maximum = field.metadata["bounds"]
                past = maximum + 1 if maximum is not None else minimum if strictly else minimum - 1
                cells.append((flag_of(field.name), launch, str(past)))
    return cells


BOUNDED = _bounded_cells()


@pytest.mark.parametrize("flag, launch, past", BOUNDED, ids=[f"{flag}-{launch}" for flag, launch, _ in BOUNDED])
def test_a_value_past_a_flags_bound_is_refused_in_every_launch_that_has_it(flag, launch, past, tmp_path, request):
    if launch == "offline":
        request.getfixturevalue("datasets")
    result, errors = _plan(base_arguments(launch, tmp_path) + [flag, past])
    assert isinstance(result, SystemExit) and result.code == 2, f"{flag} {past} was not refused in mode {launch}"
    assert f"{flag}: must be" in errors.strip().splitlines()[-1], errors


def test_a_run_directory_that_recorded_threshold_is_resumed_with_its_target_return(tmp_path):
    """config.json named the solved return `threshold` before it was `target_return`, as everywhere else."""
    import json

    run_dir = saved_run("single", tmp_path)
    path = os.path.join(run_dir, "config.json")
    saved = json.loads(open(path).read())
    saved["threshold"] = saved.pop("target_return") or 321.0
    open(path, "w").write(json.dumps(saved))
    result, errors = _plan(["--resume", run_dir])
    assert not isinstance(result, SystemExit), errors
    assert result.config.target_return == saved["threshold"]
