"""``oracledp`` (the console script) and ``python -m oracledp``: the command line.

The command line needs the ``cli`` extra (typer, rich, matplotlib); the library does not.
Without the extra this prints one line saying how to install it, instead of a traceback.
"""

from __future__ import annotations

import importlib.util
import sys

CLI_MODULES = ("typer", "rich", "matplotlib")


def main() -> None:
    """Run the ``oracledp`` command line (:mod:`oracledp._cli`)."""
    missing = [name for name in CLI_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        sys.exit(f"oracledp: the command line needs the cli extra ({', '.join(missing)} not "
                 "installed): pip install 'oracledp[cli]'")
    from oracledp._cli import app

    app()


if __name__ == "__main__":
    main()
