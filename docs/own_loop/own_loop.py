"""Your own training loop around an agent's pieces (docs/own-loop.md shows this file part by part).

    .venv/bin/python docs/own_loop/own_loop.py                             # the seeded local replay
    .venv-launchpad/bin/python docs/own_loop/own_loop.py --replay reverb   # a Reverb server (the classic stack)

It prints one JSON line: steps, learner steps, the training episodes' and the evaluation's average returns.
tests/docs/test_own_loop.py runs it with either replay and checks that it learned and exited with no traceback.
"""

# --8<-- [start:imports]
import argparse
import json

import jax
import numpy as np

from acmelike import replay
from acmelike.specs import make_environment_spec
from acmelike.wrappers import make_gymnasium_environment
from agents.dqn import DQNBuilder, DQNConfig, make_networks
from environment_loops import EnvironmentLoop
from launch.experiments.overrides import apply_overrides  # reads `--config FIELD=VALUE` as the command line does
# --8<-- [end:imports]


# --8<-- [start:replay]
def local_replay(tables, seed: int):
    """The seeded in-process replay: sampled when the learner asks, nothing to start or stop."""
    return replay.LocalReplay(tables, seed=seed), None


def reverb_replay(tables, seed: int):
    """A Reverb server in this process and a client of it (the classic stack); Reverb's sampling is not seeded."""
    import reverb

    from acmelike.replay.reverb_tables import to_reverb_table

    server = reverb.Server([to_reverb_table(table) for table in tables], port=None)
    return reverb.Client(f"localhost:{server.port}"), server


REPLAYS = {"local": local_replay, "reverb": reverb_replay}
# --8<-- [end:replay]


def train(replay_kind: str = "local", max_steps: int = 20_000, seed: int = 0, config: DQNConfig = DQNConfig()) -> dict:
    # --8<-- [start:pieces]
    environment = make_gymnasium_environment("CartPole-v1", seed=seed)
    spec = make_environment_spec(environment)
    builder = DQNBuilder(config)
    networks = make_networks(spec, config)
    policy = builder.make_policy(networks=networks, environment_spec=spec)
    # One thread acts and learns: an insert that waited for the learner would wait for ever.
    tables = replay.never_blocking_inserts(builder.make_replay_tables(environment_spec=spec, policy=policy))
    client, server = REPLAYS[replay_kind](tables, seed)
    dataset = builder.make_dataset_iterator(replay_client=client)
    adder = builder.make_adder(replay_client=client, environment_spec=spec, policy=policy)
    learner = builder.make_learner(random_key=jax.random.PRNGKey(seed), networks=networks, dataset=dataset,
                                   environment_spec=spec, replay_client=client)
    actor = builder.make_actor(random_key=jax.random.PRNGKey(seed + 1), policy=policy, environment_spec=spec,
                               variable_source=learner, adder=adder)
    # --8<-- [end:pieces]
    # --8<-- [start:loop]
    try:
        steps, learner_steps, returns = 0, 0, []
        while steps < max_steps:
            timestep = environment.reset()
            actor.observe_first(timestep)
            episode_return = 0.0
            while not timestep.last():
                action = actor.select_action(timestep.observation)
                timestep = environment.step(action)
                actor.observe(action, next_timestep=timestep)
                while dataset.ready():  # as many learner steps as the replay can serve now: next() never waits
                    learner.step()
                    learner_steps += 1
                actor.update()  # fetches the learner's parameters every `variable_update_period` steps
                steps += 1
                episode_return += float(timestep.reward)
            returns.append(episode_return)
        # --8<-- [end:loop]
        # --8<-- [start:evaluation]
        evaluator = builder.make_actor(random_key=jax.random.PRNGKey(seed + 2),
                                       policy=builder.make_policy(networks=networks, environment_spec=spec,
                                                                  evaluation=True),
                                       environment_spec=spec, variable_source=learner)  # greedy, writes nowhere
        evaluator.update(wait=True)
        loop = EnvironmentLoop(make_gymnasium_environment("CartPole-v1", seed=seed + 100), evaluator,
                               label="evaluation")
        evaluation = [loop.run_episode()["episode_return"] for _ in range(5)]
        # --8<-- [end:evaluation]
    # --8<-- [start:shutdown]
    finally:
        adder.close()  # ends the writer's stream: on Reverb, an open stream makes the server's stop wait 5 s
        dataset.close()  # ends the sampling pipeline and lets go of it, while the server it reads still runs
        if server is not None:
            server.stop()
    # --8<-- [end:shutdown]
    return {"replay": replay_kind, "steps": steps, "learner_steps": learner_steps, "episodes": len(returns),
            "average_return_last_20": float(np.mean(returns[-20:])),
            "evaluation_return": float(np.mean(evaluation))}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="DQN on CartPole-v1 in a loop of your own.")
    parser.add_argument("--replay", choices=sorted(REPLAYS), default="local")
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", action="append", default=[], metavar="FIELD=VALUE",
                        help="set a DQNConfig field, e.g. --config min_replay_size=500")
    args = parser.parse_args()
    print(json.dumps(train(args.replay, args.steps, args.seed, apply_overrides(DQNConfig(), args.config))))
