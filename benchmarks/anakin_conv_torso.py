"""The MinAtar torso's conv vmapped over seeds, as the Anakin runner trains it: `MinAtarTorso` (a matrix product
over 3x3 patches) against the same network written with flax's `nn.Conv` (the baseline, measured in this run).

Each side computes the gradient of a DQN-sized loss (the torso, then a linear head of 6 actions) on a batch of 32
MinAtar frames (10x10x4), one set of parameters per seed, vmapped over 5 seeds (quick: 2), `STEPS` gradients per
jitted call. Under vmap, `nn.Conv` with one kernel per seed becomes a grouped convolution, which CPU XLA runs
slowly; the rate is gradients per second, all seeds together.

    .venv/bin/python benchmarks/anakin_conv_torso.py [--quick] [--out DIR]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import run_seed_pair  # noqa: E402

BATCH, FRAME, ACTIONS, STEPS = 32, (10, 10, 4), 6, 50


def make_loops(num_seeds: int):
    """Returns (ours, baseline): callables that run STEPS vmapped gradient computations and return STEPS."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    from acmelike.networks import MinAtarTorso

    class WithFlaxConv(nn.Module):  # the baseline: the torso as the MinAtar paper's network reads in flax
        @nn.compact
        def __call__(self, images):
            x = nn.relu(nn.Conv(16, (3, 3), padding="VALID")(images.astype(jnp.float32)))
            return nn.relu(nn.Dense(128)(jnp.reshape(x, (x.shape[0], -1))))

    frames = jax.random.bernoulli(jax.random.PRNGKey(0), 0.1, (BATCH,) + FRAME)

    def make(torso):
        network = nn.Sequential([torso, nn.Dense(ACTIONS)])
        params = jax.vmap(network.init, (0, None))(jax.random.split(jax.random.PRNGKey(1), num_seeds), frames)

        def loss(params, frames):
            return jnp.mean(jnp.square(network.apply(params, frames)))

        def one_seed(params):
            def body(params, _):
                grads = jax.grad(loss)(params, frames)
                return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads), None

            return jax.lax.scan(body, params, None, length=STEPS)[0]

        loop = jax.jit(jax.vmap(one_seed))
        box = {"params": params}

        def run() -> int:
            box["params"] = jax.block_until_ready(loop(box["params"]))
            return STEPS

        run()  # compile
        return run

    return make(MinAtarTorso()), make(WithFlaxConv())


def main(argv=None):
    run_seed_pair(
        "anakin_conv_torso", __doc__.splitlines()[0], make_loops, packages=["jax", "jaxlib", "flax", "numpy"],
        config={"batch": BATCH, "frame": list(FRAME), "actions": ACTIONS, "steps_per_call": STEPS},
        benchmark="anakin_conv_torso: MinAtar torso gradients, vmapped over seeds", unit="gradients/s",
        ours_label="MinAtarTorso (patches x kernel)", baseline_label="flax nn.Conv (grouped conv under vmap)",
        note=f"{{num_seeds}} seeds, batch {BATCH} of 10x10x4 frames", argv=argv,
    )


if __name__ == "__main__":
    main()
