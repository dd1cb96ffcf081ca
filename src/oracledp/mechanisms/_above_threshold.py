"""InteractiveAboveThreshold with ex-post privacy accounting.

Algorithm 2 of Ligett, Neel, Roth, Waggoner and Wu, "Accuracy First" (2017),
IAT(D, eps, W, Delta, M):

    W_hat = W + Lap(2 Delta / eps)                      (drawn once)
    for each query t = 1, ..., T:
        if f_t(D) + Lap(4 Delta / eps) >= W_hat: output (t, f_t); halt
    output (T, bottom)

The queries ``f_t`` may be produced by a private algorithm M and may depend on
the data.  Privacy (Lemma 2.8): if M is ``(eps_1, ..., eps_T)``-prefix-private
and every query has l1 sensitivity at most ``Delta``, IAT is *ex-post*
differentially private with loss ``E((t, .)) = eps_A + eps_t`` when it halts at
``t`` (Definition 2.3: for this realised output the log-likelihood ratio between
neighbouring datasets is at most ``E``).  This is not an ex-ante epsilon-DP
guarantee: the loss depends on the data through the stopping index.  When the
test never halts, the algorithms built on it (CovNR, OutputNR: Theorems 3.2,
3.4) release the non-private optimum and the loss is infinite; this module
reports infinity for "no halt" as well.

For data-independent queries (``eps_t = 0``) this is the classical
AboveThreshold (Dwork and Roth 2014, Theorem 3.23): the halting index is
``eps_A``-DP.

Indexing is 0-based: ``halted_at = k`` means the (k+1)-th query passed; pass
the epsilon of the hypotheses released up to and including query ``k`` to
:meth:`InteractiveAboveThreshold.ex_post_loss`.

Guarantees hold under idealized numerics (see :mod:`oracledp.privacy._guarantees`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._validation import (
    RandomLike,
    check_epsilon,
    check_positive,
    check_real_vector,
    check_rng,
)
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee

IAT_SOURCE = "Ligett et al. 2017 (Accuracy First), Algorithm 2 and Lemma 2.8"

__all__ = [
    "IAT_SOURCE",
    "ExPostLoss",
    "InteractiveAboveThreshold",
    "iat_query_scale",
    "iat_threshold_scale",
]


def iat_threshold_scale(epsilon: float, sensitivity: float) -> float:
    """Laplace scale of the threshold noise: ``2 Delta / eps`` (Algorithm 2, W_hat = W + Lap(2 Delta/eps))."""
    eps = check_epsilon(epsilon)
    delta = check_positive(sensitivity, "sensitivity")
    return 2.0 * delta / eps


def iat_query_scale(epsilon: float, sensitivity: float) -> float:
    """Laplace scale of each query's noise: ``4 Delta / eps`` (Algorithm 2, f_t(D) + Lap(4 Delta/eps))."""
    eps = check_epsilon(epsilon)
    delta = check_positive(sensitivity, "sensitivity")
    return 4.0 * delta / eps


def _check_finite_real(value: object, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


@dataclass(frozen=True)
class ExPostLoss:
    """The realised (ex-post) privacy loss of one run of InteractiveAboveThreshold.

    Ex-post privacy (Ligett et al. 2017, Definition 2.3) bounds the privacy loss
    of the output that was actually produced; it is *not* an ex-ante
    epsilon-DP guarantee, because the loss depends on the data through the
    stopping index.

    Attributes
    ----------
    epsilon:
        The realised total loss ``epsilon_test + epsilon_hypothesis`` (Lemma 2.8),
        or ``math.inf`` when the test never halted.
    epsilon_test:
        ``eps_A``, the parameter of the threshold test.
    epsilon_hypothesis:
        ``eps_t`` of the prefix-private hypotheses released up to the stopping
        index, as passed by the caller (0 for data-independent queries).
    stopping_index:
        0-based index of the query that passed, or None if none did.
    source:
        The paper and lemma.
    """

    epsilon: float
    epsilon_test: float
    epsilon_hypothesis: float
    stopping_index: int | None
    source: str = IAT_SOURCE

    def __post_init__(self) -> None:
        eps_a = check_epsilon(self.epsilon_test, "epsilon_test")
        eps_h = float(self.epsilon_hypothesis)
        if not (math.isfinite(eps_h) and eps_h >= 0):
            raise ValueError(
                f"epsilon_hypothesis must be finite and >= 0, got {self.epsilon_hypothesis!r}"
            )
        if self.stopping_index is None:
            if self.epsilon != math.inf:
                raise ValueError("a run that never halted has ex-post loss math.inf")
        else:
            k = self.stopping_index
            if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
                raise ValueError(f"stopping_index must be an integer >= 0 or None, got {k!r}")
            if not math.isclose(self.epsilon, eps_a + eps_h, rel_tol=1e-12, abs_tol=0.0):
                raise ValueError(
                    "epsilon must equal epsilon_test + epsilon_hypothesis (Lemma 2.8), got "
                    f"{self.epsilon!r} != {eps_a!r} + {eps_h!r}"
                )

    @property
    def halted(self) -> bool:
        return self.stopping_index is not None

    @property
    def statement(self) -> str:
        """Plain-language statement of what is (and is not) promised."""
        if not self.halted:
            return (
                "The threshold test never halted: the ex-post privacy loss is unbounded "
                "(infinity); nothing is promised for this output. This is an ex-post loss "
                "(Definition 2.3 of Ligett et al. 2017), not an ex-ante guarantee."
            )
        return (
            f"Ex-post privacy loss {self.epsilon:g} for this realised output (stopping index "
            f"{self.stopping_index}): eps_A = {self.epsilon_test:g} for the threshold test plus "
            f"eps_t = {self.epsilon_hypothesis:g} for the hypotheses released up to it "
            "(Lemma 2.8). This is an ex-post loss (Definition 2.3 of Ligett et al. 2017), not "
            "an ex-ante epsilon-DP guarantee: the loss depends on the data through the "
            "stopping index."
        )

    def to_guarantee(self) -> PrivacyGuarantee:
        """The loss as a :class:`PrivacyGuarantee` of kind ``EX_POST`` (epsilon may be inf)."""
        return PrivacyGuarantee.ex_post(self.epsilon, source=self.source, notes=self.statement)


class InteractiveAboveThreshold:
    """Algorithm 2 (InteractiveAboveThreshold) of Ligett et al. 2017.

    Parameters
    ----------
    epsilon:
        ``eps_A > 0``, the privacy parameter of the test.
    threshold:
        ``W``, a finite public threshold.
    sensitivity:
        ``Delta > 0``, a bound on the l1 sensitivity of every query ``f_t(D)``
        (for any fixed query object, over replace-one neighbours).
    random_state:
        Seed or numpy Generator (the only source of randomness).  The old spelling

    The threshold noise ``Lap(2 Delta / eps_A)`` is drawn once, here; each query
    gets fresh ``Lap(4 Delta / eps_A)`` noise.  A query passes when its noisy
    value is *at least* the noisy threshold; the first pass halts the test and
    any further query raises ``RuntimeError``.  Only the pass/fail bit is
    released, never a noisy value or the noisy threshold.

    Privacy: ex-post, ``eps_A + eps_t`` when halting at the query whose
    hypothesis prefix is ``eps_t``-DP (Lemma 2.8); infinite when it never
    halts.  See :meth:`ex_post_loss`.  The caller must not release any
    hypothesis after the halting index.

    Examples
    --------
    >>> from oracledp.mechanisms import InteractiveAboveThreshold
    >>> iat = InteractiveAboveThreshold(1.0, 0.0, 0.01, random_state=0)
    >>> iat.first_above([-1.0, -0.5, 0.5, 1.0])  # the first noisy value above the noisy 0.0
    2
    >>> loss = iat.ex_post_loss(0.0)  # data-independent queries: eps_t = 0
    >>> loss.epsilon, loss.stopping_index, str(loss.to_guarantee().kind)
    (1.0, 2, 'ex-post')
    """

    def __init__(
        self,
        epsilon: float,
        threshold: float,
        sensitivity: float,
        *,
        random_state: RandomLike = None,
    ) -> None:
        eps = check_epsilon(epsilon)
        w = _check_finite_real(threshold, "threshold")
        delta = check_positive(sensitivity, "sensitivity")
        gen = check_rng(random_state)
        self._epsilon = eps
        self._threshold = w
        self._sensitivity = delta
        self._query_scale = iat_query_scale(eps, delta)
        self._rng = gen
        self._n_queries = 0
        self._halted_at: int | None = None
        self._closed = False  # set when a block failed after its noise was drawn
        # Algorithm 2, line 1: W_hat = W + Lap(2 Delta / eps), drawn once (never released).
        # Scales 2 Delta/eps (threshold) and 4 Delta/eps (queries) for queries of l1
        # sensitivity Delta give the eps_A of the halting index (Lemma 2.8, AboveThreshold).
        self._noisy_threshold = w + float(noise.laplace(gen, iat_threshold_scale(eps, delta)))

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def sensitivity(self) -> float:
        return self._sensitivity

    @property
    def n_queries(self) -> int:
        """Number of queries answered so far (including the one that passed)."""
        return self._n_queries

    @property
    def halted_at(self) -> int | None:
        """0-based index (over all queries asked) of the query that passed, or None."""
        return self._halted_at

    @property
    def halted(self) -> bool:
        return self._halted_at is not None

    def __repr__(self) -> str:
        return (
            f"InteractiveAboveThreshold(epsilon={self._epsilon!r}, threshold={self._threshold!r}, "
            f"sensitivity={self._sensitivity!r}, n_queries={self._n_queries}, "
            f"halted_at={self._halted_at})"
        )

    def _refuse_if_halted(self) -> None:
        if self._closed:
            raise RuntimeError(
                "InteractiveAboveThreshold answers no further queries: a block failed after "
                "its noise was drawn (asking those queries again would spend privacy twice)"
            )
        if self._halted_at is not None:
            raise RuntimeError(
                f"InteractiveAboveThreshold halted at query {self._halted_at}; it answers no "
                "further queries (Algorithm 2 halts at the first pass)"
            )

    def test(self, value: float) -> bool:
        """Answer one query: is ``value + Lap(4 Delta/eps) >= W_hat``?  Halts on True.

        ``value`` is ``f_t(D)``, already computed by the caller on the private data.
        """
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        x = _check_finite_real(value, "value")
        self._refuse_if_halted()
        # Algorithm 2, loop body: f_t(D) + Lap(4 Delta / eps) >= W_hat.
        passed = bool(x + noise.laplace(self._rng, self._query_scale) >= self._noisy_threshold)
        self._n_queries += 1
        if passed:
            self._halted_at = self._n_queries - 1
        return passed

    def first_above(self, values: ArrayLike) -> int | None:
        """Answer a block of queries at once; return the 0-based index *within the block* of
        the first that passes, or None.

        Equivalent in law to calling :meth:`test` on each value in order and stopping at
        the first True: the noise of the whole block is drawn at once and the queries
        after the first pass are discarded, never answered (``n_queries`` counts only up
        to the pass).  The global index is recorded in ``halted_at``.
        """
        arr = check_real_vector(values, "values")
        return self._answer_block(arr, arr, None)

    def first_above_enclosed(
        self,
        lower: ArrayLike,
        upper: ArrayLike,
        values_at: Callable[[NDArray[np.intp]], ArrayLike],
    ) -> int | None:
        """:meth:`first_above` for a block whose values are known through an enclosure.

        ``lower[i] <= values[i] <= upper[i]`` must hold for the values ``f_t(D)`` of the
        block; ``values_at(idx)`` returns the exact values at the (sorted, 0-based,
        within-block) indices ``idx``.  It is called at most once, and only for the
        queries whose answer the enclosure does not decide; the answer (and the noise
        drawn) is exactly that of ``first_above(values)``.  Why: rounding to nearest is
        monotone, so ``lower <= v <= upper`` implies
        ``fl(lower + noise) <= fl(v + noise) <= fl(upper + noise)``; a query whose
        ``upper + noise`` stays below the noisy threshold fails whatever its value, one
        whose ``lower + noise`` reaches it passes.  An exact value outside its enclosure
        raises RuntimeError (the enclosure is wrong).  If ``values_at`` fails or returns
        such a value, the block is not answered and the instance answers no further
        queries: the block's noise is already drawn.

        Timing (not covered by the privacy guarantee): the answer is that of
        ``first_above``, but the work is not.  ``values_at`` is called for the
        *undecided* queries: those before the block's first sure pass (the first ``i``
        with ``lower[i] + noise[i] >= W_hat``) with
        ``lower[i] + noise[i] < W_hat <= upper[i] + noise[i]``.  Which and how many
        they are depends on the noisy threshold ``W_hat`` and the query noise (never
        released), on the enclosures (for OutputNR functions of the private data and of
        every hypothesis of the block, including those after the halting query, which
        are never released), and it includes queries after the halting query up to the
        first sure pass.  It is not a function of the answer: two runs with the same
        answer can ask for different numbers of exact values, and whether
        ``values_at`` is called at all differs too.  When computing a value is
        expensive (OutputNR: one pass over the data per value), the wall time reveals
        that count, roughly how many noisy query values fell within their enclosure's
        width of the noisy threshold.  Use :meth:`first_above` on exact values when the
        work must depend on the answer only.
        """
        lo = check_real_vector(lower, "lower")
        hi = check_real_vector(upper, "upper")
        if lo.shape != hi.shape:
            raise ValueError(f"lower and upper differ in shape: {lo.shape} vs {hi.shape}")
        if (lo > hi).any():
            raise ValueError("lower must be <= upper for every query")
        return self._answer_block(lo, hi, values_at)

    def _answer_block(
        self,
        lower: NDArray[np.float64],
        upper: NDArray[np.float64],
        values_at: Callable[[NDArray[np.intp]], ArrayLike] | None,
    ) -> int | None:
        """The block's first pass given ``lower <= values <= upper`` (equal when exact)."""
        self._refuse_if_halted()
        if lower.size == 0:
            return None
        # Algorithm 2, loop body for every query of the block: f_t(D) + Lap(4 Delta / eps) >= W_hat.
        query_noise = noise.laplace(self._rng, self._query_scale, size=lower.shape)
        passes = lower + query_noise >= self._noisy_threshold  # passes whatever the exact value
        may_pass = upper + query_noise >= self._noisy_threshold  # the others fail whatever it is
        first_sure = int(np.argmax(passes)) if passes.any() else lower.size
        undecided = np.flatnonzero(may_pass[:first_sure] & ~passes[:first_sure])
        if undecided.size:
            try:
                exact = self._exact_values(values_at, undecided, lower, upper)
            except BaseException:
                # The block's noise is drawn: answering these queries again with fresh noise
                # would spend privacy twice, so this instance answers nothing more.
                self._closed = True
                raise
            hits = undecided[exact + query_noise[undecided] >= self._noisy_threshold]
            if hits.size:
                first_sure = int(hits[0])  # undecided indices all lie before first_sure
        if first_sure == lower.size:
            self._n_queries += lower.size
            return None
        self._halted_at = self._n_queries + first_sure
        self._n_queries += first_sure + 1
        return first_sure

    @staticmethod
    def _exact_values(
        values_at: Callable[[NDArray[np.intp]], ArrayLike] | None,
        idx: NDArray[np.intp],
        lower: NDArray[np.float64],
        upper: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        """``values_at(idx)``, checked: finite, one per index, inside the enclosure."""
        if values_at is None:  # pragma: no cover - lower == upper leaves nothing undecided
            raise RuntimeError("internal error: exact values needed but not available")
        exact = check_real_vector(values_at(idx), "values_at(idx)")
        if exact.shape != idx.shape:
            raise ValueError(f"values_at returned shape {exact.shape} for {idx.size} indices")
        if ((exact < lower[idx]) | (exact > upper[idx])).any():
            raise RuntimeError(
                "an exact query value lies outside its enclosure [lower, upper]: the enclosure "
                "is wrong, so the block is not answered"
            )
        return exact

    def ex_post_loss(self, eps_hypothesis: float) -> ExPostLoss:
        """The realised loss so far (Lemma 2.8): ``eps_A + eps_hypothesis`` if halted, else inf.

        ``eps_hypothesis`` is ``eps_t``: the level at which releasing the hypotheses (query
        objects) up to and including the stopping index is DP; 0 for data-independent
        queries.  The loss is a function of the public output only.
        """
        if isinstance(eps_hypothesis, (bool, np.bool_)) or not isinstance(
            eps_hypothesis, numbers.Real
        ):
            raise TypeError(
                f"eps_hypothesis must be a real number, got {type(eps_hypothesis).__name__}"
            )
        eps_h = float(eps_hypothesis)
        if not (math.isfinite(eps_h) and eps_h >= 0):
            raise ValueError(f"eps_hypothesis must be finite and >= 0, got {eps_hypothesis!r}")
        if self._halted_at is None:
            return ExPostLoss(math.inf, self._epsilon, eps_h, None)
        return ExPostLoss(self._epsilon + eps_h, self._epsilon, eps_h, self._halted_at)
