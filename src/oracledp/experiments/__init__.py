"""Experiments: importable, tested modules behind the ``oracledp`` command line.

Each module has a ``Config`` dataclass and a ``run_*`` function returning plain
records (JSON-ready dicts), so the CLI only parses options and prints.
"""

from oracledp.experiments.demo import Config, run_demo, write_outputs

__all__ = ["Config", "run_demo", "write_outputs"]
