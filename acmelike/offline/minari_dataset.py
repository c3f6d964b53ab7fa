"""MinariIterator: uniform batches of one-step transitions from a local Minari dataset, as `ReplaySample`s.

    iterator = MinariIterator("cartpole/expert-v0", batch_size=64, discount=0.99, seed=0)
    sample = next(iterator)        # ReplaySample(info=SampleInfo(...), data=Transition([B, ...] arrays))

The batches have exactly the structure a Reverb `NStepTransitionAdder` table yields with n_step=1, so a learner
cannot tell where its data came from: `data.discount` is the total discount (`discount` times 0 at a
termination, times 1 at a truncation or a mid-episode step), and `info` holds the item indices, uniform sampling
probabilities 1/N and the dataset size N. Datasets are read from Minari's local directory
(`MINARI_DATASETS_PATH`, default ~/.minari/datasets); nothing is downloaded.
"""

import os
from typing import Iterator, NamedTuple

import numpy as np

from acmelike.specs import EnvironmentSpec
from acmelike.types import ReplaySample, SampleInfo, Transition


class DatasetSpaceError(ValueError):
    """A dataset's observation or action space does not match the environment's."""


class Transitions(NamedTuple):
    """A dataset's one-step transitions, as flat arrays over all episodes ([N, ...])."""

    transitions: Transition
    episodes: int


def _load(dataset_id: str):
    import minari
    from minari.storage import get_dataset_path

    path = get_dataset_path(dataset_id)
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"No local Minari dataset {dataset_id!r} at {path} (MINARI_DATASETS_PATH="
            f"{os.environ.get('MINARI_DATASETS_PATH', '<unset: ~/.minari/datasets>')}). Record one with "
            f"`python -m launch.cli.record RUN_DIR --dataset-id {dataset_id}` (a mix: `--policy RUN_DIR:N --policy "
            f"random:N`); datasets are never downloaded here."
        )
    return minari.load_dataset(dataset_id)


def load_transitions(dataset_id: str, discount: float) -> Transitions:
    """All one-step transitions of the dataset: observations float32, actions int32 (discrete) or float32."""
    dataset = _load(dataset_id)
    parts = {name: [] for name in Transition._fields if name != "extras"}
    episodes = 0
    for episode in dataset.iterate_episodes():
        observations = np.asarray(episode.observations, np.float32)
        steps = len(episode.actions)
        parts["observation"].append(observations[:-1])
        parts["next_observation"].append(observations[1:steps + 1])
        parts["action"].append(np.asarray(episode.actions))
        parts["reward"].append(np.asarray(episode.rewards, np.float32))
        parts["discount"].append(discount * (1.0 - np.asarray(episode.terminations, np.float32)))
        episodes += 1
    if not episodes:
        raise ValueError(f"Minari dataset {dataset_id!r} has no episodes.")
    arrays = {name: np.concatenate(values) for name, values in parts.items()}
    action = arrays["action"]
    arrays["action"] = action.astype(np.int32 if np.issubdtype(action.dtype, np.integer) else np.float32)
    arrays["discount"] = arrays["discount"].astype(np.float32)
    return Transitions(Transition(**arrays, extras=()), episodes)


def check_dataset_fits(dataset_id: str, spec: EnvironmentSpec) -> None:
    """DatasetSpaceError naming the dataset, its spaces and the environment's specs if they do not match."""
    from gymnasium import spaces

    dataset = _load(dataset_id)
    observation_space, action_space = dataset.spec.observation_space, dataset.spec.action_space
    problems = []
    if tuple(getattr(observation_space, "shape", ()) or ()) != tuple(spec.observations.shape):
        problems.append(f"observations {observation_space} vs the environment's shape {spec.observations.shape}")
    discrete_env = hasattr(spec.actions, "num_values")
    if isinstance(action_space, spaces.Discrete) != discrete_env or (
        discrete_env and int(action_space.n) != int(spec.actions.num_values)
    ) or (not discrete_env and tuple(action_space.shape) != tuple(spec.actions.shape)):
        problems.append(f"actions {action_space} vs the environment's {spec.actions!r}")
    if problems:
        raise DatasetSpaceError(
            f"Minari dataset {dataset_id!r} ({dataset.spec.data_path if hasattr(dataset.spec, 'data_path') else ''})"
            f" does not fit the environment: " + "; ".join(problems) + ". Record the dataset on this environment."
        )


class MinariIterator(Iterator[ReplaySample]):
    """Endless uniform batches (with replacement) of a Minari dataset's transitions; see the module docstring.

    Args:
      dataset_id: a local Minari dataset.
      batch_size: transitions per `next()`.
      discount: the agent's gamma, folded into `data.discount`.
      seed: seeds the sampling.
    """

    def __init__(self, dataset_id: str, *, batch_size: int, discount: float, seed: int = 0):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
        loaded = load_transitions(dataset_id, discount)
        self.dataset_id = dataset_id
        self.transitions = loaded.transitions
        self.episodes = loaded.episodes
        self.size = len(self.transitions.reward)
        self.batch_size = batch_size
        self._rng = np.random.default_rng(seed)
        self._probability = np.full((batch_size,), 1.0 / self.size, np.float64)
        self._table_size = np.full((batch_size,), self.size, np.int64)

    def __next__(self) -> ReplaySample:
        indices = self._rng.integers(0, self.size, size=self.batch_size)
        data = Transition(*(field[indices] for field in self.transitions[:-1]), extras=())
        info = SampleInfo(key=indices.astype(np.uint64), probability=self._probability, table_size=self._table_size)
        return ReplaySample(info=info, data=data)
