"""Deprecated path: the query classes are :mod:`oracledp.query_classes`.

(``classes`` read like the estimators' ``classes_``, the label set.)  This package re-exports
:mod:`oracledp.query_classes` and its submodules with a FutureWarning, so old imports and old
pickles keep working.
"""

import importlib
import sys
import warnings

from oracledp.query_classes import *  # noqa: F403
from oracledp.query_classes import __all__  # noqa: F401

warnings.warn("oracledp.classes is deprecated: import from oracledp.query_classes",
              FutureWarning, stacklevel=2)

for _name in ("base", "boolean", "decision_lists", "halfspaces", "mip"):
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"oracledp.query_classes.{_name}")
