"""Private learners built on optimization oracles.

* :func:`opdisc`, :func:`rspm`, :func:`opsamp`: halfspace learners (ICML 2020; FOCS 2019).
* :func:`gaussian_rspm`: RSPM with Gaussian weights (FOCS 2019 Theorem 7's mechanism) and the
  calibration proven in ``docs/proofs/gaussian-rspm-calibration.md``.
* :func:`prsma` (robust privacy for any oracle behaviour, FOCS 2019 Theorem 8), its exact
  worst-case cost :func:`prsma_cost`, and :class:`ClassRSPMBase`, the base algorithm that
  runs Laplace RSPM over a query class inside PRSMA.
* :func:`ftpl` (Follow the Private Leader, FOCS 2019 Section V), the non-private
  :func:`follow_the_leader`, the privacy of T plays :func:`ftpl_privacy` and the explicit
  regret bound :func:`ftpl_regret_bound`.

PRSMA and FTPL (and what they import) load on first use.
"""

from oracledp._lazy import by_module, lazy_attributes
from oracledp.learners._gaussian_rspm import (
    GaussianRSPMResult,
    gaussian_rspm,
    gaussian_rspm_calibration,
    gaussian_rspm_guarantee,
)
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
    "ClassRSPMBase",
    "GaussianRSPMResult",
    "OPDiscResult",
    "OPSampResult",
    "RSPMResult",
    "follow_the_leader",
    "ftpl",
    "ftpl_privacy",
    "ftpl_regret_bound",
    "gaussian_rspm",
    "gaussian_rspm_calibration",
    "gaussian_rspm_guarantee",
    "opdisc",
    "opdisc_guarantee",
    "opdisc_sigma",
    "opsamp",
    "opsamp_guarantee",
    "opsamp_lambda",
    "opsamp_parameters",
    "opsamp_sensitivity",
    "prsma",
    "prsma_cost",
    "rspm",
    "rspm_guarantee",
    "rspm_space",
]

# module -> the names it defines, each imported on first access (PEP 562)
_LAZY = by_module({
    "oracledp.learners._prsma": ("prsma", "prsma_cost"),
    "oracledp.learners._prsma_bases": ("ClassRSPMBase",),
    "oracledp.learners._ftpl": ("ftpl", "follow_the_leader", "ftpl_privacy", "ftpl_regret_bound"),
})
__getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)
