"""PRSMA + Laplace RSPM learning a monotone conjunction on Adult (lab/prsma_adult), end to end."""

from __future__ import annotations

import time

import numpy as np

from lab.prsma_adult import ADULT_INDICATORS, prsma_adult_conjunctions
from oracledp import GuaranteeKind


def test_prsma_adult_end_to_end() -> None:
    t0 = time.perf_counter()
    out = prsma_adult_conjunctions(epsilon=1.0, delta=0.1, random_state=0)
    assert time.perf_counter() - t0 < 120.0
    g = out["guarantee"]
    assert (g.epsilon, g.delta) == (1.0, 0.1)
    assert g.kind is GuaranteeKind.APPROXIMATE
    assert not g.requires_exact_oracle and g.holds
    assert g.diagnostics_released  # the demo reports calls and timings, non-private
    p = out["parameters"]
    assert (p.K, p.R, p.n) == (397, 1176, 32561)
    assert out["n_train"] == 32561 and out["n_test"] == 16281
    assert out["oracle"] == "brute"
    assert out["calls"] == p.K * p.R  # the brute-force oracle never fails
    names = [n for n, _ in ADULT_INDICATORS]
    if out["failed"]:
        assert out["conjunction"] is None and out["test_accuracy"] is None
    else:
        o = np.asarray(out["output"])
        assert o.shape == (6,) and np.isin(o, (0, 1)).all()
        assert out["conjunction"] == [names[j] for j in np.flatnonzero(o)]
        assert 0.0 <= out["test_accuracy"] <= 1.0
    assert 0.0 <= out["nonprivate_best"]["test_accuracy"] <= 1.0
    # same seed, same result (PRSMA streams do not depend on n_jobs)
    again = prsma_adult_conjunctions(epsilon=1.0, delta=0.1, random_state=0)
    assert again["conjunction"] == out["conjunction"]


