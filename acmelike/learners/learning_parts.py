"""LearningParts: what an agent's learning module hands `SGDLearner`, and the one place the learner is built from it."""

from typing import Any, Callable, Iterator, NamedTuple, Optional, Sequence

from acmelike.learners.sgd_learner import SGDLearner


class LearningParts(NamedTuple):
    """An agent's learning step, ready for `SGDLearner`.

        parts = builder.learning_parts(networks=networks, environment_spec=spec, random_key=key)
        learner = parts.make_learner(dataset, name="DQN learner")
        learner.step()
    """

    state: Any  # the initial TrainingState
    update_step: Callable  # (state, ReplaySample) -> (state, metrics, extras)
    loss_keys: Sequence[str]  # metrics that must stay finite
    policy_params: Callable[[Any], Any]  # state -> the parameters actors run (served as "policy")

    def make_learner(self, iterator: Iterator, *, name: str, num_sgd_steps_per_step: int = 1,
                     after_update: Optional[Callable] = None, counter=None, logger=None) -> SGDLearner:
        """The `SGDLearner` that runs `update_step` on `iterator`'s batches and serves `policy_params` as "policy"."""
        return SGDLearner(
            state=self.state,
            update_step=self.update_step,
            iterator=iterator,
            variables={"policy": self.policy_params},
            num_sgd_steps_per_step=num_sgd_steps_per_step,
            after_update=after_update,
            loss_keys=self.loss_keys,
            counter=counter,
            logger=logger,
            name=name,
        )
