"""FeedForwardNetwork: a network as two pure functions, which is all learners and actors need."""

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass(frozen=True)
class FeedForwardNetwork:
    """A pair of pure functions.

    init(key) -> params
    apply(params, *inputs) -> outputs    (inputs carry a leading batch dimension)
    """

    init: Callable[..., Any]
    apply: Callable[..., Any]
