"""The privacy ledger: what each step of a mechanism spent, and their composition.

A ledger is a sequence of :class:`Spend` records, the one ledger type of oracledp: OracleQuery
(one per round, three per round for its RSPM player), OracleQueryPGM (one per selection and
per measurement), MST and AIM (one per selection or group of measurements) all record their
steps as :class:`Spend`.  A step is ``epsilon``-DP (pure), ``(epsilon, delta)``-DP, or
``rho``-zCDP; it carries its round and what it released (a selected query, a measured
table's attributes), which the mechanism may publish with its ledger.

:func:`compose` is the one function that turns a ledger into the ``(epsilon, delta)`` of the
whole run (the formulas are in :mod:`oracledp.privacy._composition`), and
:func:`ledger_guarantee` the one that turns it into the
:class:`~oracledp.privacy._guarantees.PrivacyGuarantee` the run releases, after checking that
the composition stays within the run's budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

from oracledp.privacy._composition import (
    advanced_composition,
    basic_composition,
    pure_to_zcdp,
    zcdp_epsilon,
)
from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = ["COMPOSITIONS", "Spend", "compose", "ledger_guarantee"]

COMPOSITIONS = ("basic", "zcdp", "advanced")


@dataclass(frozen=True)
class Spend:
    """One ledger entry: ``mechanism`` spent ``(epsilon, delta)``-DP, or ``zcdp``-zCDP.

    Attributes
    ----------
    mechanism:
        What ran (a label for humans, e.g. ``"Gaussian mechanism (marginal table)"``).
    epsilon, delta:
        The step's ``(epsilon, delta)``-DP loss; ``delta = 0`` is pure DP.  A zCDP step
        leaves ``epsilon = inf``.
    zcdp:
        The step's zCDP ``rho`` when it is accounted in zCDP (a Gaussian measurement, an
        exponential mechanism accounted by its bounded range), else None.
    round:
        The round of an iterative mechanism (0 for what happens before the first round).
    released:
        What the step released, as indices in the mechanism's own terms (OracleQuery: the
        selected query's index in ``Q ∪ ¬Q``; OracleQueryPGM: the measured table's
        attributes); empty when it released none (a selection recorded with its measurement,
        a PRSMA round that returned FAIL).

    :attr:`rho` is the step's zCDP: ``zcdp``, or ``epsilon^2 / 2`` for a pure step
    (Bun-Steinke 2016, Prop. 1.4).

    >>> Spend("Laplace", epsilon=0.2).rho
    0.020000000000000004
    >>> Spend("Gaussian", zcdp=0.5, round=3, released=(0, 2)).rho
    0.5
    """

    mechanism: str
    epsilon: float = math.inf
    delta: float = 0.0
    zcdp: float | None = None
    _: KW_ONLY
    round: int = 0
    released: tuple[int, ...] = ()

    @property
    def rho(self) -> float:
        """The step's zCDP ``rho`` (ValueError for an ``(epsilon, delta > 0)`` step)."""
        if self.zcdp is not None:
            return self.zcdp
        if self.delta > 0:
            raise ValueError("an (epsilon, delta)-DP step with delta > 0 has no zCDP rho")
        return pure_to_zcdp(self.epsilon)


def compose(ledger: Sequence[Spend], composition: str, delta: float) -> tuple[float, float]:
    """The ``(epsilon, delta)`` of the adaptive composition of the ledger's steps.

    ``"basic"``: ``(sum eps_t, sum delta_t)``.  ``"zcdp"`` (pure or zCDP steps):
    ``rho = sum rho_t``, then ``(rho + 2 sqrt(rho ln(1/delta)), delta)`` (Bun-Steinke 2016,
    Props 1.3, 1.4 and Lemma 1.7).  ``"advanced"`` (Dwork-Rothblum-Vadhan 2010, Dwork-Roth
    Thm 3.20 in its per-step form): with slack ``delta' = delta - sum delta_t > 0``,
    ``(sqrt(2 ln(1/delta') sum eps_t^2) + sum eps_t (e^{eps_t} - 1), delta)``.

    >>> compose([Spend("a", 0.1), Spend("b", 0.1)], "basic", 0.0)
    (0.2, 0.0)
    """
    if composition not in COMPOSITIONS:
        raise ValueError(f"unknown composition {composition!r}; valid: {', '.join(COMPOSITIONS)}")
    if composition == "basic":
        return basic_composition((r.epsilon for r in ledger), (r.delta for r in ledger))
    if composition == "advanced":
        slack = delta - math.fsum(r.delta for r in ledger)
        if not 0.0 < slack < 1.0:
            raise ValueError(
                f"advanced composition needs delta - sum(delta_t) in (0, 1), got {slack!r}")
        return advanced_composition((r.epsilon for r in ledger), slack), delta
    if any(r.delta > 0 for r in ledger):
        raise ValueError("zCDP composition does not cover (epsilon, delta)-DP rounds with "
                         "delta > 0; use 'advanced' or 'basic'")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"zCDP conversion needs delta in (0, 1), got {delta!r}")
    rho = math.fsum(r.rho for r in ledger)
    return zcdp_epsilon(rho, delta), delta


def ledger_guarantee(ledger: Sequence[Spend], composition: str, epsilon: float, delta: float,
                     *, source: str, requires_exact_oracle: bool = False, rtol: float = 0.0,
                     **fields: Any) -> PrivacyGuarantee:
    """The guarantee of a run with budget ``(epsilon, delta)`` whose steps are ``ledger``.

    The ledger is composed by ``composition`` (:func:`compose`, at ``delta``); the run is
    ``(epsilon, delta)``-DP when the composed loss is within the budget (``epsilon`` up to a
    relative ``rtol`` for a calibration made in floating point), and pure ``epsilon``-DP when
    the composed delta is 0.  A composition beyond the budget is a calibration error: it
    raises :class:`AssertionError` rather than release an output.  ``fields`` are the other
    fields of the :class:`~oracledp.privacy._guarantees.PrivacyGuarantee` (``notes``...).

    >>> ledger = [Spend("a", 0.1), Spend("b", 0.1)]
    >>> ledger_guarantee(ledger, "basic", 0.2, 1e-6, source="a theorem").describe()
    '0.2-DP (pure), replace-one neighbours; a theorem'
    """
    eps_spent, delta_spent = compose(ledger, composition, delta)
    if eps_spent > epsilon * (1.0 + rtol) or delta_spent > delta:
        raise AssertionError("composed privacy exceeds the target")
    if delta_spent == 0:
        return PrivacyGuarantee.pure(epsilon, source=source,
                                     requires_exact_oracle=requires_exact_oracle, **fields)
    return PrivacyGuarantee.approximate(epsilon, delta, source=source,
                                        requires_exact_oracle=requires_exact_oracle, **fields)
