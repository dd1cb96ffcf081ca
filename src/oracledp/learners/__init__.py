"""Private learners built on optimization oracles."""

from oracledp.learners.opdisc import OPDiscResult, opdisc, opdisc_guarantee, opdisc_sigma
from oracledp.learners.rspm import RSPMResult, rspm, rspm_guarantee, rspm_space

__all__ = [
    "OPDiscResult",
    "RSPMResult",
    "opdisc",
    "opdisc_guarantee",
    "opdisc_sigma",
    "rspm",
    "rspm_guarantee",
    "rspm_space",
]
