"""A black-box privacy audit of one neighbouring pair (spec ``docs/specs/privacy-testing.md``, section 3).

:func:`audit` runs a mechanism ``N`` times on D and ``N`` times on D', counts
how often a pre-registered event happens on each side, and turns the counts
into Clopper-Pearson lower bounds on the privacy loss in both directions
(D against D', then D' against D).  The audit FAILS iff a bound exceeds the
claim; for an (eps, delta)-DP mechanism each direction fails with probability
at most ``alpha`` (default 1e-6), whatever the seed.  Passing is evidence, not
proof.

Samplers and failures
---------------------
A sampler is ``sample(n, rng) -> outputs`` with exactly ``n`` outputs (an
array whose first axis has length ``n``), drawn independently with ``rng``
only.  **Failure outcomes are outputs.**  A mechanism run that ends in an
:class:`~oracledp._errors.OracleFailure`, a "fail" result or a "no halt" must be
mapped to a dedicated outcome value (e.g. :data:`FAILURE`, or a reserved index
such as -1) and kept, never dropped: a data-dependent failure is itself a
privacy leak, and dropping it would hide exactly that.  The harness refuses a
sampler that returns fewer or more than ``n`` outputs.
:func:`failure_aware_sampler` wraps a single-run function this way, and with ``n_jobs``
runs the draws through joblib (so on a Dask cluster too), one child generator per run, with
outputs that do not depend on where they ran.

The event is ``event(outputs) -> bool array of shape (n,)``.  Choose it
before looking at the confirmation runs (spec section 3, steps 1-2).  The same
event is used in both directions; to also test its complement, run a second
audit with ``lambda o: ~event(o)`` on fresh samples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._errors import OracleFailure
from oracledp._validation import RandomLike, check_epsilon, check_rng
from oracledp.audit._bounds import ALPHA, _check_alpha, epsilon_lower_bound, mu_lower_bound

Sampler = Callable[[int, np.random.Generator], Any]
Event = Callable[[Any], Any]


class _Failure:
    """The outcome recorded for a run that failed (singleton :data:`FAILURE`)."""

    _instance: _Failure | None = None

    def __new__(cls) -> _Failure:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "FAILURE"

    def __reduce__(self) -> str:
        return "FAILURE"


FAILURE = _Failure()
"""Dedicated outcome for a failed run (compare with ``is`` or ``==``)."""


def _run_caught(run_once: Callable[[np.random.Generator], Any], gen: np.random.Generator,
                catch: tuple[type[BaseException], ...], failure: Any) -> Any:
    try:
        return run_once(gen)
    except catch:
        return failure


def failure_aware_sampler(
    run_once: Callable[[np.random.Generator], Any],
    *,
    catch: tuple[type[BaseException], ...] = (OracleFailure,),
    failure: Any = FAILURE,
    n_jobs: int | None = None,
    backend: str | None = None,
) -> Sampler:
    """Turn ``run_once(rng) -> output`` into a sampler that records failures as outcomes.

    An exception of a type in ``catch`` becomes the outcome ``failure`` instead of being
    dropped or re-raised.  Outputs are returned as a 1-D object array.

    ``n_jobs=None`` (default): the ``n`` runs call ``run_once`` in turn with the shared
    generator (successive runs draw fresh noise).  ``n_jobs`` an integer: run ``i`` gets its
    own child generator ``rng.spawn(n)[i]`` and the runs go through joblib (``n_jobs``
    processes, ``-1`` = all CPUs; ``backend``, e.g. ``"dask"`` with a running
    ``dask.distributed`` client, or an ambient ``joblib.parallel_config``), so the outputs are
    the same for every ``n_jobs`` and backend at the same seed (they differ from the
    ``n_jobs=None`` stream).  ``run_once`` must then be picklable (joblib's default backend
    pickles closures too).
    """
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int)
                               or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")

    def sample(n: int, rng: np.random.Generator) -> NDArray[np.object_]:
        out = np.empty(n, dtype=object)
        if n_jobs is None:
            for i in range(n):
                out[i] = _run_caught(run_once, rng, catch, failure)
            return out
        children = rng.spawn(n)
        if n_jobs == 1 and backend is None:
            runs = [_run_caught(run_once, g, catch, failure) for g in children]
        else:
            from contextlib import nullcontext

            from joblib import Parallel, delayed, parallel_config

            ctx = parallel_config(backend=backend) if backend is not None else nullcontext()
            with ctx:
                runs = Parallel(n_jobs=n_jobs)(
                    delayed(_run_caught)(run_once, g, catch, failure) for g in children)
        for i, r in enumerate(runs):
            out[i] = r
        return out

    return sample


def is_failure(outputs: Sequence[Any] | NDArray[Any]) -> NDArray[np.bool_]:
    """Boolean mask of the runs whose outcome is :data:`FAILURE`."""
    return np.fromiter((o is FAILURE for o in outputs), dtype=bool, count=len(outputs))


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit` on one pair (D, D') and one event E.

    ``k_d`` / ``k_d2``: runs (of ``n`` per side) in which E happened on D / D'.
    ``eps_lb_forward`` bounds the loss of D against D' (``ln((P_D[E] - delta) / P_D'[E])``),
    ``eps_lb_backward`` the loss of D' against D; ``mu_lb_*`` are the Gaussian-form
    bounds ``Phi^-1(P[E]) - Phi^-1(P'[E])`` in the same directions (meaningful when E
    thresholds a Gaussian statistic).  Each bound errs with probability <= ``alpha``.
    ``passed`` is ``max(eps_lb) <= claimed_epsilon`` (and ``max(mu_lb) <= claimed_mu``
    when a mu claim was given).
    """

    n: int
    k_d: int
    k_d2: int
    alpha: float
    claimed_epsilon: float
    claimed_delta: float
    eps_lb_forward: float
    eps_lb_backward: float
    mu_lb_forward: float
    mu_lb_backward: float
    claimed_mu: float | None = None
    label: str = ""

    @property
    def p_d(self) -> float:
        return self.k_d / self.n

    @property
    def p_d2(self) -> float:
        return self.k_d2 / self.n

    @property
    def eps_lb(self) -> float:
        """The larger of the two directional epsilon lower bounds."""
        return max(self.eps_lb_forward, self.eps_lb_backward)

    @property
    def mu_lb(self) -> float:
        return max(self.mu_lb_forward, self.mu_lb_backward)

    @property
    def passed(self) -> bool:
        ok = self.eps_lb <= self.claimed_epsilon
        if self.claimed_mu is not None:
            ok = ok and self.mu_lb <= self.claimed_mu
        return ok

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        name = f" [{self.label}]" if self.label else ""
        claim = f"eps={self.claimed_epsilon:g}, delta={self.claimed_delta:.3g}"
        if self.claimed_mu is not None:
            claim += f", mu={self.claimed_mu:.4g}"
        return (
            f"audit{name}: {verdict} (claim {claim}; alpha={self.alpha:.3g} per direction)\n"
            f"  event on D : {self.k_d}/{self.n} = {self.p_d:.4f}\n"
            f"  event on D': {self.k_d2}/{self.n} = {self.p_d2:.4f}\n"
            f"  eps_lb  D vs D' = {self.eps_lb_forward:.4f}, D' vs D = {self.eps_lb_backward:.4f}\n"
            f"  mu_lb   D vs D' = {self.mu_lb_forward:.4f}, D' vs D = {self.mu_lb_backward:.4f}"
        )

    def __str__(self) -> str:
        return self.summary()


def _count_event(event: Event, outputs: Any, n: int, side: str) -> int:
    try:
        m = len(outputs)
    except TypeError as exc:
        raise TypeError(f"sampler for {side} must return a sized array of outputs") from exc
    if m != n:
        raise ValueError(
            f"sampler for {side} returned {m} outputs for n = {n} runs; map failed runs to a "
            "dedicated outcome (e.g. oracledp.audit.FAILURE) instead of dropping them"
        )
    mask = np.asarray(event(outputs))
    if mask.dtype != np.bool_ or mask.shape != (n,):
        raise TypeError(
            f"event must return a boolean array of shape ({n},), got dtype {mask.dtype} "
            f"and shape {mask.shape}"
        )
    return int(mask.sum())


def audit(
    sample_d: Sampler,
    sample_d2: Sampler,
    event: Event,
    n: int,
    random_state: RandomLike,
    *,
    claimed_epsilon: float,
    claimed_delta: float = 0.0,
    claimed_mu: float | None = None,
    alpha: float = ALPHA,
    label: str = "",
) -> AuditResult:
    """Audit one neighbouring pair with one pre-registered event, in both directions.

    Parameters
    ----------
    sample_d, sample_d2:
        ``sample(n, rng)`` returning ``n`` independent outputs of the mechanism on
        D and on D' (failures as outcomes, see the module docstring).
    event:
        ``event(outputs)`` returning a boolean array of shape ``(n,)``.
    n:
        Runs per side.
    random_state:
        Seed or Generator; each side gets an independent child stream.
    claimed_epsilon, claimed_delta:
        The claim under test: FAIL iff ``ln((p_lo - delta) / p'_hi) > eps`` in either
        direction, with Clopper-Pearson bounds at ``alpha / 2`` each.
    claimed_mu:
        Optional Gaussian-form claim (shift/sigma); FAIL also iff a ``mu_lb`` exceeds it.
    alpha:
        False-alarm rate of each direction's assertion (default 1e-6).

    Examples
    --------
    Randomized response on one bit (reports the true bit with probability
    ``e / (1 + e)``: exactly 1-DP), the pair D = {1}, D' = {0}, the event "reports 1":

    >>> import math
    >>> import numpy as np
    >>> from oracledp.audit import audit
    >>> keep = math.e / (1 + math.e)
    >>> def respond(bit):
    ...     return lambda n, rng: np.where(rng.random(n) < keep, bit, 1 - bit)
    >>> res = audit(respond(1), respond(0), lambda o: o == 1, 20_000, 0, claimed_epsilon=1.0)
    >>> res.passed, round(res.eps_lb, 2)  # the lower bound approaches 1 from below
    (True, 0.95)
    >>> audit(respond(1), respond(0), lambda o: o == 1, 20_000, 0, claimed_epsilon=0.5).passed
    False
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    n = int(n)
    eps = check_epsilon(claimed_epsilon, "claimed_epsilon")
    dlt = float(claimed_delta)
    if not 0.0 <= dlt < 1.0:
        raise ValueError(f"claimed_delta must be in [0, 1), got {claimed_delta!r}")
    if claimed_mu is not None and not (math.isfinite(claimed_mu) and claimed_mu > 0):
        raise ValueError(f"claimed_mu must be a finite number > 0, got {claimed_mu!r}")
    a = _check_alpha(alpha)
    gen = check_rng(random_state)
    rng_d, rng_d2 = gen.spawn(2)
    k_d = _count_event(event, sample_d(n, rng_d), n, "D")
    k_d2 = _count_event(event, sample_d2(n, rng_d2), n, "D'")
    return AuditResult(
        n=n,
        k_d=k_d,
        k_d2=k_d2,
        alpha=a,
        claimed_epsilon=eps,
        claimed_delta=dlt,
        eps_lb_forward=epsilon_lower_bound(k_d, n, k_d2, n, a, dlt),
        eps_lb_backward=epsilon_lower_bound(k_d2, n, k_d, n, a, dlt),
        mu_lb_forward=mu_lower_bound(k_d, n, k_d2, n, a),
        mu_lb_backward=mu_lower_bound(k_d2, n, k_d, n, a),
        claimed_mu=None if claimed_mu is None else float(claimed_mu),
        label=label,
    )
