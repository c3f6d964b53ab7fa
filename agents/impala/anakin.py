"""IMPALA's fully jitted form (Anakin): its builder's recurrent policy and its own pure V-trace update step, over
JAX environments."""

from acmelike.anakin import JaxEnvironment, on_policy_agent
from acmelike.anakin.agent import AnakinAgent
from agents.impala import learning
from agents.impala.builder import IMPALABuilder
from agents.impala.config import IMPALAConfig
from agents.impala.networks import make_networks


def make_anakin_agent(environment: JaxEnvironment, config: IMPALAConfig) -> AnakinAgent:
    """IMPALA through `acmelike.anakin.on_policy_agent`: `config.batch_size` environments, each writing one sequence
    of `unroll_length + 1` rows per update (the last row, the next sequence's first, only bootstraps), as its queue
    would serve them. Each row stores the behaviour logits and the LSTM state that chose its action; the LSTM state
    is carried from row to row and reset at every episode's start, as the single-process actors do.

    Every field of `IMPALAConfig` means what it means in the other runners, except `variable_update_period`: the
    actors act with the latest update's parameters, so a period other than 1 is refused (`on_policy_agent`). The
    queue never holds more than the `batch_size` sequences of one update, within `max_queue_size`; there is no
    `replay_table_name` queue.
    """
    networks = make_networks(environment.spec, config)
    policy = IMPALABuilder(config).make_policy(networks=networks, environment_spec=environment.spec)
    return on_policy_agent(
        "impala", environment, config,
        policy=policy,
        init_training_state=lambda key: learning.init_training_state(networks, config, key),
        update_step=learning.make_update_step(networks, config),
    )
