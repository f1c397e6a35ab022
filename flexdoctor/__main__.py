"""`python -m flexdoctor` and the `flexdoctor` command.

`import torch` in the target interpreter starts first (flexdoctor/_prefetch.py, standard library
only), then the command line (typer and the rest) loads while torch imports.
"""

import sys


def main() -> None:
    from ._prefetch import early

    early(sys.argv[1:])
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
