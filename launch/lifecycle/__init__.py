"""A run's life on disk: its directory, checkpoints (one process or per node), snapshots and logs."""
