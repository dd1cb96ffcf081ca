"""The privacy ledger: what each step of an iterative mechanism spent, and their composition.

A ledger is a sequence of spends, each with an ``epsilon`` and ``delta`` (an
``(eps, delta)``-DP step) or a ``rho`` (a ``rho``-zCDP step); OracleQuery's
:class:`~oracledp.synth._oracle_query.RoundSpend` and OracleQueryPGM's
:class:`~oracledp.synth._oracle_query_pgm.ZCDPSpend` are such spends, with the round's released
choice attached.  :func:`compose` is the one function that turns a ledger into the
``(epsilon, delta)`` of the whole run (the formulas are in :mod:`oracledp.privacy._composition`),
and :func:`ledger_guarantee` into the :class:`~oracledp.privacy._guarantees.PrivacyGuarantee`
the run releases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from oracledp.privacy._composition import (
    advanced_composition,
    basic_composition,
    pure_to_zcdp,
    zcdp_epsilon,
)
from oracledp.privacy._guarantees import GuaranteeKind, PrivacyGuarantee

__all__ = ["COMPOSITIONS", "Spend", "compose", "ledger_guarantee"]

COMPOSITIONS = ("basic", "zcdp", "advanced")


class _Spend(Protocol):
    @property
    def epsilon(self) -> float: ...

    @property
    def delta(self) -> float: ...

    @property
    def rho(self) -> float: ...


@dataclass(frozen=True)
class Spend:
    """A plain ledger entry: ``mechanism`` spent ``(epsilon, delta)``-DP, or ``rho``-zCDP.

    ``rho`` defaults to ``epsilon^2 / 2`` for a pure step (Bun-Steinke, Prop. 1.4).

    >>> Spend("Laplace", epsilon=0.2).rho
    0.020000000000000004
    """

    mechanism: str
    epsilon: float = math.inf
    delta: float = 0.0
    zcdp_rho: float | None = None

    @property
    def rho(self) -> float:
        if self.zcdp_rho is not None:
            return self.zcdp_rho
        if self.delta > 0:
            raise ValueError("an (epsilon, delta)-DP step with delta > 0 has no zCDP rho")
        return pure_to_zcdp(self.epsilon)


def compose(ledger: Sequence[_Spend], composition: str, delta: float) -> tuple[float, float]:
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
    if any(getattr(r, "delta", 0.0) > 0 for r in ledger):
        raise ValueError("zCDP composition does not cover (epsilon, delta)-DP rounds with "
                         "delta > 0; use 'advanced' or 'basic'")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"zCDP conversion needs delta in (0, 1), got {delta!r}")
    rho = math.fsum(r.rho for r in ledger)
    return zcdp_epsilon(rho, delta), delta


def ledger_guarantee(ledger: Sequence[_Spend], composition: str, delta: float, *,
                     source: str, requires_exact_oracle: bool, **fields: Any
                     ) -> PrivacyGuarantee:
    """The guarantee of a run whose steps are ``ledger``, composed by ``composition``."""
    eps, dlt = compose(ledger, composition, delta)
    kind = GuaranteeKind.PURE if dlt == 0 else GuaranteeKind.APPROXIMATE
    return PrivacyGuarantee(epsilon=eps, delta=dlt, kind=kind, source=source,
                            requires_exact_oracle=requires_exact_oracle, **fields)
