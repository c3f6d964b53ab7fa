"""Replay throughput: items/s into Reverb through NStepTransitionAdder, samples/s out through our dataset iterator.

One in-process `reverb.Server`, uniform tables with the DQN item signature (`NStepTransitionAdder.signature`).
Data: CartPole-v1 episodes under a uniformly random policy (~22 steps each), collected once through the
single-precision gymnasium adapter, then replayed from memory to both sides.

* Writing (goal >= 0.8). Ours: `NStepTransitionAdder(n_step=3, discount=0.99)` with its defaults (at most 5
  items in flight), which checks every step against the table's signature before writing it. Baseline: the raw
  `TrajectoryWriter` writing one item of the same structure per step with the fewest calls: one `append` of
  the whole step, one `create_item`, `flush(block_until_num_items=5)` (the same bound), `end_episode()` at each
  episode end. The raw items are 1-step transitions: the n-step sums are part of
  what the adder adds.
* Sampling (goal >= 0.8). Ours: `acmelike.replay.make_dataset_iterator(batch_size=64)` (numpy `ReplaySample`
  batches). Baseline: one `reverb.TrajectoryDataset.from_table_signature(...)` batched by tf.data, as numpy.

    python benchmarks/replay_throughput.py [--quick] [--out DIR]
"""

import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import launch  # noqa: E402,F401  (orders the JAX/TensorFlow imports)
import numpy as np  # noqa: E402
import reverb  # noqa: E402

from acmelike.adders.transition import NStepTransitionAdder  # noqa: E402
from acmelike.replay import make_dataset_iterator  # noqa: E402
from acmelike.specs import make_environment_spec  # noqa: E402
from acmelike.types import Transition  # noqa: E402
from acmelike.wrappers import make_gymnasium_environment  # noqa: E402
from benchmarks.common import finish, header, paired_rates, print_rows, result_row, write_json  # noqa: E402

ENV, SEED, N_STEP, DISCOUNT, BATCH, IN_FLIGHT, GOAL = "CartPole-v1", 0, 3, 0.99, 64, 5, 0.8


def collect_episodes(num_steps: int):
    """[(first_timestep, [(action, timestep), ...]), ...] with at least `num_steps` actions in all."""
    environment = make_gymnasium_environment(ENV, seed=SEED)
    rng = np.random.default_rng(SEED)
    episodes, total = [], 0
    while total < num_steps:
        first, steps = environment.reset(), []
        timestep = first
        while not timestep.last():
            action = np.int32(rng.integers(2))
            timestep = environment.step(action)
            steps.append((action, timestep))
        episodes.append((first, steps))
        total += len(steps)
    return episodes, make_environment_spec(environment)


def table(name: str, signature) -> reverb.Table:
    return reverb.Table(
        name=name,
        sampler=reverb.selectors.Uniform(),
        remover=reverb.selectors.Fifo(),
        max_size=1_000_000,
        rate_limiter=reverb.rate_limiters.MinSize(1),
        signature=signature,
    )


def write_with_adder(client, table_name, episodes) -> int:
    adder = NStepTransitionAdder(client=client, table_names=table_name, n_step=N_STEP, discount=DISCOUNT)
    items = 0
    for first, steps in episodes:
        adder.add_first(first)
        for action, timestep in steps:
            adder.add(action, timestep)
        items += len(steps)  # one item per step; the episode end flushed them all
    adder.close()
    return items


def write_raw(client, table_name, episodes) -> int:
    writer = client.trajectory_writer(num_keep_alive_refs=2)
    items = 0
    for first, steps in episodes:
        observation = first.observation
        for t, (action, timestep) in enumerate(steps):
            # Row t: o_t, a_t and the reward/discount that followed; the item for t - 1 can now reference o_t.
            writer.append(
                {"observation": observation, "action": action, "reward": timestep.reward, "discount": timestep.discount}
            )
            observation = timestep.observation
            if t > 0:
                create(writer, table_name)
        writer.append({"observation": observation})  # the final observation's row closes the last item
        create(writer, table_name)
        writer.end_episode()
        items += len(steps)
    writer.close()
    return items


def create(writer, table_name):
    history = writer.history
    writer.create_item(
        table_name,
        1.0,
        Transition(
            observation=history["observation"][-2],
            action=history["action"][-2],
            reward=history["reward"][-2],
            discount=history["discount"][-2],
            next_observation=history["observation"][-1],
            extras=(),
        ),
    )
    writer.flush(block_until_num_items=IN_FLIGHT)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    write_steps, sample_batches, repeats = (4_000, 100, 5) if args.quick else (20_000, 400, 9)
    payload = header("replay_throughput", quick=args.quick, seeds=[SEED])
    episodes, spec = collect_episodes(write_steps)
    signature = NStepTransitionAdder.signature(spec)
    server = reverb.Server([table("ours", signature), table("raw", signature), table("sample", signature)], port=None)
    try:
        client = reverb.Client(f"localhost:{server.port}")
        write_raw(client, "raw", episodes[:5]), write_with_adder(client, "ours", episodes[:5])  # warm up
        writing = paired_rates(
            lambda: write_with_adder(client, "ours", episodes), lambda: write_raw(client, "raw", episodes), repeats
        )

        # Sampling: a table of 10k items, sampled uniformly (never removed), both sides from the same table.
        write_raw(client, "sample", list(itertools.islice(itertools.cycle(episodes), 500)))
        address = f"localhost:{server.port}"
        ours_iterator = make_dataset_iterator(client=client, table="sample", batch_size=BATCH)
        raw_dataset = reverb.TrajectoryDataset.from_table_signature(
            server_address=address, table="sample", max_in_flight_samples_per_worker=2 * BATCH
        ).batch(BATCH, drop_remainder=True)
        raw_iterator = raw_dataset.as_numpy_iterator()
        next(ours_iterator), next(raw_iterator)  # build the pipelines outside the timing

        def drain(iterator):
            for _ in range(sample_batches):
                next(iterator)
            return sample_batches * BATCH

        sampling = paired_rates(lambda: drain(ours_iterator), lambda: drain(raw_iterator), repeats)
        sizes = {name: info.current_size for name, info in client.server_info().items()}
    finally:
        server.stop()

    payload.update(
        write_steps_per_repeat=sum(len(steps) for _, steps in episodes),
        episodes_per_repeat=len(episodes),
        sample_batches_per_repeat=sample_batches,
        batch_size=BATCH,
        n_step=N_STEP,
        max_in_flight_items=IN_FLIGHT,
        table_sizes_at_end=sizes,
        compile_seconds=0.0,  # no JAX here; tf.data pipelines are built before the timing
        writing=writing,
        sampling=sampling,
        rows=[
            result_row(
                "Replay write (NStepTransitionAdder -> Reverb)",
                round(writing["ours_per_second"]),
                round(writing["baseline_per_second"]),
                "items/s",
                GOAL,
                ratio=writing["ratio"],
                ours_label="NStepTransitionAdder (n=3)",
                baseline_label="raw TrajectoryWriter",
            ),
            result_row(
                "Replay sample (dataset iterator, batch 64)",
                round(sampling["ours_per_second"]),
                round(sampling["baseline_per_second"]),
                "samples/s",
                GOAL,
                ratio=sampling["ratio"],
                ours_label="make_dataset_iterator",
                baseline_label="raw reverb.TrajectoryDataset",
            ),
        ],
    )
    path = write_json("replay_throughput", finish(payload), *([args.out] if args.out else []))
    print_rows(payload["rows"])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
