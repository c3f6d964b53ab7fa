"""Anakin MuZero on gymnax CartPole-v1 against a bare jitted loop of the same configuration written here: compile
time and run time apart, side by side in one run, and the return reached.

Both sides, the config tests/engines/test_anakin_muzero.py learns CartPole with (MuZero's defaults but 4
simulations and 16 samples per insert): 4 environments writing one row each per iteration, every action chosen by
a Gumbel MuZero search of 4 simulations in the agent's model (`acting.search_policy`, `mctx`), its policy and root
value stored with the row; sequences of 5 + 30 + 1 rows starting at every row, prioritized (alpha 0.6, new
sequences at 1.0, each SGD step's priorities written back), 100k held, learning once 500 are held, one SGD step of
64 sequences per iteration (the agent's `update_step`: the unrolled model, n-step value targets from the target
network, AdamW).
Ours runs through `launch.engines.anakin` (what `--launch anakin --agent muzero` runs: `agents/muzero/anakin.py`,
`StepStream`, `SequenceReplay`). The baseline is written plainly: `anakin_recurrent.bare_loop`'s gymnax loop (the
padding row after an episode's last observation, as the CONTINUE adder writes them), the search vmapped over the
environments, and a time-major ring of rows from which whole sequences are drawn in proportion to priority. One
jitted call of all iterations on each side.

Both sides run alternately (`repeats` times, seed = repeat index); run time is the median over repeats, compile
time the median of at least 5 ahead-of-time lower + compiles per side (`anakin_ppo.COMPILE_REPEATS`), alternating
too. The return is each run's last-20-episode mean.

    python benchmarks/anakin_muzero.py [--quick] [--repeats N] [--out benchmarks/results]

The record goes to `anakin_muzero.json`.
"""

import os
import sys
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from benchmarks.anakin_off_policy import side_by_side, side_by_side_arguments  # noqa: E402
from benchmarks.anakin_recurrent import NUM_ENVS, bare_loop  # noqa: E402

ENVIRONMENT = "CartPole-v1"
FIELDS = dict(num_simulations=4, samples_per_insert=16.0)  # the learning test's; every other field the default


def make_baseline(iterations: int, config):
    """A bare jitted MuZero of `config` around the agent's networks, search and `update_step`: train(key) ->
    episode_return [iterations, 1, NUM_ENVS], NaN unless an episode ended there, to be jitted."""
    from acmelike.anakin import make_gymnax_environment
    from acmelike.types import ReplaySample, SampleInfo, Step
    from agents.muzero import learning
    from agents.muzero.acting import search_options, search_policy
    from agents.muzero.networks import make_networks

    assert config.sequence_period == 1 and config.variable_update_period == 1
    assert config.batch_size / config.samples_per_insert == NUM_ENVS, "one SGD step per row of each environment"
    spec = make_gymnax_environment(f"gymnax/{ENVIRONMENT}").spec
    networks = make_networks(spec, config)
    observation_shape = tuple(spec.observations.shape)
    update_step, options = learning.make_update_step(networks, config), search_options(config)
    length, per_env = config.sequence_length, config.max_replay_size // NUM_ENVS
    capacity = per_env + length - 1  # rows kept per environment: the newest `per_env` whole sequences' rows

    def init_learner(key):
        state = learning.init_training_state(networks, config, key)
        extras = jax.eval_shape(lambda: act((state,), jnp.zeros((NUM_ENVS,) + observation_shape), None, key, None)[2])
        ring = dict(observation=jnp.zeros((capacity, NUM_ENVS) + observation_shape),
                    action=jnp.zeros((capacity, NUM_ENVS), jnp.int32),
                    reward=jnp.zeros((capacity, NUM_ENVS)), discount=jnp.zeros((capacity, NUM_ENVS)),
                    start_of_episode=jnp.zeros((capacity, NUM_ENVS), bool),
                    **{name: jnp.zeros((capacity,) + x.shape, x.dtype) for name, x in extras.items()})
        return (state, ring, jnp.ones((capacity, NUM_ENVS)), jnp.zeros((), jnp.int32)), jnp.zeros(NUM_ENVS)

    def act(learner, obs, lstm, key, _):
        state = learner[0]
        output = jax.vmap(lambda o, k: search_policy(networks, state.params, k, o[None], **options))(
            obs, jax.random.split(key, NUM_ENVS))
        extras = {"action_weights": output.action_weights[:, 0],
                  "root_value": jax.vmap(lambda tree: tree.summary().value[0])(output.search_tree)}
        return output.action[:, 0], lstm, extras, learner

    def learn(learner, rows, _, key):
        state, ring, weights, written = learner
        row = jax.tree_util.tree_map(lambda x: x[:, 0], rows)  # one row per environment
        at = written % capacity
        ring = {name: stored.at[at].set(row.extras[name] if name in row.extras else getattr(row, name))
                for name, stored in ring.items()}
        weights, written = weights.at[at].set(1.0), written + 1
        # Whole sequences start at rows written - length - per_env < s <= written - length.
        first = written - length - per_env + 1
        starts = first + (jnp.arange(capacity) - first) % capacity  # the row number each ring position would hold
        held = (starts >= 0) & (starts <= written - length) & (starts >= first)
        size = jnp.sum(held) * NUM_ENVS

        def sgd_step(learned):
            state, weights = learned
            masked = jnp.where(held[:, None], weights, 0.0).reshape(-1)
            cumulative = jnp.cumsum(masked)
            points = jax.random.uniform(key, (config.batch_size,), maxval=cumulative[-1])
            drawn = jnp.minimum(jnp.searchsorted(cumulative, points, side="right"), masked.size - 1)
            # As acmelike.anakin.off_policy.sample_in_proportion: a draw on a weight of 0 (float32 cumsum is not
            # monotone) repeats the batch's first valid draw.
            valid = masked[drawn] > 0
            flat = jnp.where(valid, drawn, drawn[jnp.argmax(valid)])
            positions, envs = flat // NUM_ENVS, flat % NUM_ENVS
            times = (positions[:, None] + jnp.arange(length)) % capacity
            batch = {name: stored[times, envs[:, None]] for name, stored in ring.items()}
            data = Step(observation=batch["observation"], action=batch["action"], reward=batch["reward"],
                                 discount=batch["discount"], start_of_episode=batch["start_of_episode"],
                                 extras={"action_weights": batch["action_weights"], "root_value": batch["root_value"]})
            info = SampleInfo(key=flat.astype(jnp.int32), probability=masked[flat] / cumulative[-1],
                              table_size=jnp.full(config.batch_size, size, jnp.float32))
            state, _, extras = update_step(state, ReplaySample(info=info, data=data))
            return state, weights.at[positions, envs].set(extras["priorities"] ** config.priority_exponent)

        state, weights = jax.lax.cond(size >= config.min_replay_size, sgd_step, lambda learned: learned,
                                      (state, weights))
        return state, ring, weights, written

    return bare_loop(iterations, 1, init_learner, act, learn, environment=ENVIRONMENT)


def compare(quick: bool, out=None, repeats: Optional[int] = None) -> None:
    """Our Anakin MuZero (`FIELDS`) against `make_baseline`, side by side (`anakin_off_policy.side_by_side`):
    prints the rows, writes `anakin_muzero.json`."""
    from agents.muzero import MuZeroConfig

    repeats, total_steps = (repeats or 2, 4_000) if quick else (repeats or 3, 20_000)
    config = MuZeroConfig(**FIELDS)

    import launch  # noqa: F401  (import order: JAX substrate before anything else)
    from launch.engines.anakin import AnakinConfig, make_agent

    agent = make_agent(AnakinConfig(agent="muzero", environment=f"gymnax/{ENVIRONMENT}",
                                    max_num_actor_steps=total_steps, agent_config=config))
    assert agent.num_envs == NUM_ENVS and agent.rows_per_env == 1, (agent.num_envs, agent.rows_per_env)
    iterations = total_steps // agent.rows_per_iteration
    side_by_side(
        "muzero", agent, make_baseline(iterations, config), total_steps, repeats, quick, out,
        run_note=f"{iterations} iterations of {NUM_ENVS} searched steps + 1 SGD step of {config.batch_size} "
                 f"sequences, one jitted call",
        return_note="informative: CartPole's best is 500; quick runs are still learning",
        config=dict(agent="muzero", environment=ENVIRONMENT, num_envs=NUM_ENVS, total_steps=total_steps,
                    agent_config=FIELDS))


def main() -> None:
    args = side_by_side_arguments(__doc__, "4k environment steps and 2 repeats, not 20k and 3")
    compare(args.quick, args.out, args.repeats)


if __name__ == "__main__":
    main()
