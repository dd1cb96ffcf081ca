"""Group privacy: the guarantee for a person who contributes up to ``k`` records.

Every guarantee of oracledp is about one record (replace-one neighbours, or add/remove for
the peers' option).  When a person may contribute several records (a panel, repeated
visits, a household), what protects that person is the guarantee for datasets that differ
in all of that person's records: a group of ``k`` records.

* **Pure DP** (Dwork-Roth 2014, Theorem 2.2): an ``eps``-DP mechanism is ``k eps``-DP for
  groups of ``k`` records.
* **Approximate DP**: an ``(eps, delta)``-DP mechanism is
  ``(k eps, delta (1 + e^eps + ... + e^{(k-1) eps}))``-DP for groups of ``k`` records, by the
  same induction along a path of ``k`` neighbouring datasets.  The sum is at most
  ``k e^{(k-1) eps} delta``, the form usually quoted; :func:`group_loss` computes the sum
  itself.  Proof: ``docs/proofs/group-privacy.md``.
* **Ex-post** (Ligett et al. 2017, Definition 2.3, delta = 0): the realised loss bounds the
  log-ratio of the output's probability for *every* neighbouring pair, so along a path of
  ``k`` neighbours it is at most ``k`` times the realised loss.
* **zCDP** (Bun-Steinke 2016, Prop. 1.9): ``rho``-zCDP is ``k^2 rho``-zCDP for groups of
  ``k`` (:func:`group_rho`).

For large ``k eps`` the approximate statement becomes vacuous (its delta reaches 1):
:func:`group_privacy` then raises ValueError rather than state it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace

from oracledp.privacy._guarantees import GROUP_NEIGHBOURING, GuaranteeKind, PrivacyGuarantee

__all__ = ["check_records_per_person", "group_loss", "group_privacy", "group_rho"]


#: The most records per person accepted (group privacy beyond it says nothing useful, and
#: ``k**2 * rho`` must stay a float).
MAX_RECORDS_PER_PERSON = 1_000_000


def check_records_per_person(k: object, name: str = "records_per_person") -> int:
    """``k`` as an int in [1, :data:`MAX_RECORDS_PER_PERSON`] (a bool is not one);
    ValueError otherwise."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or int(k) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {str(k)[:20]}")
    if int(k) > MAX_RECORDS_PER_PERSON:
        raise ValueError(f"{name} must be at most {MAX_RECORDS_PER_PERSON:,}")
    return int(k)


def group_loss(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """``(k eps, delta * sum_{i<k} e^{i eps})``: the loss of a group of ``k`` records.

    The delta may reach or exceed 1 (a vacuous statement) or be ``inf``; the caller decides
    what to do with it.  ``k = 1`` returns the loss unchanged.

    >>> group_loss(0.5, 1e-6, 1)
    (0.5, 1e-06)
    >>> eps, delta = group_loss(0.5, 1e-6, 3)
    >>> eps, round(delta / 1e-6, 6)  # 1 + e^0.5 + e^1.0
    (1.5, 5.367003)
    """
    k = check_records_per_person(k, "k")
    if k == 1:
        return epsilon, delta
    if delta == 0.0:
        return k * epsilon, 0.0
    if (k - 1) * epsilon > 700.0:  # e^{(k-1) eps} overflows
        return k * epsilon, math.inf
    growth = math.fsum(math.exp(i * epsilon) for i in range(k))
    return k * epsilon, delta * growth


def group_rho(rho: float, k: int) -> float:
    """``k^2 rho``: a ``rho``-zCDP mechanism is ``k^2 rho``-zCDP for groups of ``k`` records
    (Bun-Steinke 2016, Prop. 1.9).

    >>> group_rho(0.5, 3)
    4.5
    """
    k = check_records_per_person(k, "k")
    return rho if k == 1 else k * k * rho


def group_privacy(guarantee: PrivacyGuarantee, k: int) -> PrivacyGuarantee:
    """The guarantee ``guarantee`` gives a person who contributes up to ``k`` records.

    Pure ``eps`` becomes ``k eps``; ``(eps, delta)`` becomes
    ``(k eps, delta sum_{i<k} e^{i eps})`` (at most ``k e^{(k-1) eps} delta``); an ex-post
    loss (delta 0) is scaled on its realised value.  Kind, source, oracle assumption,
    ``holds`` and the diagnostics flag are kept; ``neighbouring`` becomes
    ``"groups of k records (<the per-record relation>)"`` and ``notes`` say how the numbers
    were derived.  ``k = 1`` returns ``guarantee`` itself.

    Raises ValueError for ``k`` not an integer >= 1, for an ex-post loss with delta > 0 (no
    group statement is proven here), and when the group delta would reach 1 (the statement
    would say nothing: lower epsilon or k).

    >>> from oracledp.privacy import PrivacyGuarantee, group_privacy
    >>> g = PrivacyGuarantee.approximate(0.5, 1e-6, source="a theorem")
    >>> print(group_privacy(g, 3).describe())
    (1.5, 5.37e-06)-DP, groups of 3 records (replace-one) neighbours; a theorem
    >>> group_privacy(PrivacyGuarantee.pure(0.2, source="Laplace"), 4).epsilon
    0.8
    """
    k = check_records_per_person(k, "k")
    if k == 1:
        return guarantee
    if guarantee.kind is GuaranteeKind.EX_POST and guarantee.delta > 0:
        raise ValueError("group privacy of an ex-post loss with delta > 0 is not proven here; "
                         "only pure ex-post losses (delta = 0) are scaled")
    epsilon, delta = group_loss(guarantee.epsilon, guarantee.delta, k)
    if not delta < 1.0:
        raise ValueError(
            f"the guarantee for {k} records per person would be vacuous: group privacy turns "
            f"({guarantee.epsilon:g}, {guarantee.delta:.3g})-DP per record into delta >= 1 per "
            "person. Lower epsilon or delta, or the number of records per person.")
    derived = (f"group privacy for {k} records per person of the per-record "
               f"{_loss(guarantee)} (Dwork-Roth 2014 Thm 2.2 and its (eps, delta) form; "
               "docs/proofs/group-privacy.md)")
    notes = f"{guarantee.notes}; {derived}" if guarantee.notes else derived
    return replace(guarantee, epsilon=epsilon, delta=delta, notes=notes,
                   neighbouring=GROUP_NEIGHBOURING.format(k=k, base=guarantee.neighbouring))


def _loss(g: PrivacyGuarantee) -> str:
    if g.kind is GuaranteeKind.PURE:
        return f"{g.epsilon:g}-DP"
    if g.kind is GuaranteeKind.APPROXIMATE:
        return f"({g.epsilon:g}, {g.delta:.3g})-DP"
    return f"ex-post loss {g.epsilon:g}"
