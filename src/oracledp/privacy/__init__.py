"""The privacy core: guarantee types, noise primitives, composition, the ledger, accounting.

* :mod:`oracledp.privacy._guarantees`: :class:`PrivacyGuarantee`, carried by every release.
* :mod:`oracledp.privacy._noise`: every privacy-relevant random draw, each with its DP fact
  (``laplace_scale`` / ``laplace_guarantee``, ``gaussian_rho``, ``exponential_mechanism``...).
* :mod:`oracledp.privacy._composition`: basic, advanced and zCDP composition and conversions.
* :mod:`oracledp.privacy._ledger`: a run's spends and their composition into a guarantee.
* :mod:`oracledp.privacy._rdp`: the Renyi accountant of DP-SGD (with the replace-one step).

The mechanisms' own calibrations (OPDisc's sigma, OPSamp's lambda, RSPM's scale...) stay with
the mechanism and its proof; they draw through :mod:`~oracledp.privacy._noise`.
"""

from oracledp.privacy._composition import (
    advanced_composition,
    advanced_composition_k,
    basic_composition,
    gaussian_delta,
    pure_to_zcdp,
    rho_for_epsilon,
    zcdp_epsilon,
)
from oracledp.privacy._guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.privacy._ledger import Spend, compose, ledger_guarantee

__all__ = [
    "GuaranteeKind",
    "PrivacyGuarantee",
    "Spend",
    "advanced_composition",
    "advanced_composition_k",
    "basic_composition",
    "compose",
    "gaussian_delta",
    "ledger_guarantee",
    "pure_to_zcdp",
    "rho_for_epsilon",
    "zcdp_epsilon",
]
