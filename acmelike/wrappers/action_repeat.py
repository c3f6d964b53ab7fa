"""ActionRepeatWrapper: each action the agent takes is applied for a fixed number of environment steps.

    environment = ActionRepeatWrapper(make_control_suite_environment("dm_control/cheetah-run", seed=0), 4)
    # a 1,000-step episode is now 250 agent steps; each step's reward is the sum of its 4 environment steps'
    environment = repeat_actions(environment, config.action_repeat)   # the environment itself when 1

The Control Suite's pixel benchmarks (PlaNet, SAC+AE, CURL, DrQ) repeat actions: 8 on cartpole, 4 on cheetah, 2 on
walker, and count their budgets in environment steps, so 100k environment steps are 25k decisions on cheetah-run.
An agent with discount `gamma` per decision then looks `repeats` times further ahead in environment time.
"""

from typing import Any

import dm_env

from acmelike.wrappers.base import EnvironmentWrapper


def is_repeat_count(repeats: Any) -> bool:
    """Whether `repeats` can be a repeat: an int >= 1 (not a bool, whose True would pass as 1)."""
    return isinstance(repeats, int) and not isinstance(repeats, bool) and repeats >= 1


class ActionRepeatWrapper(EnvironmentWrapper):
    """Applies every action `repeats` times; the agent sees the last timestep of the run of repeats.

    The reward is the sum of the rewards of the repeated steps, and the discount their product, so a termination
    inside the run (discount 0) ends it with discount 0. A run stops early at the episode's end (a `LAST` timestep,
    whether termination or truncation), which is returned as it is but for the summed reward. The episode's return
    is therefore the unwrapped one; only the number of decisions changes.
    """

    def __init__(self, environment: dm_env.Environment, repeats: int):
        if not is_repeat_count(repeats):
            raise ValueError(f"repeats must be a positive int (1 repeats nothing), got {repeats!r}.")
        super().__init__(environment)
        self._repeats = repeats

    @property
    def repeats(self) -> int:
        return self._repeats

    def step(self, action) -> dm_env.TimeStep:
        timestep = self._environment.step(action)
        if timestep.first():  # the step after a LAST one resets (dm_env's auto-reset): nothing to repeat
            return timestep
        reward, discount = timestep.reward, timestep.discount
        for _ in range(self._repeats - 1):
            if timestep.last():
                break
            timestep = self._environment.step(action)
            # Summed in the reward's own dtype (float32 here), as one environment step's reward would be.
            reward = reward + timestep.reward
            discount = discount * timestep.discount
        return timestep._replace(reward=reward, discount=discount)


def repeat_actions(environment: dm_env.Environment, repeats: int) -> dm_env.Environment:
    """`environment` with each action held for `repeats` steps: itself when `repeats` is 1, so a run that repeats
    nothing steps its environment with no wrapper in between."""
    return environment if repeats == 1 else ActionRepeatWrapper(environment, repeats)
