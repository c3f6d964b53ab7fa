"""README.md's commands as a fresh clone runs them: in the order given, each finds what it reads.

- every dataset a command learns from (`--dataset`) is written by an earlier `launch.cli.record` command, and every
  run directory a command reads (`--resume`, `launch.cli.evaluate RUN_DIR`, `launch.cli.record RUN_DIR`, `--policy
  RUN_DIR:N`) is the `--run-dir` of an earlier training command;
- the commands that take seconds as written (`--list-config`, `--help`) run;
- the offline commands of the CartPole datasets (recording datasets, one policy or a mix, and learning from them)
  run, in order, after the commands that train the runs they record, with budgets cut to seconds (`--steps`, `--episodes` and `--policy`'s
  counts replaced, one evaluation episode offline), run directories and Minari datasets under a temporary directory.
"""

import pathlib
import re
import shlex

import pytest
from run_helpers import command_line
from stack import require

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = ("launch", "launch.cli.record", "launch.cli.evaluate")
# The CartPole datasets' commands run; Pendulum's are the same commands with SAC and continuous CQL, and each of
# those agents compiles for seconds, so they are only checked to find what they read.
RUN_NAMESPACE = "cartpole/"
SHORT = {"online_steps": "300", "offline_steps": "20", "episodes": "2", "evaluation_episodes": "1"}


def readme_commands():
    """(module, argv) of every `python -m launch...` command of README.md's bash blocks, in order, continuation
    lines joined and comments dropped."""
    text = (ROOT / "README.md").read_text()
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("#")[0].split("|")[0].strip()
            match = re.match(r"^(?:\.venv[\w-]*/bin/)?python -m ([\w.]+)\s(.*)$", command)
            if match and match.group(1) in MODULES:
                yield match.group(1), shlex.split(match.group(2))


def _value(argv, flag):
    return argv[argv.index(flag) + 1] if flag in argv else None


def _positional(argv):
    """The first argument that is neither a flag nor a flag's value (RUN_DIR of evaluate and record)."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token.startswith("--"):
            skip = token not in ("--random", "--overwrite", "--tensorboard")
        else:
            return token
    return None


def reads_and_writes(module, argv):
    """({("run", dir) or ("dataset", id) the command reads}, {what it writes})."""
    from launch.cli.record import parse_policy

    reads, writes = set(), set()
    if module == "launch":
        if _value(argv, "--dataset"):
            reads.add(("dataset", _value(argv, "--dataset")))
        if _value(argv, "--resume"):
            reads.add(("run", _value(argv, "--resume")))
        elif _value(argv, "--run-dir"):
            writes.add(("run", _value(argv, "--run-dir")))
    else:
        if _positional(argv):
            reads.add(("run", _positional(argv)))
        for index, token in enumerate(argv):
            if token == "--policy" and parse_policy(argv[index + 1]).run_dir:
                reads.add(("run", parse_policy(argv[index + 1]).run_dir))
        if module == "launch.cli.record":
            writes.add(("dataset", _value(argv, "--dataset-id")))
    return reads, writes


def test_every_dataset_and_run_directory_is_made_before_it_is_read():
    made, unmade = set(), []
    for module, argv in readme_commands():
        reads, writes = reads_and_writes(module, argv)
        unmade += [f"python -m {module} {shlex.join(argv)} reads the {kind} {name}, which no earlier command makes"
                   for kind, name in sorted(reads - made)]
        made |= writes
    assert not unmade, "\n".join(unmade)


def _offline_chain(namespace: str):
    """The README's offline commands (record, --dataset) of the datasets in `namespace` and, before them, the
    training commands that make the runs they record, in the README's order."""
    commands = list(readme_commands())
    offline = [(module, argv) for module, argv in commands
               if (_value(argv, "--dataset-id") or _value(argv, "--dataset") or "").startswith(namespace)]
    needed = {name for module, argv in offline for kind, name in reads_and_writes(module, argv)[0] if kind == "run"}
    makers = {}
    for module, argv in commands:
        for kind, name in reads_and_writes(module, argv)[1]:
            if kind == "run" and name in needed:
                makers.setdefault(name, (module, argv))
    chain = list(makers.values()) + offline
    return sorted(chain, key=lambda command: next(i for i, c in enumerate(commands) if c == command))


def _shortened(argv, runs):
    """`argv` with its budgets cut to seconds and its runs/ directories moved under `runs`."""
    from launch.cli.record import parse_policy

    def moved(path):
        return str(runs / path) if path and path.startswith("runs/") else path

    out = []
    for index, token in enumerate(argv):
        previous = argv[index - 1] if index else ""
        if previous == "--steps":
            token = SHORT["offline_steps" if "--dataset" in argv else "online_steps"]
        elif previous == "--episodes":
            token = SHORT["episodes"]
        elif previous == "--policy":
            policy = parse_policy(token)
            token = policy._replace(episodes=int(SHORT["episodes"]), run_dir=moved(policy.run_dir)).text()
        out.append(moved(token))
    if "--dataset" in argv and "--return-window" not in argv:
        out += ["--return-window", SHORT["evaluation_episodes"]]  # the offline run's evaluation at its end
    return out


def test_the_offline_commands_run_in_order(tmp_path, monkeypatch):
    require("minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    chain = _offline_chain(RUN_NAMESPACE)
    assert any(module == "launch.cli.record" and "--policy" in argv for module, argv in chain), (
        "README.md records no mixed dataset (launch.cli.record --policy ...)")
    for module, argv in chain:
        argv = _shortened(argv, tmp_path)
        result = command_line(*argv, module=module)
        assert result.returncode == 0, f"python -m {module} {shlex.join(argv)}: exit {result.returncode}\n{result.stderr}"


@pytest.mark.parametrize("argv", [argv for module, argv in readme_commands() if "--list-config" in argv or
                                  "--help" in argv], ids=" ".join)
def test_the_commands_that_run_in_seconds_as_written_run(argv):
    result = command_line(*argv)
    assert result.returncode == 0 and result.stdout.strip(), result.stderr
