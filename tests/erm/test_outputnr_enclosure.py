"""OutputNR's test search with certified excess-risk bounds (an evaluation strategy, not a new algorithm).

OutputNR answers InteractiveAboveThreshold's test ``f^t + Lap >= W_hat`` with
``f^t = -(L(theta^t) - L(theta*))`` for each level.  The search decides most tests
from O(p^2) bounds on the excess risk (``LogisticProblem.excess_risk_enclosure``)
and computes the exact excess risk only where the bounds leave the answer open
(``InteractiveAboveThreshold.first_above_enclosed``).  These tests check that
nothing but the cost changes:

* the bounds contain the *computed* excess risk, near and far from theta*;
* ``first_above_enclosed`` gives ``first_above``'s answer with the same noise
  (same generator state afterwards), asks for exact values only where its bounds
  leave the answer open, and refuses an exact value outside its enclosure;
* OutputNR releases exactly (bit for bit) what testing every level's exact excess
  risk releases, on synthetic data and on a KDD-99 sample;
* the bounds spare most passes over the data.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from oracledp.datasets import load_kdd99
from oracledp.erm import LogisticProblem, outputnr
from oracledp.mechanisms import InteractiveAboveThreshold

LAM = 0.005


def _logistic_problem(seed: int, n: int = 400, p: int = 5, lam: float = LAM) -> LogisticProblem:
    """Rows with ||x||_1 <= 1 (a tenth exactly on the sphere, a fifth duplicated), labels from a
    logistic model."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X /= np.abs(X).sum(axis=1, keepdims=True)
    r = rng.random(n)
    r[: max(1, n // 10)] = 1.0
    X *= r[:, None]
    X[np.abs(X).sum(axis=1) > 1.0] *= 1.0 - 1e-15
    X[n // 2 : n // 2 + n // 5] = X[: n // 5]  # duplicates: compressed with weights
    w = 8 * rng.normal(size=p)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return LogisticProblem.from_data(X, y, lam)


def _probe_thetas(prob: LogisticProblem, rng: np.random.Generator) -> NDArray[np.float64]:
    """theta*, points at distances 1e-9 .. 2M from it (dense and sparse directions) inside the
    M-ball (where OutputNR's hypotheses live) and a few outside it, and points uniform in the ball."""
    p = prob.p
    out = [prob.theta_star[None]]
    for dist in np.geomspace(1e-9, 2 * prob.radius, 40):
        dense = rng.laplace(size=(3, p))
        sparse = np.zeros((2, p))
        sparse[np.arange(2), rng.integers(0, p, size=2)] = rng.choice([-1.0, 1.0], size=2)
        dirs = np.vstack([dense, sparse])
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        th = prob.theta_star + dist * dirs
        norms = np.linalg.norm(th, axis=1, keepdims=True)
        inside = th * np.minimum(1.0, prob.radius * (1 - 1e-12) / norms)
        out += [inside, th[:1]]
    ball = rng.normal(size=(200, p))
    ball *= prob.radius * rng.random((200, 1)) ** (1 / p) / np.linalg.norm(ball, axis=1)[:, None]
    return np.vstack([*out, ball])


@pytest.mark.parametrize(
    ("seed", "n", "p", "lam"),
    [
        (0, 400, 5, LAM),
        (1, 400, 1, LAM),
        (2, 60, 12, LAM),
        (3, 400, 5, 0.5),
        (4, 2_000, 38, LAM),
        # tiny lambda: M ~ 1177, |theta*| ~ 100, so R far beyond the Taylor factors' range
        (11, 5, 32, 1e-6),
        (12, 50, 10, 1e-4),
        (13, 3_000, 3, 2.0),
    ],
)
def test_enclosure_contains_the_computed_excess_risk(seed: int, n: int, p: int, lam: float) -> None:
    prob = _logistic_problem(seed, n, p, lam)
    thetas = _probe_thetas(prob, np.random.default_rng(100 + seed))
    excess = prob.excess_risk(thetas)
    lower, upper = prob.excess_risk_enclosure(thetas)
    assert np.isfinite(lower).all() and np.isfinite(upper).all()
    assert (lower <= excess).all() and (excess <= upper).all()
    # one theta at a time: the same bounds (no batch effects)
    lo1, hi1 = prob.excess_risk_enclosure(thetas[7])
    assert lo1[0] == lower[7] and hi1[0] == upper[7]
    if lam < LAM:  # the loss is too flat near theta* for the tightness check below
        return
    # useful, not only valid: where the excess is well above rounding and the hypothesis
    # close to theta* (as at OutputNR's stopping levels), the bounds are within 25%
    d = np.linalg.norm(thetas - prob.theta_star, axis=1)
    near = (excess > 1e-6) & (d < 0.5)
    assert near.sum() >= 5
    assert ((upper - lower)[near] <= 0.25 * excess[near]).all()


def test_enclosure_on_kdd99_sample() -> None:
    ds = load_kdd99(n=2_000, random_state=0, task="logistic")
    prob = LogisticProblem.from_data(ds.X, ds.y)
    thetas = _probe_thetas(prob, np.random.default_rng(5))
    excess = prob.excess_risk(thetas)
    lower, upper = prob.excess_risk_enclosure(thetas)
    assert (lower <= excess).all() and (excess <= upper).all()


# --- first_above_enclosed ----------------------------------------------------------------------------
def _enclosure(rng: np.random.Generator, values: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """Random enclosures of ``values``: some exact, some tight, some wide."""
    width = rng.choice([0.0, 1e-3, 0.3, 3.0, 100.0], size=values.size) * rng.random(values.size)
    share = rng.random(values.size)
    return values - share * width, values + (1 - share) * width


@pytest.mark.parametrize("seed", range(200))
def test_first_above_enclosed_answers_like_first_above(seed: int) -> None:
    """Same seed: same halting index, query count and generator state after every block; exact
    values are asked for at most once per block, only where the enclosure is not a point."""
    rng = np.random.default_rng(seed)
    eps, W, delta = float(rng.choice([0.3, 1.0, 5.0])), float(rng.normal()), 1.0
    plain = InteractiveAboveThreshold(eps, W, delta,
                                      random_state=np.random.default_rng(seed + 1000))
    enclosed = InteractiveAboveThreshold(eps, W, delta,
                                         random_state=np.random.default_rng(seed + 1000))
    for _ in range(6):  # several blocks on the same instances
        values = rng.normal(size=int(rng.integers(0, 30))) * 3 + W - 4
        lower, upper = _enclosure(rng, values)
        asked: list[NDArray[np.intp]] = []

        def values_at(
            idx: NDArray[np.intp], v: NDArray = values, seen: list = asked
        ) -> NDArray[np.float64]:
            seen.append(idx.copy())
            return v[idx]

        k = plain.first_above(values)
        assert enclosed.first_above_enclosed(lower, upper, values_at) == k
        assert enclosed.n_queries == plain.n_queries and enclosed.halted_at == plain.halted_at
        assert (
            enclosed._rng.bit_generator.state == plain._rng.bit_generator.state  # same noise drawn
        )
        assert len(asked) <= 1
        if asked:
            idx = asked[0]
            assert (np.diff(idx) > 0).all() and (lower[idx] < upper[idx]).all()
        if k is not None:
            break


def test_first_above_enclosed_with_exact_bounds_never_asks() -> None:
    iat = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1)

    def never(idx: Any) -> Any:
        raise AssertionError("asked for exact values although the enclosure is exact")

    assert iat.first_above_enclosed([-1e9, 1e9], [-1e9, 1e9], never) == 1


def test_first_above_enclosed_refuses_wrong_enclosures() -> None:
    wide_lo, wide_hi = [-1e9, -1e9], [1e9, 1e9]
    iat = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1)
    with pytest.raises(RuntimeError, match="outside its enclosure"):
        iat.first_above_enclosed(wide_lo, wide_hi, lambda idx: np.full(idx.size, 2e9))
    # the block's noise was drawn: the instance refuses to answer again (fresh noise on the
    # same queries would spend privacy twice)
    for ask in (lambda: iat.first_above([0.0]), lambda: iat.test(0.0)):
        with pytest.raises(RuntimeError, match="no further queries"):
            ask()
    assert iat.n_queries == 0 and not iat.halted
    with pytest.raises(ValueError, match="shape"):
        InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1).first_above_enclosed(
            wide_lo, wide_hi, lambda idx: np.zeros(idx.size + 1)
        )
    with pytest.raises(ValueError, match="lower must be <= upper"):
        InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1).first_above_enclosed(
            [1.0], [0.0], lambda idx: idx
        )
    with pytest.raises(ValueError, match="differ in shape"):
        InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1).first_above_enclosed(
            [0.0], [0.0, 1.0], lambda idx: idx
        )
    with pytest.raises(ValueError, match="NaN or infinite"):
        InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1).first_above_enclosed(
            wide_lo, wide_hi, lambda idx: np.full(idx.size, math.nan)
        )
    with pytest.raises(ValueError, match="NaN or infinite"):
        InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1).first_above_enclosed(
            [0.0, -math.inf], [0.0, 1.0], lambda idx: idx
        )


# --- OutputNR: the same release as testing every exact excess risk ---------------------------------
def _exact_enclosure(self: LogisticProblem, thetas: Any) -> tuple[NDArray, NDArray]:
    """The brute-force search: every level's exact excess risk, nothing left to bound."""
    e = self.excess_risk(thetas)
    return e, e


def _same_release(prob: LogisticProblem, alphas: Any, seeds: Any, mp: pytest.MonkeyPatch) -> None:
    """Every (alpha, seed) run releases what the brute-force search (every level's exact excess
    risk) releases.  Noise reduction keeps a hypothesis over runs of consecutive levels, so a
    search's 1,000 levels hold ~170 distinct rows on the default problem: each distinct row's
    exact excess risk is computed once, in a batch of the rows not seen yet, and reused; bit
    for bit the value of any other batch (``test_excess_risk_is_batch_invariant``)."""
    runs = [(a, s) for a in alphas for s in seeds]
    fast = [outputnr(prob, None, a, random_state=s, allow_no_halt=True) for a, s in runs]
    known: dict[bytes, float] = {}

    def exact_once(self: LogisticProblem, thetas: Any) -> tuple[NDArray, NDArray]:
        assert self is prob
        rows = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
        keys = [r.tobytes() for r in rows]
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # first index of each row
        new = [i for k, i in first.items() if k not in known]
        if new:
            for i, v in zip(new, _exact_enclosure(self, rows[new])[0], strict=True):
                known[keys[i]] = float(v)
        e = np.array([known[k] for k in keys], dtype=np.float64)
        return e, e

    mp.setattr(LogisticProblem, "excess_risk_enclosure", exact_once)
    for (a, s), r in zip(runs, fast, strict=True):
        ref = outputnr(prob, None, a, random_state=s, allow_no_halt=True)
        assert r.stopping_index == ref.stopping_index, (a, s)
        np.testing.assert_array_equal(r.theta, ref.theta)
        assert r.epsilon == ref.epsilon


@pytest.mark.parametrize("seed", range(3))
def test_outputnr_releases_what_the_exact_search_releases(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    prob = _logistic_problem(seed, n=2_000, p=6)
    _same_release(prob, (0.002, 0.01, 0.05), range(15), monkeypatch)


def test_outputnr_releases_what_the_exact_search_releases_kdd99(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ds = load_kdd99(n=2_000, random_state=0, task="logistic")
    prob = LogisticProblem.from_data(ds.X, ds.y)
    _same_release(prob, (0.01, 0.05, 0.2), range(10), monkeypatch)


def test_outputnr_reads_the_data_for_few_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the bounds: most tested levels are answered without a pass over the data."""
    prob = _logistic_problem(0, n=2_000, p=6)
    exact_levels = 0
    real = LogisticProblem.excess_risk

    def counting(self: LogisticProblem, thetas: Any) -> NDArray[np.float64]:
        nonlocal exact_levels
        exact_levels += np.atleast_2d(thetas).shape[0]
        return real(self, thetas)

    monkeypatch.setattr(LogisticProblem, "excess_risk", counting)
    tested = 0
    for s in range(10):
        r = outputnr(prob, None, 0.01, random_state=s)
        tested += r.stopping_index + 1
    assert tested > 1_000
    assert exact_levels <= 0.1 * tested  # includes any diagnostic of the released theta


# --- batch invariance: a level's excess risk never depends on the levels evaluated with it -------
def _batch_invariance_thetas(prob: LogisticProblem, seed: int) -> NDArray[np.float64]:
    """Hypotheses like OutputNR's: theta* plus Laplace noise at many scales, in the M-ball."""
    rng = np.random.default_rng(seed)
    th = prob.theta_star + rng.laplace(size=(96, prob.p)) * np.geomspace(1e-5, 3, 96)[:, None]
    norms = np.linalg.norm(th, axis=1, keepdims=True)
    return th * np.minimum(1.0, prob.radius * (1 - 1e-12) / norms)


def _assert_batch_invariant(prob: LogisticProblem, thetas: NDArray[np.float64]) -> None:
    from threadpoolctl import threadpool_limits

    ref = np.array([prob.excess_risk(t)[0] for t in thetas])  # one level at a time
    rng = np.random.default_rng(0)
    perm = rng.permutation(thetas.shape[0])
    idx = np.sort(rng.choice(thetas.shape[0], size=5, replace=False))
    fortran = np.asfortranarray(thetas)
    strided = np.repeat(thetas, 2, axis=0)[::2]  # a non-contiguous view
    batches = {
        "all at once": (prob.excess_risk(thetas), ref),
        "blocks of 32": (np.concatenate([prob.excess_risk(thetas[i : i + 32])
                                         for i in range(0, thetas.shape[0], 32)]), ref),
        "permuted": (prob.excess_risk(thetas[perm]), ref[perm]),
        "subset": (prob.excess_risk(thetas[idx]), ref[idx]),
        "pairs": (np.concatenate([prob.excess_risk(thetas[i : i + 2])
                                  for i in range(0, thetas.shape[0], 2)]), ref),
        "fortran order": (prob.excess_risk(fortran), ref),
        "strided view": (prob.excess_risk(strided), ref),
        "loss vs excess": (prob.loss(thetas) - prob.loss_star, ref),
    }
    for limit in (1, 2):
        with threadpool_limits(limits=limit, user_api="blas"):
            batches[f"{limit} BLAS threads"] = (prob.excess_risk(thetas), ref)
            batches[f"{limit} BLAS threads, single"] = (prob.excess_risk(thetas[7]), ref[7:8])
    for name, (got, want) in batches.items():
        np.testing.assert_array_equal(got, want, err_msg=name)  # bit for bit


@pytest.mark.parametrize(("seed", "n", "p", "lam"), [(0, 2_000, 6, LAM), (4, 2_000, 38, LAM),
                                                     (11, 5, 32, 1e-6), (13, 3_000, 3, 2.0)])
def test_excess_risk_is_batch_invariant(seed: int, n: int, p: int, lam: float) -> None:
    prob = _logistic_problem(seed, n, p, lam)
    _assert_batch_invariant(prob, _batch_invariance_thetas(prob, seed))


def test_excess_risk_is_batch_invariant_kdd99() -> None:
    ds = load_kdd99(n=20_000, random_state=0, task="logistic")
    prob = LogisticProblem.from_data(ds.X, ds.y)
    _assert_batch_invariant(prob, _batch_invariance_thetas(prob, 1))


def test_excess_risk_fixed_order_of_operations() -> None:
    """The documented order: margin -<u_j, theta> summed over i = 0..p-1 in sequence (exact
    zeros add nothing), log(1 + exp) elementwise, NumPy's pairwise sum of w_j * softplus_j."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):  # pragma: no cover
        pytest.skip("compilers may fuse multiply-adds in SciPy's loop on other platforms")
    prob = _logistic_problem(2, n=600, p=9)
    for theta in _batch_invariance_thetas(prob, 2)[::7]:
        z = np.zeros(prob.rows.shape[0])
        for i in range(prob.p):  # elementwise IEEE products and sums, in column order
            z = z + prob.rows[:, i] * -theta[i]
        soft = np.log1p(np.exp(z))
        want = float(np.add.reduce(prob.weights * soft)) + 0.5 * prob.lam * float(
            np.add.reduce(theta * theta))
        assert prob.loss(theta)[0] == want


# --- 1-ulp ties: the enclosed search decides them like the exhaustive search ---------------------
class _NoiseRecorder:
    """Forwards ``laplace`` to a Generator and records what it drew."""

    def __init__(self, gen: np.random.Generator, draws: list[NDArray[np.float64]]) -> None:
        self._gen, self._draws = gen, draws

    def laplace(self, *args: Any, **kwargs: Any) -> Any:
        out = self._gen.laplace(*args, **kwargs)
        self._draws.append(np.atleast_1d(np.array(out, dtype=np.float64)))
        return out


def _rig(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Make OutputNR's IAT use a chosen noisy threshold W_hat (its noise is still drawn, so the
    generator's stream is unchanged) and record the query noise and the hypotheses."""
    onr = importlib.import_module("oracledp.erm._outputnr")

    rig: dict[str, Any] = {"w": None, "noise": [], "thetas": None}

    class RiggedIAT(InteractiveAboveThreshold):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._noisy_threshold = rig["w"]
            rig["noise"] = []
            self._rng = _NoiseRecorder(self._rng, rig["noise"])  # type: ignore[assignment]

    real_project = onr.project_to_ball

    def recording_project(thetas: Any, radius: float) -> NDArray[np.float64]:
        out = real_project(thetas, radius)
        rig["thetas"] = out.copy()
        return out

    monkeypatch.setattr(onr, "InteractiveAboveThreshold", RiggedIAT)
    monkeypatch.setattr(onr, "project_to_ball", recording_project)
    return rig


def _tie_cases(prob: LogisticProblem, alpha: float, seed: int, rig: dict[str, Any]) -> Any:
    """The noisy query values v_t = fl(f^t + noise_t) of a run, and the thresholds that put a
    test exactly on a 1-ulp edge: for each running record v_j > max(v_<j), W_hat = v_j halts at
    j (v_j >= W_hat) and W_hat = nextafter(v_j, +inf) does not (all v_<=j < W_hat)."""
    rig["w"] = 1e300  # nothing passes: every level is tested and its noise recorded
    outputnr(prob, None, alpha, random_state=seed, allow_no_halt=True)
    noise = np.concatenate(rig["noise"])  # the query noise of every block, in order
    f = -prob.excess_risk(rig["thetas"])
    assert noise.shape == f.shape
    v = f + noise  # what IAT compares with W_hat
    records = [j for j in range(v.size) if j == 0 or v[j] > v[:j].max()]
    for j in records[-6:]:
        yield j, float(v[j])
        yield None, math.nextafter(float(v[j]), math.inf)


def _exhaustive_search(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """OutputNR testing every level's exact excess risk: the public ``search="exhaustive"`` or
    the brute-force enclosure (every value computed in one batch, lower == upper)."""
    if kind == "search":
        return lambda *a, **k: outputnr(*a, search="exhaustive", **k)

    def brute(*a: Any, **k: Any) -> Any:
        with monkeypatch.context() as mp:
            mp.setattr(LogisticProblem, "excess_risk_enclosure", _exact_enclosure)
            return outputnr(*a, **k)

    return brute


@pytest.mark.parametrize("kind", ["brute-force", "search"])
@pytest.mark.parametrize(("seed", "alpha"), [(0, 0.01), (1, 0.002), (2, 0.05)])
def test_one_ulp_ties_halt_where_the_exhaustive_search_halts(
    seed: int, alpha: float, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prob = _logistic_problem(seed, n=2_000, p=6)
    rig = _rig(monkeypatch)
    exhaustive = _exhaustive_search(kind, monkeypatch)
    cases = list(_tie_cases(prob, alpha, 100 + seed, rig))
    assert len(cases) >= 4
    for expected, w in cases:
        rig["w"] = w
        ref = exhaustive(prob, None, alpha, random_state=100 + seed, allow_no_halt=True)
        if expected is not None:  # the tie is real: the exhaustive search halts exactly there
            assert ref.stopping_index == expected
        fast = outputnr(prob, None, alpha, random_state=100 + seed, allow_no_halt=True)
        assert fast.stopping_index == ref.stopping_index, (expected, w)
        np.testing.assert_array_equal(fast.theta, ref.theta)
        assert fast.epsilon == ref.epsilon


def test_one_ulp_ties_halt_where_the_exhaustive_search_halts_kdd99(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ds = load_kdd99(n=4_000, random_state=1, task="logistic")
    prob = LogisticProblem.from_data(ds.X, ds.y)
    rig = _rig(monkeypatch)
    exhaustive = _exhaustive_search("brute-force", monkeypatch)
    for expected, w in _tie_cases(prob, 0.02, 7, rig):
        rig["w"] = w
        ref = exhaustive(prob, None, 0.02, random_state=7, allow_no_halt=True)
        assert expected is None or ref.stopping_index == expected
        fast = outputnr(prob, None, 0.02, random_state=7, allow_no_halt=True)
        assert fast.stopping_index == ref.stopping_index, (expected, w)
        np.testing.assert_array_equal(fast.theta, ref.theta)


# --- search="exhaustive": the passes over the data are a function of the release --------------------
def test_exhaustive_search_passes_depend_on_the_release_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """search="exhaustive" evaluates min(T, block * ceil((k + 1) / block)) levels exactly (T without
    a halt) and releases what the enclosed search releases."""
    prob = _logistic_problem(0, n=2_000, p=6)
    counts: dict[str, list[int]] = {"exhaustive": [], "enclosed": []}
    current = ["enclosed"]
    real = LogisticProblem.excess_risk

    def counting(self: LogisticProblem, thetas: Any) -> NDArray[np.float64]:
        counts[current[0]][-1] += np.atleast_2d(thetas).shape[0]
        return real(self, thetas)

    monkeypatch.setattr(LogisticProblem, "excess_risk", counting)
    for s in range(12):
        for block in (32, 7):
            runs = {}
            for mode in ("exhaustive", "enclosed"):
                current[0] = mode
                counts[mode].append(0)
                runs[mode] = outputnr(prob, None, 0.01, random_state=s, block_size=block,
                                      search=mode)
            k = runs["exhaustive"].stopping_index
            assert k is not None and runs["enclosed"].stopping_index == k
            np.testing.assert_array_equal(runs["enclosed"].theta, runs["exhaustive"].theta)
            assert runs["enclosed"].epsilon == runs["exhaustive"].epsilon
            assert counts["exhaustive"][-1] == min(1000, block * math.ceil((k + 1) / block))
    # without a halt every level is evaluated
    current[0] = "exhaustive"
    counts["exhaustive"].append(0)
    r = outputnr(prob, None, 0.01, eps_list=(1e-6, 1e-5, 50), random_state=0, search="exhaustive",
                 allow_no_halt=True)
    assert r.stopping_index is None and counts["exhaustive"][-1] == 50
    with pytest.raises(ValueError, match="search"):
        outputnr(prob, None, 0.01, random_state=0, search="fast")


def test_enclosed_block_exact_work_is_not_a_function_of_the_answer() -> None:
    """The documented channel, in its simplest form: two blocks with the same answer (no pass)
    whose exact values are asked for in one case and not in the other."""
    asked: list[int] = []

    def values_at(idx: NDArray[np.intp]) -> NDArray[np.float64]:
        asked.append(idx.size)
        return np.full(idx.size, -1e6)

    for lower, upper in (([-1e6] * 4, [-1e6] * 4), ([-1e6] * 4, [1e6] * 4)):
        iat = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=3)
        assert iat.first_above_enclosed(lower, upper, values_at) is None
    assert asked == [4]
