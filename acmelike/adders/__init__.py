"""Adders: pass what an actor observes to replay.

`Adder` is the protocol; the Reverb adders (`NStepTransitionAdder`, `SequenceAdder`, `EpisodeAdder`) write
through a `reverb.Client`'s TrajectoryWriter. They are imported lazily, so `import acmelike.adders` does not
import Reverb or TensorFlow.
"""

import importlib

from acmelike.adders.base import Adder

_LAZY = {
    "NStepTransitionAdder": "acmelike.adders.transition",
    "SequenceAdder": "acmelike.adders.sequence",
    "EndBehavior": "acmelike.adders.sequence",
    "EpisodeAdder": "acmelike.adders.episode",
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'acmelike.adders' has no attribute {name!r}")


__all__ = ["Adder", *_LAZY]
