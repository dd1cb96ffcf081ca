"""One synthesizer interface: every synthesizer is a Synthesizer with the same behaviour."""

from __future__ import annotations

import importlib.util
import pickle

import numpy as np
import pandas as pd
import pytest

from oracledp.synth import (
    Domain,
    IndependentMarginalsSynthesizer,
    MWEMSynthesizer,
    OracleQueryPGM,
    OracleQuerySynthesizer,
    Synthesizer,
    independent_marginals,
    kway_marginal_workload,
    mwem,
)

DOM = Domain(("a", "b", "c"), ((0, 1), (0, 1, 2), ("x", "y")))
CODES = np.random.default_rng(3).integers(0, [2, 3, 2], size=(60, 3))
HAS_MBI = importlib.util.find_spec("mbi") is not None


def _all() -> list[object]:
    from oracledp.synth import AIMSynthesizer, MSTSynthesizer

    needs_mbi = pytest.mark.skipif(not HAS_MBI, reason="MST and AIM need the peers extra (mbi)")
    return [
        IndependentMarginalsSynthesizer(1.0, random_state=0),
        MWEMSynthesizer(1.0, k=2, rounds=3, random_state=0),
        OracleQuerySynthesizer(1.0, 1e-6, k=2, max_rounds=3, random_state=0),
        OracleQueryPGM(1.0, 1e-6, k=2, rounds=2, random_state=0),
        pytest.param(MSTSynthesizer(1.0, k=2, random_state=0), marks=needs_mbi),
        pytest.param(AIMSynthesizer(1.0, k=2, random_state=0), marks=needs_mbi),
    ]


@pytest.mark.parametrize("syn", _all(), ids=["independent", "mwem", "oracle_query",
                                          "oracle_query_pgm", "mst", "aim"])
def test_one_interface(syn: Synthesizer, short_peer_estimation: None) -> None:
    assert isinstance(syn, Synthesizer)
    with pytest.raises(RuntimeError, match="call fit"):
        syn.answer()
    assert syn.fit(CODES, DOM) is syn
    assert syn.guarantee_.holds and syn.n_ == 60 and syn.domain_ == DOM
    ans = syn.answer()
    assert ans.shape == (len(syn.workload_),) and np.all(np.isfinite(ans))
    codes = syn.sample_codes(10)
    assert codes.shape == (10, 3)
    DOM.check_codes(codes, "sample")
    df = syn.sample(5, random_state=1)
    assert isinstance(df, pd.DataFrame) and list(df.columns) == ["a", "b", "c"]
    # a pickle carries the release, never the generator behind the noise
    back = pickle.loads(pickle.dumps(syn))
    assert getattr(back, "_rng", None) is None
    assert np.array_equal(back.answer(), ans)
    with pytest.raises(ValueError, match="pass random_state"):
        back.sample_codes(3)
    assert back.sample_codes(3, random_state=2).shape == (3, 3)


def test_classes_release_what_the_functions_release() -> None:
    wl = kway_marginal_workload(DOM, 2)
    syn = MWEMSynthesizer(0.5, k=2, rounds=4, random_state=7).fit(CODES, DOM)
    res = mwem(CODES, DOM, wl, 0.5, 4, 7)
    assert np.array_equal(syn.answer(), res.answer(wl)) and syn.guarantee_ == res.guarantee
    ind = IndependentMarginalsSynthesizer(0.5, k=2, random_state=7).fit(CODES, DOM)
    res2 = independent_marginals(CODES, DOM, 0.5, 7)
    assert np.array_equal(ind.answer(), res2.answer(wl)) and ind.guarantee_ == res2.guarantee


def test_bad_k_is_refused_and_leaves_no_stale_release() -> None:
    syn = MWEMSynthesizer(1.0, k=2, rounds=2, random_state=0).fit(CODES, DOM)
    syn.k = 4
    with pytest.raises(ValueError, match="k must be an integer"):
        syn.fit(CODES, DOM)
    with pytest.raises(RuntimeError, match="call fit"):
        syn.answer()
