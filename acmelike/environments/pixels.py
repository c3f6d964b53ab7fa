"""Pixel environments for the conv torsos: MinAtar's games (10x10xC binary frames) through its gymnasium module.

gymnasium 1.x no longer loads the `gymnasium.envs` entry points MinAtar declares, so its ids
(`MinAtar/Breakout-v1`, `MinAtar/SpaceInvaders-v1`, ...; v0 keeps the full action set) are registered here.
The frames are bool arrays; the torsos in `acmelike.networks.torsos` take them as 0/1 floats.
"""

import gymnasium

MINATAR_EXAMPLE_ID = "MinAtar/Breakout-v1"


def register_minatar() -> bool:
    """Registers MinAtar's ids if the `minatar` package is installed (idempotent); returns whether it is."""
    try:
        import minatar.gym
    except ImportError:
        return False
    if MINATAR_EXAMPLE_ID not in gymnasium.registry:
        minatar.gym.register_envs()
    return True
