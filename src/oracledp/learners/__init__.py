"""Private learners built on optimization oracles."""

import sys as _sys

from oracledp.learners import _opdisc as _opdisc_module
from oracledp.learners import _opsamp as _opsamp_module
from oracledp.learners import _rspm as _rspm_module
from oracledp.learners._opdisc import OPDiscResult, opdisc, opdisc_guarantee, opdisc_sigma
from oracledp.learners._opsamp import (
    OPSampResult,
    opsamp,
    opsamp_guarantee,
    opsamp_lambda,
    opsamp_parameters,
    opsamp_sensitivity,
)
from oracledp.learners._rspm import RSPMResult, rspm, rspm_guarantee, rspm_space

__all__ = [
    "OPDiscResult",
    "OPSampResult",
    "RSPMResult",
    "opdisc",
    "opdisc_guarantee",
    "opdisc_sigma",
    "opsamp",
    "opsamp_guarantee",
    "opsamp_lambda",
    "opsamp_parameters",
    "opsamp_sensitivity",
    "rspm",
    "rspm_guarantee",
    "rspm_space",
]

# Pickles made before the implementation modules became private name them by their former
# paths (oracledp.learners.opdisc, ...): keep those importable for unpickling.  The package
# attributes of the same names are the functions.
_sys.modules.update({f"{__name__}.{_old}": _mod for _old, _mod in (
    ("opdisc", _opdisc_module), ("opsamp", _opsamp_module), ("rspm", _rspm_module))})
