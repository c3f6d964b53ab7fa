"""Anakin: whole training runs as one jitted function, for environments written in JAX (gymnax, Brax, MuJoCo
Playground, JaxMARL).

Environments are stepped under `vmap`, steps and updates run under `lax.scan`, and the agents' own pure pieces
(`ActorCore`s from their builders, `update_step`s from their `learning` modules) run inside, unchanged:

    environment = make_gymnax_environment("CartPole-v1")   # or make_jaxmarl_environment("MPE_simple_spread_v3")
    environment = make_brax_environment("brax/inverted_pendulum")   # continuous actions (SAC, TD3, D4PG, MPO)
    environment = make_playground_environment("playground/CartpoleSwingup")   # the Control Suite in MJX
    stream = StepStream(environment, policy)          # Step rows as a CONTINUE SequenceAdder writes them (PPO, IPPO)
    records = TransitionRecorder(environment, policy)  # one-step records -> n-step Transitions (DQN, TrajectoryBuffer)

The agents' forms put them together with a replay: `off_policy` (n-step transitions: DQN, SAC, TD3, D4PG, MPO),
`recurrent_replay` (Step sequences with their stored recurrent state: R2D2, MuZero) or none (`on_policy_agent`: PPO,
IPPO, MAPPO, IMPALA); a `StepStream` with a `variable_update_period` gives each environment's actor its own
parameter copy. The runners that put them together live in `launch/engines/anakin.py`.
"""

from acmelike.anakin.brax import BRAX_PREFIX, make_brax_environment
from acmelike.anakin.environment import GYMNAX_PREFIX, JaxEnvironment, JaxTimeStep, make_gymnax_environment
from acmelike.anakin.episodes import EpisodeReturns
from acmelike.anakin.jaxmarl import JAXMARL_PREFIX, make_jaxmarl_environment
from acmelike.anakin.playground import PLAYGROUND_PREFIX, make_playground_environment
from acmelike.anakin.streams import StepStream, StreamState, on_policy_agent
from acmelike.anakin.trajectory_buffer import TrajectoryBuffer, TrajectoryBufferState
from acmelike.anakin.transitions import StepRecord, TransitionRecorder, n_step_transitions

# The id prefixes of environments written in JAX: only `--launch anakin` runs them.
JAX_ENVIRONMENT_PREFIXES = (GYMNAX_PREFIX, JAXMARL_PREFIX, BRAX_PREFIX, PLAYGROUND_PREFIX)

__all__ = [
    "BRAX_PREFIX",
    "EpisodeReturns",
    "GYMNAX_PREFIX",
    "JAXMARL_PREFIX",
    "JAX_ENVIRONMENT_PREFIXES",
    "JaxEnvironment",
    "JaxTimeStep",
    "PLAYGROUND_PREFIX",
    "StepRecord",
    "StepStream",
    "StreamState",
    "TrajectoryBuffer",
    "TrajectoryBufferState",
    "TransitionRecorder",
    "make_brax_environment",
    "make_gymnax_environment",
    "make_jaxmarl_environment",
    "make_playground_environment",
    "n_step_transitions",
    "on_policy_agent",
]
