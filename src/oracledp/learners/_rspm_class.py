"""RSPM over any query class with a separator set (Neel, Roth, Wu, FOCS 2019, Section III.A).

Generalizes :func:`oracledp.learners.rspm` (halfspaces over {-1,0,1}^d) to
any :class:`~oracledp.query_classes.QueryClass`, including negated classes and 0/1-loss
classes (spec ``docs/specs/oracle-query.md`` section 3):

    eta_i ~ Laplace(scale b = 2m/eps), i = 1..m   (m = |U|, U = cls.separator())
    q = O( [(z_r, w_r) private] + [public part] + [(u_i, eta_i)] )      one oracle call

with ``O`` a weighted oracle (004 Definition 5) that *minimizes*
``sum_r w_r q(z_r)``.

Privacy (004 Theorem 6): eps-DP (pure), replace-one neighbours, **provided O
returns the exact minimizer**.  The proof needs the data-dependent part of the
objective to move by at most 1 for every q when one record is replaced: private
weights must lie in [-1, 1] (checked) and are part of the mechanism's public
specification (e.g. all +1, or all -1 as in OracleQuery): neighbours replace a
record's point, not its weight.  The public part may be anything fixed.
On ``{output = q}`` the map ``eta_i -> eta_i + 2(1 - 2 q(u_i))`` keeps q the
unique minimizer on the neighbour, and the Laplace density ratio is at most
``e^{2/b}`` per coordinate, ``e^{eps}`` over the m coordinates (proof, and why the
translation must be 2 and not the 1 of the paper's Lemma 3: ``docs/proofs/rspm-shift.md``).

Accuracy (004 Theorem 5): with probability at least 1 - beta the objective of
the output exceeds the minimum by at most ``||eta||_1 <= 2m^2 ln(m/beta)/eps``
(unnormalized; ``4m^2 ln(m/beta)/(eps n)`` in the paper's normalization for
0/1 losses with ``max |eta_i| <= b ln(m/beta)``).

Only certified oracle answers are released.  Non-certifiable (heuristic)
oracles are refused: use PRSMA (004 Section III.B) for those.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, check_diagnostics_flag
from oracledp._validation import RandomLike, check_epsilon, check_rng
from oracledp.learners._certify import solve_and_release
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee
from oracledp.query_classes._base import (
    QueryClass,
    WeightedOracle,
    check_weighted_points,
)
from oracledp.query_classes._mip import make_class_oracle

__all__ = ["SOURCE", "RSPMClassResult", "rspm_class", "rspm_class_guarantee",
           "rspm_class_scale"]

SOURCE = "Neel, Roth, Wu (FOCS 2019) Theorem 6"


def rspm_class_scale(epsilon: float, m: int) -> float:
    """Laplace scale ``b = 2m/eps`` of the separator weights (004 Theorem 6)."""
    return 2.0 * int(m) / check_epsilon(epsilon)


def rspm_class_guarantee(epsilon: float) -> PrivacyGuarantee:
    return PrivacyGuarantee.pure(
        check_epsilon(epsilon), source=SOURCE, requires_exact_oracle=True,
        notes="RSPM (Laplace) over a query class with a separator set; holds only if the "
              "weighted oracle returns the exact minimizer (certified); private weights in [-1, 1]",
    )


@dataclass(frozen=True)
class RSPMClassResult:
    """Output of :func:`rspm_class`.

    ``params`` is the released hypothesis (one parameter row of the class), ``scale``
    the Laplace scale 2m/eps and ``m`` the separator size (public).  The oracle's
    record (objective, bound, status, wall time: it depends on the secret noise and
    the data) and the timings are in ``diagnostics`` only with
    ``return_diagnostics=True`` (:class:`~oracledp._diagnostics.NonPrivateDiagnostics`).
    """

    params: NDArray[np.int64]
    guarantee: PrivacyGuarantee
    scale: float
    m: int
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)

    @property
    def certified(self) -> bool:
        """Whether the released answer was certified optimal (refused otherwise, unless
        ``allow_uncertified=True``, which marks the guarantee as not holding)."""
        return self.guarantee.holds



def certifiable_class_oracle(cls: QueryClass, oracle: Any, mechanism: str) -> Any:
    """The weighted oracle for ``cls`` (a name or an instance built for ``cls``), which must be
    certifiable: ``mechanism``'s privacy needs an exact oracle (heuristic oracles, 004
    Definition 7, are only usable inside PRSMA, 004 Section III.B)."""
    if isinstance(oracle, str):
        orc = make_class_oracle(cls, oracle)
    else:
        orc = oracle
        if not isinstance(orc, WeightedOracle):
            raise TypeError("oracle must be a name or a WeightedOracle (solve(points, weights))")
        if orc.query_class != cls:
            raise ValueError(
                f"oracle {orc.name!r} was built for {orc.query_class.name}, not for {cls.name}"
            )
    if not getattr(orc, "certifiable", False):
        raise ValueError(
            f"oracle {getattr(orc, 'name', orc)!r} is not certifiable (a heuristic, 004 "
            f"Definition 7): {mechanism}'s privacy needs an exact oracle. Wrap it in PRSMA "
            "(004 Section III.B) to use a heuristic oracle."
        )
    return orc

def rspm_class(
    cls: QueryClass,
    points: ArrayLike,
    weights: ArrayLike | None,
    epsilon: float,
    *,
    oracle: str | WeightedOracle = "highs",
    random_state: RandomLike = None,
    allow_uncertified: bool = False,
    eta: ArrayLike | None = None,
    public_points: ArrayLike | None = None,
    public_weights: ArrayLike | None = None,
    return_diagnostics: bool = False,
) -> RSPMClassResult:
    """Run Laplace RSPM once over ``cls``: one call to an exact weighted oracle.

    Parameters
    ----------
    cls:
        The query class (its point space: use ``cls.encode(X)``, or
        ``cls.zero_one_loss().encode(X, y)`` for 0/1 losses of labelled data).
    points, weights:
        The private records as points and their weights in [-1, 1]
        (``None``: weight +1 each, i.e. minimize ``sum_i q(x_i)``).
    epsilon:
        Target eps > 0 (pure DP).
    oracle:
        ``"highs"`` (exact MIP), ``"brute"`` (enumeration) or a
        :class:`~oracledp.query_classes.WeightedOracle` built for ``cls``.  A
        non-certifiable oracle is refused (ValueError): wrap it in PRSMA.
    random_state:
        Seed or numpy Generator; the only source of randomness.
    allow_uncertified:
        Release an uncertified answer anyway, with ``guarantee.holds = False``.
    eta:
        Test hook: the m separator weights instead of sampling them.
    public_points, public_weights:
        A fixed, data-independent weighted part of the objective (any weights).
    return_diagnostics:
        As in :func:`~oracledp.learners.rspm`: the oracle's record and the timings, as
        non-private diagnostics (research only; flags ``guarantee.diagnostics_released``).

    Privacy
    -------
    eps-DP (pure), replace-one neighbours, Neel, Roth, Wu (FOCS 2019) Theorem 6,
    given an exact oracle; an uncertified answer raises
    :class:`~oracledp._errors.OracleFailure`.  All inputs are validated before
    any noise is drawn.

    Examples
    --------
    Four records over three binary attributes, monotone conjunctions, exact enumeration:

    >>> import numpy as np
    >>> from oracledp.query_classes import MonotoneConjunctions
    >>> from oracledp.learners._rspm_class import rspm_class
    >>> Z = np.array([[1, 1, 0], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    >>> res = rspm_class(MonotoneConjunctions(3), Z, None, 1.0, oracle="brute",
    ...                  random_state=0)
    >>> res.params.tolist(), res.m, res.scale
    ([1, 0, 0], 3, 6.0)
    >>> res.guarantee.is_pure, res.certified
    (True, True)
    """
    if not isinstance(cls, QueryClass):
        raise TypeError(f"cls must be a QueryClass, got {type(cls).__name__}")
    want_diag = check_diagnostics_flag(return_diagnostics)
    guarantee = rspm_class_guarantee(epsilon)
    Z = cls.check_points(points)
    if Z.shape[0] == 0:
        raise ValueError("points is empty: need at least one private record")
    if weights is None:
        weights = np.ones(Z.shape[0])
    Z, w = check_weighted_points(cls, Z, weights)
    if np.abs(w).max() > 1.0:
        raise ValueError(
            "private weights must lie in [-1, 1]: Theorem 6 needs the data part of the "
            "objective to move by at most 1 when one record is replaced"
        )
    if (public_points is None) != (public_weights is None):
        raise ValueError("pass both public_points and public_weights, or neither")
    if public_points is not None:
        Zp, wp = check_weighted_points(cls, public_points, public_weights)
    else:
        Zp, wp = np.zeros((0, cls.point_dim)), np.zeros(0)
    orc = certifiable_class_oracle(cls, oracle, "RSPM")
    U = cls.separator()
    m = int(U.shape[0])
    scale = rspm_class_scale(epsilon, m)
    if eta is not None:
        eta_arr = np.asarray(eta, dtype=np.float64)
        if eta_arr.shape != (m,):
            raise ValueError(f"eta must have shape ({m},), got {eta_arr.shape}")
        if not np.isfinite(eta_arr).all():
            raise ValueError("eta must be finite (no NaN or infinity)")
    gen = check_rng(random_state)
    t0 = time.perf_counter()
    if eta is None:
        eta_arr = noise.laplace(gen, scale, size=m)
    rel = solve_and_release(
        lambda: orc.solve(np.vstack([Z, Zp, U]), np.concatenate([w, wp, eta_arr])), t0,
        guarantee, allow_uncertified=allow_uncertified, mechanism="RSPM (Theorem 6)",
        key="rspm_class", want_diagnostics=want_diag)
    return RSPMClassResult(params=np.array(rel.point, dtype=np.int64), guarantee=rel.guarantee,
                           scale=scale, m=m, diagnostics=rel.diagnostics)
