"""Exact output law of Gaussian RSPM on parities, and the privacy loss it realizes.

Gaussian RSPM releases ``argmin_q A_S(q) + <eta, pi(q)>`` with ``eta ~ N(0, sigma^2 I_m)``
and ``pi(q)`` the separator losses of q (``docs/proofs/gaussian-rspm-calibration.md``).
Everything here is deterministic high-precision arithmetic (mpmath, no sampling);
``tests/audit/test_gaussian_rspm_exact_law.py`` checks the law against Monte Carlo draws of
the mechanism with a brute-force argmin.

Construction (parities, the class of FOCS 2019 Appendix A)
-----------------------------------------------------------
Hypotheses ``h_a(x) = <a, x> mod 2`` for ``a in {0,1}^m``, 0/1 loss ``1[h_a(x) != y]``.
The examples ``(e_j, 0)`` form a separator set of size m: ``pi(a) = a``, so the class has
|Q| = 2^m and every sign pattern ``1 - 2 pi(a)`` occurs.  The records ``(0, 0)`` have loss 0
for every a; the record ``(1, y)`` (1 the all-ones point) has loss ``parity(a)`` for
``y = 0`` and ``1 - parity(a)`` for ``y = 1``.  Two replace-one pairs:

* ``"flip"``: S = {(0, 0) x (n-1), (1, 0)}, S' = {(0, 0) x (n-1), (1, 1)}.  The gap between
  an odd and an even hypothesis moves by 2, the most one record can move it.
* ``"add"``: S = {(0, 0) x n}, S' = {(0, 0) x (n-1), (1, 0)} (a gap move of 1).

Law (short proof)
-----------------
Let ``a* = 1[eta < 0]`` (coordinate-wise), the minimizer of ``<eta, a>``, with value V*.
Any a of the other parity than a* differs from it in an odd number of coordinates, so it
costs at least ``V* + min_j |eta_j|``, with equality for one flip.  Hence, with the data term
``+b parity(a)`` (b = 1 for S of "flip" and S' of "add", b = -1 for S' of "flip", b = 0 for S
of "add"):  for ``b = +1``, the output is odd iff a* is odd and ``min |eta_j| > 1``; for
``b = -1`` it is odd iff a* is odd or ``min |eta_j| < 1``; for ``b = 0`` it is a*.  The
parity of a* is a fair coin independent of ``|eta|``, and
``P1 = P[min_j |eta_j| > 1] = erfc(1 / (sigma sqrt 2))^m``.  So:

    flip:  P_S[odd] = P1 / 2,     P_S'[odd] = 1 - P1 / 2,
    add:   P_S[odd] = 1 / 2,      P_S'[odd] = P1 / 2.

Every output law here gives equal mass to all a of one parity: the map
``a -> a xor e_i xor e_j``, ``eta_i -> -eta_i``, ``eta_j -> -eta_j`` preserves the law of eta
and parity and shifts every objective by the same constant.  So the hockey-stick divergence
over *all* events is the one over the two parity classes, computed exactly by
:func:`realized_delta`.

At the Gaussian-mechanism sigma ``2 sqrt(2 m ln(1.25/delta)) / eps`` (Theorem 7's rate) the
"flip" pair violates (eps, delta)-DP, e.g. realized delta 0.40 at (1, 0.1) with m = 40 and
0.42 at (1, 1e-5) with m = 200; at the proven sigma it does not.
"""

from __future__ import annotations

from typing import Literal

import mpmath as mp

__all__ = ["parity_law", "parity_realized_delta", "realized_delta"]

Pair = Literal["flip", "add"]
_DPS = 50


def parity_law(sigma: float, m: int, pair: Pair = "flip") -> tuple[tuple[mp.mpf, mp.mpf],
                                                                  tuple[mp.mpf, mp.mpf]]:
    """The exact laws ``((P_S[odd], P_S[even]), (P_S'[odd], P_S'[even]))`` of Gaussian RSPM
    with weights ``N(0, sigma^2)`` on the parity pair ``pair`` (module docstring), at 50 digits."""
    if not (isinstance(m, int) and m >= 1):
        raise ValueError(f"m must be a positive integer, got {m!r}")
    if not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma!r}")
    if pair not in ("flip", "add"):
        raise ValueError(f"pair must be 'flip' or 'add', got {pair!r}")
    with mp.workdps(_DPS):
        p1 = mp.erfc(1 / (mp.mpf(sigma) * mp.sqrt(2))) ** m
        half = mp.mpf(1) / 2
        odd_s, odd_t = (p1 / 2, 1 - p1 / 2) if pair == "flip" else (half, p1 / 2)
        return (odd_s, 1 - odd_s), (odd_t, 1 - odd_t)


def realized_delta(p: tuple[mp.mpf, ...], q: tuple[mp.mpf, ...], epsilon: float) -> mp.mpf:
    """The smallest delta with (epsilon, delta) between the laws p and q in both directions:
    ``max(sum (p - e^eps q)_+, sum (q - e^eps p)_+)`` over their common finite support."""
    with mp.workdps(_DPS):
        e = mp.e ** mp.mpf(epsilon)
        one = sum((max(mp.mpf(0), x - e * y) for x, y in zip(p, q, strict=True)), mp.mpf(0))
        two = sum((max(mp.mpf(0), y - e * x) for x, y in zip(p, q, strict=True)), mp.mpf(0))
        return max(one, two)


def parity_realized_delta(sigma: float, m: int, epsilon: float, pair: Pair = "flip") -> mp.mpf:
    """The exact delta that Gaussian RSPM at ``sigma`` realizes at ``epsilon`` on a parity pair."""
    p, q = parity_law(sigma, m, pair)
    return realized_delta(p, q, epsilon)
