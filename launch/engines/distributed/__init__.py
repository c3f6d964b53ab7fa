"""Distributed engines: one program graph (`graph`, `nodes`), run by Launchpad or Ray (`launcher.run_distributed`)."""
