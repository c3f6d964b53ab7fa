"""The command line: `python -m launch` (train), `python -m launch.cli.evaluate`, `python -m launch.cli.record`."""
