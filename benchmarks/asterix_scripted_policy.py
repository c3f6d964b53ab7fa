"""One scripted policy on two implementations of MinAtar's Asterix: gymnax's JAX re-implementation (what the
minatar results suite trains on) and the MinAtar package's own game (the baseline, measured in the same run).

Not a speed benchmark: it asks whether the two games are the same game, and how much return a simple policy gets
where DQN stays near random play. The policy reads one frame: it never steps into a cell an enemy holds or will
reach within `horizon` moves (directions from the trail channel), and otherwise moves towards the nearest gold.
Both games run without sticky actions (gymnax has none) and episodes are cut at gymnax's 1,000 steps. Uniformly
random play, and the policy with 10% random actions (DQN's training epsilon, gymnax only), are measured beside it.

    .venv/bin/python benchmarks/asterix_scripted_policy.py [--episodes 50] [--out DIR]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import RESULTS_DIR, finish, header, write_json  # noqa: E402

MOVES = {0: (0, 0), 1: (0, -1), 2: (-1, 0), 3: (0, 1), 4: (1, 0)}  # no-op, left, up, right, down: (dy, dx)
MAX_STEPS = 1000  # gymnax's Asterix ends episodes here; the MinAtar package does not
PLAYER, ENEMY, TRAIL, GOLD = range(4)  # the channels of both implementations


def _entities(frame):
    """(row, column, direction, is_gold) of each enemy and gold; the trail sits behind a moving entity."""
    found = []
    for channel in (ENEMY, GOLD):
        for y, x in zip(*np.nonzero(frame[:, :, channel])):
            behind_left = x >= 1 and frame[y, x - 1, TRAIL]
            behind_right = x <= 8 and frame[y, x + 1, TRAIL]
            found.append((y, x, 1 if behind_left else -1 if behind_right else 0, channel == GOLD))
    return found


def scripted_action(frame, horizon: int) -> int:
    py, px = np.argwhere(frame[:, :, PLAYER])[0]
    entities = _entities(frame)
    best, best_score = 0, -np.inf
    for action, (dy, dx) in MOVES.items():
        y, x = min(8, max(1, py + dy)), min(9, max(0, px + dx))
        danger = any(not gold and ey == y and (ex == x or (d != 0 and 0 <= (x - ex) * d <= horizon))
                     for ey, ex, d, gold in entities)
        gold_distances = [abs(ey - y) + abs(ex - x) for ey, ex, _, gold in entities if gold]
        score = -100.0 * danger - min(gold_distances, default=0) - 0.01 * (action != 0)
        if score > best_score:
            best, best_score = action, score
    return best


def _choose(frame, rng, horizon, epsilon):
    if horizon is None or rng.random() < epsilon:
        return int(rng.integers(len(MOVES)))
    return scripted_action(frame, horizon)


def play_gymnax(episodes, horizon, epsilon, seed):
    import gymnax
    import jax

    env, params = gymnax.make("Asterix-MinAtar")
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    rng, key, results = np.random.default_rng(seed), jax.random.PRNGKey(seed), []
    for _ in range(episodes):
        key, reset_key = jax.random.split(key)
        observation, state = reset(reset_key, params)
        total, length, done = 0.0, 0, False
        while not done:
            key, step_key = jax.random.split(key)
            action = _choose(np.asarray(observation) > 0.5, rng, horizon, epsilon)
            observation, state, reward, done, _ = step(step_key, state, action, params)
            total, length = total + float(reward), length + 1
        results.append((total, length))
    return results


def play_minatar(episodes, horizon, epsilon, seed):
    from minatar import Environment

    env = Environment("asterix", sticky_action_prob=0.0)
    env.env.random = np.random.RandomState(seed)  # the game's own spawn randomness
    rng, results = np.random.default_rng(seed), []
    for _ in range(episodes):
        env.reset()
        total, length, done = 0.0, 0, False
        while not done and length < MAX_STEPS:
            reward, done = env.act(_choose(env.state(), rng, horizon, epsilon))
            total, length = total + reward, length + 1
        results.append((total, length))
    return results


def _summary(results):
    returns, lengths = np.array(results).T
    return {"mean_return": round(float(returns.mean()), 3),
            "standard_error": round(float(returns.std() / np.sqrt(len(returns))), 3),
            "mean_length": round(float(lengths.mean()), 1), "episodes": len(returns)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    payload = header("asterix_scripted_policy", quick=False, seeds=[args.seed], packages=["gymnax", "minatar", "jax"])
    rows = []
    for label, horizon, epsilon, games in (("uniformly random", None, 0.0, ("minatar", "gymnax")),
                                           ("scripted, horizon 1", 1, 0.0, ("minatar", "gymnax")),
                                           ("scripted, horizon 2", 2, 0.0, ("minatar", "gymnax")),
                                           ("scripted, horizon 1, epsilon 0.1", 1, 0.1, ("gymnax",))):
        row = {"policy": label}
        for game in games:
            play = play_minatar if game == "minatar" else play_gymnax
            row[game] = _summary(play(args.episodes, horizon, epsilon, args.seed))
        rows.append(row)
        print(f"{label:34s} " + "  ".join(
            f"{game} {row[game]['mean_return']:6.2f} +- {row[game]['standard_error']:.2f} (length "
            f"{row[game]['mean_length']:.0f})" for game in games), flush=True)
    payload["rows"] = rows
    print("wrote", write_json("asterix_scripted_policy", finish(payload), args.out))


if __name__ == "__main__":
    main()
