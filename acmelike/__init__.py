"""acmelike: an Acme-style, layered framework for reinforcement-learning agents in JAX.

Importing this package imports nothing heavy. Layers are imported by name (`acmelike.networks`,
`acmelike.losses`, ...); only `acmelike.replay`, the Reverb adders and `launch` touch Reverb/TensorFlow.
"""

__version__ = "0.1.0"
