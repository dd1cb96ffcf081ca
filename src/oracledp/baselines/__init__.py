"""Baselines the oracle-based learners are compared with.

* :mod:`oracledp.baselines._dpsgd`: private logistic regression by DP-SGD
  (Bassily et al. 2014; Abadi et al. 2016), the baseline of Neel, Roth,
  Vietri, Wu (ICML 2020, Section 5), accounted with Google's ``dp_accounting``.
"""

from oracledp.baselines._dpsgd import (
    DEFAULT_PAPER_GRID,
    DPSGDLogisticRegression,
    DPSGDResult,
    calibrate_noise_multiplier,
    dpsgd_epsilon,
    dpsgd_logistic,
    dpsgd_paper_protocol,
)

__all__ = [
    "DEFAULT_PAPER_GRID",
    "DPSGDLogisticRegression",
    "DPSGDResult",
    "calibrate_noise_multiplier",
    "dpsgd_epsilon",
    "dpsgd_logistic",
    "dpsgd_paper_protocol",
]
