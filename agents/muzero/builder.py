"""MuZeroBuilder: MuZero through the one builder interface."""

from acmelike.specs import EnvironmentSpec
from agents.muzero import learning
from agents.muzero.acting import search_core, search_options
from agents.muzero.config import MuZeroConfig
from agents.muzero.networks import MuZeroNetworks
from agents.r2d2.builder import R2D2Builder


class MuZeroBuilder(R2D2Builder):
    """R2D2's prioritized sequence replay (table, rate limiter, a `SequenceAdder` that CONTINUEs across episodes,
    dataset), read from this config's fields of the same names, with MuZero's search policy and learner.

    The tables' signature comes from the search core's extras (`action_weights`, `root_value`).
    """

    learning = learning
    learner_name = "MuZero learner"

    def __init__(self, config: MuZeroConfig = MuZeroConfig()):
        super().__init__(config)

    def make_policy(self, *, networks: MuZeroNetworks, environment_spec: EnvironmentSpec, evaluation: bool = False):
        return search_core(networks, **search_options(self.config, evaluation=evaluation))
