"""``python -m ggufcheck ...`` is the ``ggufcheck`` command: the same code, arguments, output
and exit status."""

import os
import sys

from . import _ggufcheck


def main() -> None:
    # The command writes to the process's descriptors itself and closes standard output when it
    # ends: Python's buffers go first, and the process ends without touching them again.
    sys.stdout.flush()
    sys.stderr.flush()
    status = _ggufcheck.run_cli(["ggufcheck", *sys.argv[1:]])
    os._exit(status)


if __name__ == "__main__":
    main()
