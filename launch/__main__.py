"""`python -m launch ...`: train an agent (the command line lives in `launch.cli.train`)."""

import sys

from launch.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
