"""PRSMA: the Private Robust Subsampling Meta Algorithm (Neel, Roth, Wu, FOCS 2019, Section III-B).

PRSMA turns an algorithm ``A`` that is eps'-DP *when its certifiable oracle is
exact* (e.g. Laplace RSPM, Theorem 6) into one that is (eps, delta)-DP **whatever
the oracle does** (Theorem 8, "robust" privacy).  A certifiable oracle either
returns a certified optimum or says FAIL; it may fail adversarially, e.g. exactly
when one chosen record is in the data (the poison oracle of the test plan).

Algorithm (spec ``docs/specs/oracle-query.md`` section 5; rounding = ceil)::

    eps*, delta* = eps / 62, delta / 11             # Theorem 8; both must be <= 1/2
    K  = ceil((1 / eps*) (1 + ln(2 / delta*)))      # parts
    R  = ceil(ln(K / delta*) / delta*)              # runs of A per part
    discard n mod K random records, split the rest at random into K parts of n' = floor(n / K)
    eps' = 1 / sqrt(8 n' ln(2 K / delta*))          # privacy parameter passed to A
    o_i = PASS unless one of the R runs of A on part i returned FAIL
    T = #{i : o_i = PASS};  T~ = T + Lap(1 / eps*)
    if T~ <= (1 / eps*) (1 + ln(1 / delta*)) or T == 0: return FAIL
    return a uniform draw from {a_ir : o_i = PASS}   (= uniform passing part, then uniform run)

Guarantee (Theorem 8): (eps, delta)-DP, replace-one neighbours, for every behaviour of
a certifiable oracle, provided ``A`` is eps'-DP with an exact oracle (which oracle
behaviours that includes exactly: see "Which oracle behaviours the guarantee covers"
below).  Only ``output`` (an output of ``A`` or :data:`FAIL`) is covered, not the wall
time.  The diagnostics of :class:`PRSMAResult` (which and how many parts passed, calls
made, timings, chosen part) are *not* private: a part's failure may reveal a record.
Never publish them.

The count test rejects even a perfect oracle (threshold decision)
------------------------------------------------------------------
With a perfect oracle T = K, and PRSMA fails iff ``Lap(1/eps*) <= threshold - K``.  Since
``K - threshold >= (1/eps*) ln 2`` (the ceil only adds), that probability is exactly
``p0 = exp(-eps* (K - threshold)) / 2``, which lies in ``(e^{-eps*} / 4, 1/4]``: **about
1/4** for small eps* (e.g. 0.2476 at eps = 1, delta = 0.1).  This contradicts the
"PRSMA does not fail with probability at least 1 - delta" step of Theorem 9's proof;
the accuracy statement of Theorem 9 therefore only holds with probability about 3/4
(times 1 - beta), not 1 - beta.  It does **not** affect privacy (Theorem 8).

We keep the paper's threshold (``threshold="paper"``, the only accepted value), and
report ``p0`` as :attr:`PRSMAParameters.perfect_oracle_fail_probability`.  Why no
corrected threshold: lowering it to make ``p0 <= delta*`` at the same K needs
``threshold <= (1/eps*)(1 + ln 4)``; then a run with only ``T <= 1/eps*`` passing parts
passes the test with probability ``e^{-ln 4} / 2 = 1/8``, while the privacy argument
(step 3 of the proof sketch) needs "few passing parts" to pass with probability
O(delta*).  So the paper's threshold cannot be lowered without breaking the proof as
written.  The alternative (keep the threshold, raise K to
``threshold + ln(1/(2 delta*)) / eps*`` so that ``p0 <= delta*``) changes K, R and eps'
against the paper's constants, and the full proof (arXiv 1811.07765, appendix) is not
available to check it; it is not implemented.  A caller who needs a lower failure rate
can rerun PRSMA, paying the privacy cost of each run by composition.

Cost
----
Exactly ``K * R`` runs of ``A`` in the worst case (:func:`prsma_cost`), e.g. 4.7e5 at
eps = 1, delta = 0.1 and 1.2e8 at eps = 1, delta = 1e-3: PRSMA is practical only for
small demos and large delta.  We make it as cheap as it honestly can be:

* ``base`` draws ``size`` independent runs at once (vectorized over noise draws);
  ``batch`` sets how many runs go into one call (default: all R at once);
* a part stops at its first failing batch (its outputs are never used);
* only one output per part is kept: the run index r_i is drawn uniformly up front,
  which has the same law as the paper's uniform draw from the multiset;
* parts run in parallel with joblib (``n_jobs``, ``backend``, e.g. ``"dask"`` for a
  cluster, see ``docs/cluster.md``).  Part i always uses child stream i of
  ``rng.spawn``, so results do not depend on ``n_jobs`` or the backend;
* a run whose cost exceeds ``max_calls`` is refused (:class:`~oracledp._errors.BudgetError`)
  before any randomness is used.

The base algorithm contract
---------------------------
``base(part_data, eps_prime, rng, size)`` returns either a sequence of exactly ``size``
outputs of ``size`` *independent* runs of ``A`` at privacy ``eps_prime`` on
``part_data``, using only ``rng``, or :data:`FAIL` if the oracle failed in at least one
of them.  It must be eps_prime-DP (pure, replace-one) when its oracle is exact, and
every output it returns must be the exact-oracle run on the same noise: it must turn
every oracle failure into :data:`FAIL` (never an unverified answer).  As a safety net,
PRSMA itself counts a base call that raises (any ``Exception``) or returns anything but
FAIL or ``size`` outputs as a failure of that part (the type of the error is in the
non-private diagnostics, ``part_errors``); it cannot check the outputs themselves.  An
optional ``base.check_data(data)`` validates the format of the whole data set before
any randomness.  For ``n_jobs != 1`` the base must be picklable (a module-level
function or an object such as :class:`ExplicitRSPMBase`).

Which oracle behaviours the guarantee covers
--------------------------------------------
Theorem 8 assumes a *certifiable* oracle: each run of ``A`` either FAILs or is exactly
the run with a perfect oracle, and the failures may be arbitrary (adversarial,
data-dependent).  :class:`~oracledp.learners._prsma_bases.ClassRSPMBase` (oracle
``"highs"`` or an oracle instance) enforces this itself instead of trusting the
oracle's ``certified`` flag.  Each oracle call ends in FAIL unless it returns, within
the base's ``time_limit``, a well-formed certified answer (a ``ClassOracleResult``
with status OPTIMAL, finite objective, non-NaN bound, and parameters of the right
shape that the class accepts) whose reported objective matches the base's own exact
recomputation and which the base verifies:

* classes with at most ``verify_limit`` (default 2^16) hypotheses: by enumeration;
  only the base's own argmin (the ``"brute"`` answer for the same noise) is accepted;
* larger classes: by a certificate the base computes itself (the answer is optimal
  over *all* labelings of the distinct points, hence in the class; near-equal sums are
  compared exactly and an exact tie is FAIL); or, only with
  ``trust_oracle_bound=True``, within ``CERTIFY_ABS_TOL`` of the oracle's reported
  lower bound.

Any ``Exception`` (including ``MemoryError`` and ``RecursionError``) raised by the
oracle or while reading its answer is that run's FAIL.  Hence PRSMA with this base is
(eps, delta)-DP for **every oracle whose calls each behave as a function of that call's
input and independent randomness**: it may return anything (wrong, out-of-class, NaN,
malformed, falsely certified answers), raise any ``Exception``, or take any finite
time.  Precisely what is *not* covered:

* with ``trust_oracle_bound=True``, an oracle that reports a bound above the true
  minimum (the paper's certifiability assumption; the base cannot check that bound),
  and answers within ``CERTIFY_ABS_TOL`` of the minimum that are not the minimizer;
* **wall time** (a timing channel) and other side effects: the guarantee covers the
  output (a release or FAIL), not how long PRSMA takes (a failing part stops early, a
  slow oracle slows the run), nor the oracle's own prints, logs, files or memory use.
  ``time_limit`` turns a late answer into FAIL after the call returns; it cannot stop
  a call (that needs threads or processes; not done);
* an oracle call that never returns, ends the process or a worker (``os._exit``, a
  crash, being killed for memory: joblib then raises), or raises ``KeyboardInterrupt``,
  ``SystemExit`` or another non-``Exception``: then PRSMA returns nothing;
* oracles with memory across calls (e.g. one that fails on every call once it has
  seen a given record, or slows down after one, so that ``time_limit`` fails later
  calls): the proof treats the R runs of a part as independent runs of ``A`` on that
  part, and different parts as independent given the partition; the base does not
  (cannot) reset an oracle's state;
* floating point: answers are verified against the base's float64 computation (as the
  ``"brute"`` path), so exact and float argmins may differ at ulp-level near-ties.

Other bases (e.g. a user-written one) are covered only as far as they meet the contract
above; PRSMA's safety net catches exceptions and malformed batches, not wrong outputs.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, check_diagnostics_flag, release_diagnostics
from oracledp._errors import BudgetError
from oracledp._validation import (
    RandomLike,
    check_delta,
    check_epsilon,
    check_rng,
)
from oracledp.audit._harness import FAILURE
from oracledp.learners._rspm import _rspm_sample_explicit
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee

SOURCE = "Neel, Roth, Wu (FOCS 2019) Theorem 8"

FAIL = FAILURE
"""PRSMA's fail result (and the base's oracle-failure signal); the audit harness's FAILURE."""

EPS_FACTOR = 62.0
"""Theorem 8: running with eps* = eps / 62 gives eps-DP."""
DELTA_FACTOR = 11.0
"""Theorem 8: running with delta* = delta / 11 gives delta-DP."""

Base = Callable[[Any, float, np.random.Generator, int], Any]


@dataclass(frozen=True)
class PRSMAParameters:
    """PRSMA's constants for a data size ``n`` (spec ``docs/specs/oracle-query.md`` section 5).

    ``eps_star = eps/62``, ``delta_star = delta/11`` (Theorem 8);
    ``K = ceil((1/eps*)(1 + ln(2/delta*)))`` parts of ``n_part = floor(n/K)`` records
    (``n_discard = n mod K`` random records are dropped);
    ``R = ceil(ln(K/delta*)/delta*)`` runs per part;
    ``eps_prime = 1/sqrt(8 n_part ln(2K/delta*))``;
    ``threshold = (1/eps*)(1 + ln(1/delta*))`` for the noisy count ``T + Lap(1/eps*)``;
    ``calls = K * R`` (worst case; :func:`prsma_cost`).
    ``epsilon``/``delta`` are the end-to-end guarantee (``62 eps*``, ``11 delta*``).
    """

    n: int
    epsilon: float
    delta: float
    eps_star: float
    delta_star: float
    K: int
    R: int
    n_part: int
    n_discard: int
    eps_prime: float
    threshold: float
    calls: int

    @property
    def count_noise_scale(self) -> float:
        """Scale ``1/eps*`` of the Laplace noise on the passing-part count."""
        return 1.0 / self.eps_star

    @property
    def perfect_oracle_fail_probability(self) -> float:
        """Exact P[FAIL] with an oracle that never fails: ``exp(-eps* (K - threshold)) / 2``.

        In ``(e^{-eps*}/4, 1/4]`` because ``K - threshold >= ln(2)/eps*``; see the module
        docstring (the paper's count test rejects a perfect oracle about 1/4 of the time).
        """
        return 0.5 * math.exp(-self.eps_star * (self.K - self.threshold))


def _check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


def _parameters_from_star(n: int, eps_star: float, delta_star: float) -> PRSMAParameters:
    """The constants for the inner parameters (eps*, delta*), both in (0, 1/2] (Theorem 8)."""
    n = _check_n(n)
    es = check_epsilon(eps_star, "eps_star")
    ds = check_delta(delta_star, "delta_star")
    if es > 0.5:
        raise ValueError(
            f"Theorem 8 requires eps* = eps/62 <= 1/2 (eps <= 31); got eps* = {es:g}"
        )
    if ds > 0.5:
        raise ValueError(
            f"Theorem 8 requires delta* = delta/11 <= 1/2; got delta* = {ds:g}"
        )
    K = math.ceil((1.0 + math.log(2.0 / ds)) / es)
    R = math.ceil(math.log(K / ds) / ds)
    if n < K:
        raise ValueError(
            f"n = {n} is too small for PRSMA's K = {K} parts (eps* = {es:g}, delta* = {ds:g}); "
            f"need n >= {K}, and in practice n >> K (each part should hold many records)"
        )
    n_part = n // K
    return PRSMAParameters(
        n=n,
        epsilon=EPS_FACTOR * es,
        delta=DELTA_FACTOR * ds,
        eps_star=es,
        delta_star=ds,
        K=K,
        R=R,
        n_part=n_part,
        n_discard=n - K * n_part,
        eps_prime=1.0 / math.sqrt(8.0 * n_part * math.log(2.0 * K / ds)),
        threshold=(1.0 + math.log(1.0 / ds)) / es,
        calls=K * R,
    )


def prsma_parameters(n: int, epsilon: float, delta: float) -> PRSMAParameters:
    """PRSMA's constants for an (epsilon, delta)-DP run on ``n`` records (Theorem 8).

    Raises ``ValueError`` when eps* = eps/62 > 1/2 (Theorem 8's range), when delta is not
    in (0, 1), or when n < K.  Golden values: eps = 1, delta = 1e-3 gives K = 682 and
    R = 174138; eps = 1, delta = 0.1 gives K = 397 and R = 1176.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if eps / EPS_FACTOR > 0.5:
        raise ValueError(
            f"Theorem 8 requires eps* = eps/62 <= 1/2, i.e. epsilon <= 31; got epsilon = {eps:g}"
        )
    p = _parameters_from_star(n, eps / EPS_FACTOR, dlt / DELTA_FACTOR)
    # report the caller's numbers exactly (62 * (eps/62) may differ in the last bit)
    return PRSMAParameters(**{**p.__dict__, "epsilon": eps, "delta": dlt})


def prsma_cost(n: int, epsilon: float, delta: float) -> int:
    """Exact worst-case number of base-algorithm runs, ``K * R`` (a batch of b runs counts b).

    Fewer runs happen only when parts fail (each part stops at its first failing batch).
    """
    return prsma_parameters(n, epsilon, delta).calls


def prsma_guarantee(epsilon: float, delta: float) -> PrivacyGuarantee:
    """(epsilon, delta)-DP for every oracle behaviour (robust; Theorem 8)."""
    return PrivacyGuarantee.approximate(
        check_epsilon(epsilon), check_delta(delta), source=SOURCE,
        notes=(
            "robust: holds whatever the certifiable oracle does, provided the base algorithm "
            "is eps'-DP with an exact oracle and releases only verified answers (covered "
            "oracle behaviours: oracledp.learners._prsma docstring); covers the output (or "
            "FAIL) only, not the diagnostics nor the wall time; with a perfect oracle PRSMA "
            "still returns FAIL with probability exp(-eps*(K - threshold))/2, about 1/4"
        ),
    )


@dataclass(frozen=True)
class PRSMAResult:
    """Outcome of :func:`prsma`.

    ``output`` is one output of the base algorithm or :data:`FAIL` (``failed`` says
    which).  ``guarantee`` covers ``output`` only; ``parameters`` (K, R, eps', ...) and
    ``backend`` are public configuration.  The run's **non-private diagnostics** (a
    part's failure can reveal a record) are in ``diagnostics``, only with
    ``return_diagnostics=True``: ``part_passed`` (o_i per part), ``part_errors`` (per
    part: None, or the type name of the exception a base call raised / ``"malformed:
    ..."`` when a part failed that way instead of returning FAIL), ``n_passing`` (T),
    ``chosen_part`` (None on FAIL), ``count_noise`` (z), ``calls`` (runs of the base
    actually made), ``time_parts_s`` and ``time_total_s`` (wall-clock seconds).
    """

    output: Any
    failed: bool
    guarantee: PrivacyGuarantee | None
    parameters: PRSMAParameters
    backend: str = field(default="sequential")
    """``"sequential"`` (in-process loop) or the joblib backend class that ran the parts."""
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)


def _run_part(part_data: Any, base: Base, eps_prime: float, R: int, batch: int,
              rng: np.random.Generator) -> tuple[bool, Any, int, str | None]:
    """Run ``R`` independent runs of ``base`` on one part, in batches, stopping at the first FAIL.

    Returns (passed, kept output, runs made, error).  The kept output is run ``r`` with
    ``r`` uniform in [0, R) drawn first, so it is a uniform draw among the part's R
    outputs.  A batch that raises (any ``Exception``) or returns anything but
    :data:`FAIL` or a sequence of ``size`` outputs fails the part like FAIL; ``error``
    then names what happened (the exception's type, never its message: it may quote
    data), for the non-private diagnostics.
    """
    r_keep = noise.uniform_index(rng, R)
    kept: Any = None
    done = 0
    while done < R:
        size = min(batch, R - done)
        done += size
        try:
            out = base(part_data, eps_prime, rng, size)
            if out is FAIL:
                return False, None, done, None
            try:
                m = len(out)
            except TypeError:
                return False, None, done, "malformed: not a sequence"
            if m != size:
                return False, None, done, "malformed: wrong number of outputs"
            if done - size <= r_keep < done:
                kept = out[r_keep - (done - size)]
        except Exception as exc:  # a base (or its oracle) that raises fails the part
            return False, None, done, type(exc).__name__
    return True, kept, done, None


def _check_n_jobs(n_jobs: object) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or int(n_jobs) == 0:
        raise ValueError(f"n_jobs must be a non-zero integer (-1 = all workers), got {n_jobs!r}")
    return int(n_jobs)


def _check_batch(batch: object, R: int) -> int:
    if batch is None:
        return R
    if isinstance(batch, bool) or not isinstance(batch, numbers.Integral) or int(batch) < 1:
        raise ValueError(f"batch must be None or a positive integer, got {batch!r}")
    return min(int(batch), R)


def _as_records(data: ArrayLike) -> NDArray[Any]:
    arr = np.asarray(data)
    if arr.ndim == 0 or arr.shape[0] == 0:
        raise ValueError("data must be a non-empty array of records (first axis = records)")
    return arr


def _prsma_run(data: NDArray[Any], base: Base, params: PRSMAParameters,
               gen: np.random.Generator, *, n_jobs: int = 1, backend: str | None = None,
               batch: int | None = None, guarantee: PrivacyGuarantee | None = None,
               _count_noise: float | None = None,
               _noise_scale_factor: float = 1.0,
               return_diagnostics: bool = False) -> PRSMAResult:
    """PRSMA with given constants (inputs already validated).

    Streams: ``gen.spawn(K + 3)``: 0 = partition, 1 = count noise, 2 = final choice,
    3 + i = part i (so the result does not depend on ``n_jobs`` or ``backend``).
    ``_count_noise`` (test hook) replaces the Laplace draw z; ``_noise_scale_factor``
    plants a bug (count noise scale multiplied) for the audits' meta-tests.
    ``return_diagnostics`` attaches the non-private diagnostics (the caller warns and
    flags the guarantee).
    """
    t0 = time.perf_counter()
    K, R, n_part = params.K, params.R, params.n_part
    bsize = _check_batch(batch, R)
    streams = gen.spawn(K + 3)
    order = noise.permutation(streams[0], params.n)[: K * n_part].reshape(K, n_part)
    parts = [data[idx] for idx in order]

    t1 = time.perf_counter()
    if backend is None and n_jobs == 1:
        used = "sequential"
        runs = [_run_part(parts[i], base, params.eps_prime, R, bsize, streams[3 + i])
                for i in range(K)]
    else:
        from joblib import Parallel, delayed, parallel_config
        from joblib.parallel import get_active_backend

        tasks = (delayed(_run_part)(parts[i], base, params.eps_prime, R, bsize, streams[3 + i])
                 for i in range(K))
        if backend is None:
            used = type(get_active_backend()[0]).__name__
            runs = Parallel(n_jobs=n_jobs)(tasks)  # joblib's default, or an ambient config
        else:
            # parallel_config registers external backends such as "dask" on first use
            with parallel_config(backend=backend):
                used = type(get_active_backend()[0]).__name__
                runs = Parallel(n_jobs=n_jobs)(tasks)
    t2 = time.perf_counter()

    passed = tuple(bool(r[0]) for r in runs)
    errors = tuple(r[3] for r in runs)
    T = sum(passed)
    calls = int(sum(r[2] for r in runs))
    if _count_noise is None:
        z = float(noise.laplace(streams[1], _noise_scale_factor * params.count_noise_scale))
    else:
        z = float(_count_noise)
    failed = T == 0 or not (T + z > params.threshold)
    chosen: int | None = None
    output: Any = FAIL
    if not failed:
        passing = np.flatnonzero(passed)
        chosen = int(passing[noise.uniform_index(streams[2], T)])
        output = runs[chosen][1]
    diagnostics = None
    if return_diagnostics:
        diagnostics = NonPrivateDiagnostics("prsma", {
            "n_passing": T,
            "part_passed": passed,
            "part_errors": errors,
            "chosen_part": chosen,
            "count_noise": z,
            "calls": calls,
            "time_parts_s": t2 - t1,
            "time_total_s": time.perf_counter() - t0,
        })
    return PRSMAResult(output=output, failed=failed, guarantee=guarantee, parameters=params,
                       backend=used, diagnostics=diagnostics)


def prsma(data: ArrayLike, base: Base, epsilon: float, delta: float, *,
          random_state: RandomLike = None, n_jobs: int = 1, backend: str | None = None,
          max_calls: int = 10**6, threshold: str = "paper",
          batch: int | None = None, return_diagnostics: bool = False) -> PRSMAResult:
    """Run PRSMA (Neel, Roth, Wu 2019, Section III-B): robust (epsilon, delta)-DP (Theorem 8).

    Parameters
    ----------
    data:
        Array of records (first axis); parts are ``data[idx]`` for random index sets.
    base:
        ``base(part_data, eps_prime, rng, size)`` -> ``size`` outputs or :data:`FAIL`;
        must be eps_prime-DP with an exact oracle (module docstring, "contract").  A
        base call that raises or returns a malformed batch fails its part.  An optional
        ``base.check_data(data)`` validates the whole data set first.
    epsilon, delta:
        End-to-end guarantee; inner eps* = epsilon/62 <= 1/2, delta* = delta/11.
    random_state:
        Seed or numpy Generator, the only source of randomness.
    n_jobs, backend:
        joblib parallelism over the K parts (``backend="dask"`` runs them on the
        ``dask.distributed`` Client of the session, see ``docs/cluster.md``).  With
        ``n_jobs=1`` and no backend the parts run in-process, without joblib.  Results
        are identical for every ``n_jobs``/backend at the same seed.
    max_calls:
        Refuse (:class:`~oracledp._errors.BudgetError`) a run whose worst-case cost
        :func:`prsma_cost` exceeds this, before any randomness is used.
    threshold:
        ``"paper"`` (the only value): ``(1/eps*)(1 + ln(1/delta*))``.  A perfect oracle
        then fails with probability ``parameters.perfect_oracle_fail_probability``
        (about 1/4); see the module docstring for why no lower threshold is offered.
    batch:
        Runs per base call (default: all R runs of a part in one vectorized call).
        Smaller batches stop a failing part earlier, at more Python calls.
    return_diagnostics:
        Attach :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (per-part outcomes
        and error types, passing count, count noise, chosen part, base runs made, timings).  For research
        only: issues a :class:`~oracledp._errors.DiagnosticsWarning` and sets
        ``guarantee.diagnostics_released``.

    Returns
    -------
    PRSMAResult with ``output`` (or :data:`FAIL`, ``failed=True``) and the guarantee.

    Examples
    --------
    Two hypotheses over a universe of two records (ids 0 and 1): hypothesis 0 errs on
    record 0, hypothesis 1 on record 1; the base is Laplace RSPM with exact enumeration.

    >>> import numpy as np
    >>> from oracledp.learners._prsma import ExplicitRSPMBase, prsma
    >>> base = ExplicitRSPMBase(losses=[[1.0, 0.0], [0.0, 1.0]], patterns=[[1.0], [0.0]])
    >>> data = np.array([0] * 100 + [1] * 297)
    >>> res = prsma(data, base, 1.0, 0.1, random_state=0)
    >>> res.failed, int(res.output), (res.parameters.K, res.parameters.R)
    (False, 0, (397, 1176))
    >>> res.guarantee.describe().split(";")[0]
    '(1, 0.1)-DP, replace-one neighbours'
    """
    if threshold != "paper":
        raise ValueError(
            f"threshold must be 'paper', got {threshold!r}: a lower threshold breaks the "
            "privacy argument of Theorem 8 (see oracledp.learners._prsma docstring)"
        )
    want_diag = check_diagnostics_flag(return_diagnostics)
    if not callable(base):
        raise TypeError("base must be callable: base(part_data, eps_prime, rng, size)")
    if isinstance(max_calls, bool) or not isinstance(max_calls, numbers.Integral) or max_calls < 1:
        raise ValueError(f"max_calls must be a positive integer, got {max_calls!r}")
    jobs = _check_n_jobs(n_jobs)
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend must be None or a joblib backend name, got {backend!r}")
    records = _as_records(data)
    check_data = getattr(base, "check_data", None)
    if check_data is not None:
        check_data(records)  # a wrong data format raises here, not as K failing parts
    params = prsma_parameters(records.shape[0], epsilon, delta)
    _check_batch(batch, params.R)
    if params.calls > max_calls:
        raise BudgetError(
            f"PRSMA needs {params.calls} base-algorithm runs (K = {params.K} parts x R = "
            f"{params.R} runs) > max_calls = {max_calls}; raise max_calls or use a larger delta"
        )
    gen = check_rng(random_state)  # no draw happens before this point
    res = _prsma_run(records, base, params, gen, n_jobs=jobs, backend=backend, batch=batch,
                     guarantee=prsma_guarantee(params.epsilon, params.delta),
                     return_diagnostics=want_diag)
    if want_diag and res.guarantee is not None:
        res = replace(res, guarantee=release_diagnostics(res.guarantee, "PRSMA"))
    return res


@dataclass(frozen=True, eq=False)
class ExplicitRSPMBase:
    """A PRSMA base: Laplace RSPM (Theorem 6) over an explicit finite class and universe.

    Records are integer ids into a finite universe X.  ``losses[x, q]`` is the loss of
    hypothesis q on record x, ``patterns[q, j]`` its loss on separator example u_j
    (m = ``patterns.shape[1]``).  One call draws ``size`` RSPM outputs (hypothesis
    indices) at once with ``eta ~ Lap(2m/eps')^m`` per run: eps'-DP with an exact
    oracle (here: exact enumeration).

    The oracle is *certifiable but adversarial* when ``fail_records`` is set: it fails
    whenever the part contains one of those records (with probability
    ``fail_probability`` per run, independently), and the base then returns
    :data:`FAIL`.  This is the P1 poison oracle of the test plan.  Picklable, so it
    can be shipped to joblib/Dask workers.
    """

    losses: NDArray[np.floating]
    patterns: NDArray[np.floating]
    fail_records: tuple[int, ...] = ()
    fail_probability: float = 1.0
    _fail_mask: NDArray[np.bool_] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        losses = np.asarray(self.losses, dtype=np.float64)
        patterns = np.asarray(self.patterns, dtype=np.float64)
        if losses.ndim != 2 or patterns.ndim != 2 or losses.shape[1] != patterns.shape[0]:
            raise ValueError("need losses of shape (|X|, |Q|) and patterns of shape (|Q|, m)")
        if not (np.isfinite(losses).all() and np.isfinite(patterns).all()):
            raise ValueError("losses and patterns must be finite")
        if not 0.0 < self.fail_probability <= 1.0:
            raise ValueError("fail_probability must be in (0, 1]")
        object.__setattr__(self, "losses", losses)
        object.__setattr__(self, "patterns", patterns)
        fails = tuple(int(x) for x in self.fail_records)
        if any(not 0 <= x < losses.shape[0] for x in fails):
            raise ValueError("fail_records must be record ids in [0, |X|)")
        mask = np.zeros(losses.shape[0], dtype=bool)
        mask[list(fails)] = True
        object.__setattr__(self, "fail_records", fails)
        object.__setattr__(self, "_fail_mask", mask)

    def __call__(self, part: Sequence[int] | NDArray[np.integer], eps_prime: float,
                 rng: np.random.Generator, size: int) -> Any:
        ids = np.asarray(part, dtype=np.intp)
        if self.fail_records and self._fail_mask[ids].any():
            if self.fail_probability >= 1.0 or (rng.random(size) < self.fail_probability).any():
                return FAIL
        counts = np.bincount(ids, minlength=self.losses.shape[0])
        data_loss = counts @ self.losses
        return _rspm_sample_explicit(data_loss, self.patterns, eps_prime, size, rng)


__all__ = [
    "FAIL",
    "SOURCE",
    "ExplicitRSPMBase",
    "PRSMAParameters",
    "PRSMAResult",
    "prsma",
    "prsma_cost",
    "prsma_guarantee",
    "prsma_parameters",
]
