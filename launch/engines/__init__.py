"""What runs an experiment: one process, offline, Anakin (fully jitted), and distributed programs."""
