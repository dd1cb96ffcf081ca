"""The privacy core: guarantee types, noise primitives, composition, the ledger, accounting.

* :mod:`oracledp.privacy._guarantees`: :class:`PrivacyGuarantee`, carried by every release
  (built by :meth:`~PrivacyGuarantee.pure`, :meth:`~PrivacyGuarantee.approximate`,
  :meth:`~PrivacyGuarantee.ex_post`, or from a ledger by :func:`ledger_guarantee`).
* :mod:`oracledp.privacy._noise`: every privacy-relevant random draw, each with its DP fact:
  Laplace (:func:`laplace_scale`, :func:`laplace_guarantee`), Gaussian (:func:`gaussian_rho`,
  :func:`gaussian_multiplier_rho`, :func:`gaussian_zcdp_sigma`), exponential mechanism
  (:func:`exponential_mechanism_guarantee`, :func:`exponential_mechanism_rho`,
  :func:`select_measure_rho`).  The draws themselves are for the mechanisms of this package.
* :mod:`oracledp.privacy._composition`: basic and advanced composition and the zCDP
  conversions (:func:`pure_to_zcdp`; :func:`zcdp_rho` for ``(epsilon, delta) -> rho``,
  :func:`zcdp_epsilon` for ``rho -> epsilon``).
* :mod:`oracledp.privacy._ledger`: :class:`Spend`, the one ledger entry of every iterative
  mechanism, :func:`compose` and :func:`ledger_guarantee`.
* :mod:`oracledp.privacy._rdp`: the Renyi accountant of DP-SGD (with the replace-one step).
* :mod:`oracledp.privacy._group`: :func:`group_privacy`, the guarantee for a person who
  contributes up to ``k`` records.
* :mod:`oracledp.privacy._budget`: :class:`BudgetAccountant`, one budget for a session of
  releases: every estimator's and synthesizer's ``fit`` reports to the active accountant
  (``with BudgetAccountant(...) as acct:``, or :func:`set_default_accountant`), which refuses
  a fit beyond the budget before any noise and charges every release (:class:`Charge`); how
  a fit reports is in :mod:`oracledp.privacy._accountant`.
* :mod:`oracledp.privacy._budget_file`: :func:`open_budget_file`, an accountant kept in a
  JSON file (its saved form, :meth:`BudgetAccountant.to_dict`), locked while in use: the
  ledger of ``oracledp fit --budget``.

The mechanisms' own calibrations (OPDisc's sigma, OPSamp's lambda, RSPM's scale...) stay with
the mechanism and its proof; they draw through :mod:`~oracledp.privacy._noise` and account
with the facts above.
"""

from oracledp.privacy._budget import (
    BudgetAccountant,
    Charge,
    active_accountant,
    set_default_accountant,
)
from oracledp.privacy._budget_file import BudgetFileError, open_budget_file, read_budget_file
from oracledp.privacy._composition import (
    advanced_composition,
    advanced_composition_k,
    basic_composition,
    gaussian_delta,
    pure_to_zcdp,
    zcdp_epsilon,
    zcdp_rho,
)
from oracledp.privacy._group import group_privacy
from oracledp.privacy._guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.privacy._ledger import COMPOSITIONS, Spend, compose, ledger_guarantee
from oracledp.privacy._noise import (
    exponential_mechanism_guarantee,
    exponential_mechanism_rho,
    gaussian_multiplier_rho,
    gaussian_rho,
    gaussian_zcdp_sigma,
    laplace_guarantee,
    laplace_scale,
    select_measure_rho,
)

__all__ = [
    "COMPOSITIONS",
    "BudgetAccountant",
    "BudgetFileError",
    "Charge",
    "GuaranteeKind",
    "PrivacyGuarantee",
    "Spend",
    "active_accountant",
    "advanced_composition",
    "advanced_composition_k",
    "basic_composition",
    "compose",
    "exponential_mechanism_guarantee",
    "exponential_mechanism_rho",
    "gaussian_delta",
    "gaussian_multiplier_rho",
    "gaussian_rho",
    "gaussian_zcdp_sigma",
    "group_privacy",
    "laplace_guarantee",
    "laplace_scale",
    "ledger_guarantee",
    "open_budget_file",
    "pure_to_zcdp",
    "read_budget_file",
    "select_measure_rho",
    "set_default_accountant",
    "zcdp_epsilon",
    "zcdp_rho",
]
