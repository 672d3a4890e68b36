"""``python -m iq_client``: the command-line interface (see :mod:`iq_client.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
