"""The memory task and pixel environments acmelike registers with gymnasium."""

import gymnasium
import numpy as np
import pytest
from stack import require

import acmelike.environments
from acmelike.specs import make_environment_spec
from acmelike.wrappers import make_gymnasium_environment


def test_cartpole_no_velocity_hides_the_velocities_and_registers_idempotently():
    acmelike.environments.register()
    acmelike.environments.register()
    hidden = gymnasium.make("acmelike/CartPoleNoVelocity-v1")
    full = gymnasium.make("CartPole-v1")
    observation, _ = hidden.reset(seed=3)
    full_observation, _ = full.reset(seed=3)
    np.testing.assert_array_equal(observation, full_observation[[0, 2]])
    for _ in range(5):
        observation, reward, *_ = hidden.step(1)
        full_observation, full_reward, *_ = full.step(1)
    np.testing.assert_array_equal(observation, full_observation[[0, 2]])
    assert hidden.spec.max_episode_steps == 500 and reward == full_reward
    spec = make_environment_spec(make_gymnasium_environment("acmelike/CartPoleNoVelocity-v1", 0))
    assert spec.observations.shape == (2,)


def test_minatar_frames_fit_the_resnet_torso():
    require("minatar")
    from agents.impala import IMPALAConfig, make_networks

    acmelike.environments.register()
    environment = make_gymnasium_environment("MinAtar/Breakout-v1", 0)
    spec = make_environment_spec(environment)
    assert spec.observations.shape == (10, 10, 4)
    networks = make_networks(spec, IMPALAConfig(torso="impala_resnet"))
    import jax

    # Shapes only: traced, not run op by op (11 s on the latest stack, where XLA runs single-threaded).
    params = jax.eval_shape(networks.network.init, jax.random.PRNGKey(0))
    (logits, values), _ = jax.eval_shape(
        networks.network.apply, params, environment.reset().observation[None], networks.network.initial_state(1)
    )
    assert logits.shape == (1, 3) and values.shape == (1,)
    with pytest.raises(ValueError, match="nature_dqn"):
        make_networks(spec, IMPALAConfig(torso="nature_dqn"))  # 10x10 frames are too small for its strides


def test_minatar_ids_are_minatars_own_and_registering_them_imports_nothing():
    """`register_minatar` writes out the ids `minatar.gym.register_envs()` registers, so that registering them
    (every run does) costs no import of minatar (seaborn, matplotlib): compared in a fresh interpreter."""
    require("minatar")
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import json, sys
        import gymnasium
        from acmelike.environments import register_minatar
        def minatar_specs():
            return {i: (s.entry_point, s.kwargs) for i, s in gymnasium.registry.items() if i.startswith("MinAtar/")}
        register_minatar()
        ours, imported = minatar_specs(), "minatar" in sys.modules
        for env_id in list(ours):
            del gymnasium.registry[env_id]
        import minatar.gym
        minatar.gym.register_envs()
        print(json.dumps({"same": ours == minatar_specs(), "count": len(ours), "imported": imported}))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    import json

    assert json.loads(result.stdout.splitlines()[-1]) == {"same": True, "count": 10, "imported": False}
