"""VariableClient: update period, forced updates, names."""

import numpy as np
import pytest

from acmelike.variables import VariableClient


class CountingSource:
    def __init__(self):
        self.calls = 0

    def get_variables(self, names):
        self.calls += 1
        return [np.full((), self.calls, np.float32) for _ in names]


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
