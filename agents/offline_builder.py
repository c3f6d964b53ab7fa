"""OfflineAgentBuilder: what every offline agent's builder (BC, CQL) shares: a learner from its `learning_parts`.

    class BCBuilder(OfflineAgentBuilder):
        name = "BC"
        def make_policy(self, *, networks, environment_spec, evaluation=False): ...
        def learning_parts(self, *, networks, environment_spec, random_key): ...

The learner's batches come from the experiment, not from the builder: `launch.experiments.make.
make_offline_experiment_config` turns the config's `dataset_id`, `batch_size`, `num_sgd_steps_per_step` and
`discount` into `OfflineExperimentConfig.dataset_factory`. Evaluation actors are `OfflineBuilder.make_actor`'s.
"""

from typing import Iterator

from acmelike import core
from acmelike.builders import OfflineBuilder
from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample


class OfflineAgentBuilder(OfflineBuilder):
    """An `OfflineBuilder` whose learner is the generic SGD learner on `learning_parts`; each batch of the dataset
    holds `config.num_sgd_steps_per_step` SGD steps. Subclasses give `make_policy`, `learning_parts` (as
    `OfflineBuilder` declares it) and `name`."""

    name: str  # e.g. "CQL": names the learner in logs and errors

    def __init__(self, config):
        self.config = config

    def make_learner(self, *, random_key, networks, dataset: Iterator[ReplaySample], environment_spec: EnvironmentSpec,
                     counter=None, logger=None) -> core.Learner:
        parts = self.learning_parts(networks=networks, environment_spec=environment_spec, random_key=random_key)
        return parts.make_learner(dataset, name=f"{self.name} learner",
                                  num_sgd_steps_per_step=self.config.num_sgd_steps_per_step, counter=counter,
                                  logger=logger)
