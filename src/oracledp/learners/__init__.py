"""Private learners built on optimization oracles."""

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
