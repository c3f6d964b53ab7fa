"""GenericActor keeps one core state per sub-environment: the episode hook runs per sub-environment at its own
episode start (mask), an exploration clock counts only the actions a sub-environment really took."""

import dm_env
import jax.numpy as jnp
import numpy as np

from acmelike.actors import ActorCore, GenericActor
from acmelike.wrappers import make_vector_environment
from environment_loops import EnvironmentLoop
from acmelike.loggers import NoOpLogger

COUNTING_CORE = ActorCore(
    init=lambda key: {"episode_steps": jnp.zeros((), jnp.int32), "clock": jnp.zeros((), jnp.int32)},
    on_episode_start=lambda state: {**state, "episode_steps": jnp.zeros((), jnp.int32)},  # the clock runs on
    select_action=lambda params, observation, state: (
        jnp.zeros((), jnp.int32),  # always push left: CartPole episodes end after ~10 steps, at different times
        {"episode_steps": state["episode_steps"] + 1, "clock": state["clock"] + 1},
    ),
    get_extras=lambda state: state,
)


class RecordingAdder:
    def __init__(self):
        self.steps = []  # (step_type [B], extras) per add

    def add_first(self, timestep):
        assert (timestep.step_type == dm_env.StepType.FIRST).all()

    def add(self, action, next_timestep, extras):
        self.steps.append((np.asarray(next_timestep.step_type), {k: np.asarray(v) for k, v in extras.items()}))


def test_episode_hook_and_clock_per_sub_environment():
    num_envs = 3
    adder = RecordingAdder()
    actor = GenericActor(COUNTING_CORE, np.zeros(2, np.uint32), variable_client=None, adder=adder, num_envs=num_envs)
    loop = EnvironmentLoop(make_vector_environment("CartPole-v1", num_envs, seed=0), actor, logger=NoOpLogger())
    results = [loop.run_episode() for _ in range(12)]
    episode_steps = np.zeros(num_envs, int)
    taken = np.zeros(num_envs, int)
    for step_type, extras in adder.steps:
        for i in range(num_envs):
            if step_type[i] == dm_env.StepType.FIRST:  # the reset step: action i was ignored, nothing recorded
                episode_steps[i] = 0
                continue
            episode_steps[i] += 1
            taken[i] += 1
            assert extras["episode_steps"][i] == episode_steps[i], "the hook reset this sub-environment only"
            assert extras["clock"][i] == taken[i], "the clock counts the actions this sub-environment took"
    lengths = {r["sub_environment"]: r["episode_length"] for r in results}
    assert set(lengths) == set(range(num_envs)) and len(set(r["episode_length"] for r in results)) > 1
