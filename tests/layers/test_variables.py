"""VariableClient: update period, forced updates, names."""

import pytest
from fakes import FakeVariableSource as CountingSource

from acmelike.variables import VariableClient


def test_fetches_every_update_period_calls():
    source = CountingSource()
    client = VariableClient(source, "policy", update_period=3)
    assert float(client.params) == 1  # first use fetches
    for _ in range(2):
        client.update()
    assert source.calls == 1
    client.update()  # third call since the fetch
    assert source.calls == 2 and float(client.params) == 2
    client.update(wait=True)
    assert source.calls == 3


def test_several_names_and_bad_period():
    client = VariableClient(CountingSource(), ["policy", "critic"], update_period=1)
    assert len(client.params) == 2
    with pytest.raises(ValueError, match="update_period"):
        VariableClient(CountingSource(), "policy", update_period=0)


def test_asynchronous_fetch_lands_at_a_later_update():
    import threading

    release = threading.Event()

    class SlowSource(CountingSource):
        def get_variables(self, names):
            if self.calls >= 1:
                release.wait(5)
            return super().get_variables(names)

    source = SlowSource()
    client = VariableClient(source, "policy", update_period=1, asynchronous=True)
    assert float(client.params) == 1
    client.update()  # starts a fetch that blocks until released; acting goes on with the old value
    client.update()
    assert float(client.params) == 1
    release.set()
    for _ in range(100):
        client.update()
        if float(client.params) == 2:
            break
        threading.Event().wait(0.01)
    assert float(client.params) == 2


def test_a_local_learners_device_arrays_are_served_as_they_are_and_numpy_is_put_on_the_device():
    import jax
    import jax.numpy as jnp
    import numpy as np

    from acmelike.variables import VariableClient

    class Source:
        def __init__(self, params):
            self.params = params

        def get_variables(self, names):
            return [self.params]

    on_device = {"w": jnp.ones((3, 3)), "b": jnp.zeros(3)}
    client = VariableClient(Source(on_device), "policy")
    assert client.params["w"] is on_device["w"]  # no copy per fetch for a learner in this process
    from_afar = VariableClient(Source({"w": np.ones((3, 3), np.float32)}), "policy")
    assert isinstance(from_afar.params["w"], jax.Array)  # fetched once onto the device, not per policy call
