"""acmelike: an Acme-style, layered framework for reinforcement-learning agents in JAX.

Importing this package imports nothing heavy. Layers are imported by name (`acmelike.networks`,
`acmelike.losses`, ...); only the Reverb backend (`acmelike.replay.reverb_tables`, `ReplayDataset`, the adders
on a `reverb.Client`) and `launch`'s Reverb paths touch Reverb/TensorFlow.
"""

__version__ = "0.1.0"
