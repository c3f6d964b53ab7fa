"""CartPole with its velocities hidden: a memory task (a policy must infer them from past observations)."""

import gymnasium
import numpy as np

CARTPOLE_NO_VELOCITY_ID = "acmelike/CartPoleNoVelocity-v1"

# CartPole's observation is (cart position, cart velocity, pole angle, pole angular velocity).
_POSITION_INDICES = np.array([0, 2])


class CartPoleNoVelocity(gymnasium.ObservationWrapper):
    """Observations (cart position, pole angle) only; dynamics, rewards and episode ends are CartPole's."""

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        low, high = env.observation_space.low, env.observation_space.high
        self.observation_space = gymnasium.spaces.Box(
            low[_POSITION_INDICES], high[_POSITION_INDICES], dtype=env.observation_space.dtype
        )

    def observation(self, observation):
        return observation[_POSITION_INDICES]


def _make_cartpole_no_velocity(**kwargs) -> gymnasium.Env:
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    return CartPoleNoVelocity(CartPoleEnv(**kwargs))


def register_memory_tasks() -> None:
    """Registers acmelike/CartPoleNoVelocity-v1 with gymnasium; calling it again does nothing."""
    if CARTPOLE_NO_VELOCITY_ID not in gymnasium.registry:
        gymnasium.register(
            id=CARTPOLE_NO_VELOCITY_ID,
            entry_point=_make_cartpole_no_velocity,
            max_episode_steps=500,  # as CartPole-v1
            reward_threshold=475.0,
        )
