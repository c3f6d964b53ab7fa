"""The tutorial's agent (my_agent.py, beside this script) as a distributed program, with a run directory.

    .venv-launchpad/bin/python docs/tutorial/run_distributed.py --run-dir runs/qlearning-mp
    .venv-launchpad/bin/python docs/tutorial/run_distributed.py --run-dir runs/qlearning-mp --resume --steps 60000

Nothing is registered or edited in the framework: the agent's `AgentDefinition` goes to `make_experiment_config`,
and `launch.train` runs it on the engine `--launch` names (local_mp and local_mt need the classic stack's
Launchpad; ray needs Ray installed). The node processes import `my_agent` as this script does (they get
its import path). tests/docs/test_tutorial.py copies both files out of the repository and runs them.
"""

# --8<-- [start:script]
import argparse
import json

import launch
from my_agent import AGENT  # a module of your own, beside this script


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description="The tutorial's agent as a distributed program.")
    parser.add_argument("--run-dir", required=True, help="logs, checkpoints, snapshots and the summary go here")
    parser.add_argument("--steps", type=int, default=30_000, help="environment steps, over every actor")
    parser.add_argument("--launch", default="local_mp", choices=("single", "local_mt", "local_mp", "ray"))
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--resume", action="store_true", help="go on from the run's latest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="start over, replacing what --run-dir holds")
    parser.add_argument("--config", action="append", default=[], metavar="FIELD=VALUE",
                        help="set a field of QLearningConfig, e.g. --config min_replay_size=200")
    args = parser.parse_args(argv)
    config = launch.make_experiment_config(
        agent=AGENT,  # your own definition: the run directory records where it lives (my_agent:AGENT)
        environment="CartPole-v1",
        max_num_actor_steps=args.steps,
        run_dir=args.run_dir,
        config_overrides=args.config,
    )
    summary = launch.train(config, launch=args.launch, actors=args.actors, resume=args.resume,
                           overwrite=args.overwrite, checkpoint_every_minutes=1.0)
    print(json.dumps(dict(summary)))
    return summary


if __name__ == "__main__":
    main()
# --8<-- [end:script]
