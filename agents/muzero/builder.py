"""MuZeroBuilder: MuZero through the one builder interface."""

import functools
from typing import Iterator

from acmelike import core
from acmelike.learners import LearningParts
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample
from agents.muzero import learning
from agents.muzero.acting import search_core, search_options
from agents.muzero.config import MuZeroConfig
from agents.muzero.networks import MuZeroNetworks
from agents.off_policy import write_priorities
from agents.r2d2.builder import R2D2Builder


class MuZeroBuilder(R2D2Builder):
    """R2D2's prioritized sequence replay (table, rate limiter, a `SequenceAdder` that CONTINUEs across episodes,
    dataset), read from this config's fields of the same names, with MuZero's search policy and learner.

    The tables' signature comes from the search core's extras (`action_weights`, `root_value`).
    """

    def __init__(self, config: MuZeroConfig = MuZeroConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: MuZeroNetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        return search_core(networks, **search_options(self.config, evaluation=evaluation))

    def make_learner(
        self,
        *,
        random_key,
        networks: MuZeroNetworks,
        dataset: Iterator[ReplaySample],
        environment_spec: EnvironmentSpec,
        replay_client=None,
        counter=None,
        logger=None,
    ) -> core.Learner:
        parts = LearningParts(
            state=learning.init_training_state(networks, self.config, random_key),
            update_step=learning.make_update_step(networks, self.config),
            loss_keys=learning.LOSS_KEYS,
            policy_params=lambda state: state.params,
        )
        write = functools.partial(write_priorities, replay_client, self.config.replay_table_name)
        return parts.make_learner(dataset, name="MuZero learner", counter=counter, logger=logger,
                                  after_update=write if replay_client is not None else None)
