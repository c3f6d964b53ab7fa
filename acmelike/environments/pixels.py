"""Pixel environments for the conv torsos: MinAtar's games (10x10xC binary frames) through its gymnasium module.

gymnasium 1.x no longer loads the `gymnasium.envs` entry points MinAtar declares, so its ids
(`MinAtar/Breakout-v1`, `MinAtar/SpaceInvaders-v1`, ...; v0 keeps the full action set) are registered here.
The frames are bool arrays; the torsos in `acmelike.networks.torsos` take them as 0/1 floats.
"""

import importlib.util

import gymnasium

MINATAR_EXAMPLE_ID = "MinAtar/Breakout-v1"
MINATAR_GAMES = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")


def register_minatar() -> bool:
    """Registers MinAtar's ids if the `minatar` package is installed (idempotent); returns whether it is.

    The ids are those `minatar.gym.register_envs()` registers (a test compares them), written here with the entry
    point as text: importing `minatar` imports seaborn and matplotlib (1.2-1.8 s on the 2-core machines), which
    every run would pay at start-up for games it never makes. gymnasium imports it when one of them is made.
    """
    if importlib.util.find_spec("minatar") is None:
        return False
    if MINATAR_EXAMPLE_ID not in gymnasium.registry:
        for game in MINATAR_GAMES:
            name = game.title().replace("_", "")
            for version, minimal_actions in (("v0", False), ("v1", True)):
                gymnasium.register(id=f"MinAtar/{name}-{version}", entry_point="minatar.gym:BaseEnv",
                                   kwargs=dict(game=game, use_minimal_action_set=minimal_actions))
    return True
