"""`python -m flexdoctor` and the `flexdoctor` command.

`import torch` in the target interpreter starts first (cliutil.prefetch_torch: no typer, no
probes but the torch one), then the command line loads while torch imports.
"""

import sys


def main() -> None:
    from .cliutil import prefetch_torch

    prefetch_torch(sys.argv[1:])
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
