"""Adders: pass what an actor observes to replay.

`Adder` is the interface; the Reverb adders (`NStepTransitionAdder`, `SequenceAdder`, `EpisodeAdder`) write
through a `reverb.Client`'s TrajectoryWriter. They are imported lazily, so `import acmelike.adders` does not
import Reverb or TensorFlow. A step they cannot write raises `InvalidStepError` (a ValueError) before anything of
it is written.
"""

import importlib

from acmelike.adders.base import Adder
from acmelike.adders.validation import InvalidStepError

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


__all__ = ["Adder", "InvalidStepError", *_LAZY]
