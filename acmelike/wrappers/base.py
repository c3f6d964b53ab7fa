"""EnvironmentWrapper: a dm_env.Environment that forwards everything to the environment it wraps."""

import dm_env


class EnvironmentWrapper(dm_env.Environment):
    """Forwards every call to `environment`; subclasses override only what they change.

    Attributes that the wrapper does not define (e.g. `gymnasium_env` of an inner adapter) are looked up on the
    wrapped environment, so a stack of wrappers behaves like the innermost environment plus its changes.
    """

    def __init__(self, environment: dm_env.Environment):
        self._environment = environment

    @property
    def environment(self) -> dm_env.Environment:
        """The wrapped environment (one level down)."""
        return self._environment

    def __getattr__(self, name: str):
        # Only reached for names not found normally. Guard the attributes we need ourselves, so that a
        # half-constructed or unpickled wrapper raises AttributeError instead of recursing.
        if name.startswith("__") or name == "_environment":
            raise AttributeError(name)
        return getattr(self._environment, name)

    def reset(self) -> dm_env.TimeStep:
        return self._environment.reset()

    def step(self, action) -> dm_env.TimeStep:
        return self._environment.step(action)

    def observation_spec(self):
        return self._environment.observation_spec()

    def action_spec(self):
        return self._environment.action_spec()

    def reward_spec(self):
        return self._environment.reward_spec()

    def discount_spec(self):
        return self._environment.discount_spec()

    def close(self) -> None:
        self._environment.close()
