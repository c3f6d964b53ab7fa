"""Where an agent's computation runs: the learner on the accelerator, actors' policies on the CPU, and a single
process's policy wherever a measurement at start says one step is faster.

    placement = plan()                                   # from this process's devices
    learner_device, actor_device = placement.learner, placement.actors
    source = PlacedVariableSource(learner, actor_device)  # actors fetch parameters committed to their device,
                                                         # so their jitted policy runs there (JAX runs a
                                                         # computation where its committed arguments live)

The rules, and why:
- **Learner: the first device of JAX's default backend** (a GPU or TPU when one is present, else the CPU). Its
  SGD steps on a batch are the work an accelerator exists for.
- **Central inference: the learner's device.** Its whole point (SEED RL) is one large batched policy step on the
  accelerator instead of many small ones on CPUs.
- **Actors and the evaluator: the last CPU device.** One environment's policy step is a few small matrix products;
  on an accelerator it would also pay a host-to-device copy of each observation and a device-to-host copy of each
  action, and every actor process would hold its own accelerator context and memory. (With several CPU devices,
  as `XLA_FLAGS=--xla_force_host_platform_device_count=2` makes, the last one is not the learner's.) In a
  distributed program each node process that runs on the CPU is also restricted to it (`restrict_process`), so it
  never initialises the accelerator at all; the two that share it, learner and inference, do not preallocate its
  memory (`process_environment`), so that both fit.
- **A single process's policy: measured** (`policy_device`). There the policy and the learner share one process:
  on a CPU-only machine there is one candidate and nothing is measured; with an accelerator, the policy step is
  timed on both, transfers included, at the run's own batch (`--num-envs`), and the faster wins. The crossover
  depends on the network, the batch and the machine, so it is measured rather than guessed.
"""

import dataclasses
import os
import statistics
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence

import jax
import numpy as np

from acmelike import core

# The node groups of a distributed program whose computation runs on the accelerator (`Placement.learner`).
ACCELERATED_GROUPS = ("learner", "inference")


def device_name(device: jax.Device) -> str:
    """`cpu:0`, `cuda:0`, ...: the platform and id, the same on every JAX version."""
    return f"{device.platform}:{device.id}"


@dataclasses.dataclass(frozen=True)
class Placement:
    """The devices of one process's roles (see the module docstring for the rules)."""

    learner: jax.Device
    actors: jax.Device
    inference: jax.Device

    def for_group(self, group: str) -> jax.Device:
        """The device of a distributed program's node group (learner, inference; every other runs on the CPU)."""
        if group == "learner":
            return self.learner
        if group == "inference":
            return self.inference
        return self.actors


def plan(devices: Optional[Sequence[jax.Device]] = None) -> Placement:
    """The placement over `devices` (default: `jax.devices()`, the default backend's)."""
    devices = list(devices if devices is not None else jax.devices())
    cpus = [device for device in devices if device.platform == "cpu"] or jax.devices("cpu")
    return Placement(learner=devices[0], actors=cpus[-1], inference=devices[0])


def process_environment(group: str) -> Dict[str, str]:
    """Environment variables for a node process of `group`, set before it starts (Launchpad's `local_mp`): a group
    that runs on the CPU sees only the CPU; learner and inference do not preallocate the accelerator's memory
    (JAX takes 75% of it at start by default, and they share it)."""
    if group in ACCELERATED_GROUPS:
        return {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    return {"JAX_PLATFORMS": "cpu"}


def restrict_process(group: str) -> None:
    """`process_environment` for a process that is already running (a Ray actor's), before JAX starts a backend:
    JAX reads these settings when its first backend starts. A process whose backends have started (it ran a JAX
    computation already) keeps them."""
    from jax._src import xla_bridge  # noqa: PLC0415 - the one place that says whether backends have started

    if xla_bridge.backends_are_initialized():
        return
    settings = process_environment(group)
    os.environ.update({name: value for name, value in settings.items() if name != "JAX_PLATFORMS"})
    if "JAX_PLATFORMS" in settings:
        jax.config.update("jax_platforms", settings["JAX_PLATFORMS"])


class PlacedVariableSource(core.VariableSource):
    """A variable source whose values arrive committed to `device`, so the policy that uses them runs there.

    Args:
      source: the learner (in this process) or a client of its node.
      device: where the values go.
    """

    def __init__(self, source: core.VariableSource, device: jax.Device):
        self._source = source
        self.device = device

    def get_variables(self, names: Sequence[str]) -> List[Any]:
        return jax.device_put(self._source.get_variables(names), self.device)


@dataclasses.dataclass(frozen=True)
class PolicyTiming:
    """`policy_device`'s measurement: milliseconds per policy step on each candidate device, and the choice."""

    device: jax.Device
    ms_per_step: Dict[str, float]

    def describe(self, num_envs: int) -> str:
        if len(self.ms_per_step) < 2:
            return f"the policy runs on {device_name(self.device)} (the only device)"
        times = ", ".join(f"{name} {ms:.3f} ms" for name, ms in self.ms_per_step.items())
        return (f"the policy runs on {device_name(self.device)}: one step of {num_envs} environment(s), transfers "
                f"included, took {times} (median, measured at start)")


def policy_device(actor_core, params, observation_spec, num_envs: int, candidates: Iterable[jax.Device],
                  key: jax.Array, calls: int = 30) -> PolicyTiming:
    """The candidate device on which one batched policy step (`num_envs` observations in, actions out to the
    host) is fastest, timed over `calls` steps after compilation; a single candidate is returned unmeasured.

    Args:
      actor_core: the policy (`ActorCore`); its state is initialised from `key` for the measurement only.
      params: the policy's parameters (any device; copied to each candidate).
      observation_spec: one environment's observation spec (a nest of `dm_env` specs): the measurement steps on
        zeros of it.
      num_envs: the actor's batch.
      candidates: the devices to choose from (duplicates count once).
    """
    unique = list(dict.fromkeys(candidates))
    if len(unique) == 1:
        return PolicyTiming(unique[0], {})
    observations = jax.tree_util.tree_map(
        lambda spec: np.zeros((num_envs,) + tuple(spec.shape), spec.dtype), observation_spec)
    step = jax.jit(jax.vmap(actor_core.select_action, in_axes=(None, 0, 0)))  # one policy call for the batch
    timings: Dict[str, float] = {}
    for device in unique:
        on_device = jax.device_put(params, device)
        state = jax.device_put(jax.vmap(actor_core.init)(jax.random.split(key, num_envs)), device)
        timings[device_name(device)] = _median_ms(step, on_device, observations, state, calls)
    fastest = min(unique, key=lambda device: timings[device_name(device)])
    return PolicyTiming(fastest, timings)


def _median_ms(step, params, observations, state, calls: int) -> float:
    times: List[float] = []
    for call in range(calls + 3):  # the first calls compile and warm up
        start = time.perf_counter()
        actions, state = step(params, observations, state)
        jax.tree_util.tree_map(np.asarray, actions)  # the actions reach the host, as an environment needs them
        if call >= 3:
            times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


__all__ = ["ACCELERATED_GROUPS", "Placement", "PlacedVariableSource", "PolicyTiming", "device_name", "plan",
           "policy_device", "process_environment", "restrict_process"]
