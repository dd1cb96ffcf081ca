"""Private learners built on optimization oracles."""

from oracledp.learners.opdisc import OPDiscResult, opdisc, opdisc_guarantee, opdisc_sigma

__all__ = ["OPDiscResult", "opdisc", "opdisc_guarantee", "opdisc_sigma"]
