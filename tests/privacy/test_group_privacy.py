"""group_privacy: the guarantee for a person who contributes up to k records.

Pure eps -> k eps; (eps, delta) -> (k eps, delta sum_{i<k} e^{i eps}) (<= k e^{(k-1) eps}
delta); ex-post (delta 0) scaled on its realised loss; checked against the exact privacy
profile of the Gaussian mechanism, whose group of k records is the same mechanism with a k
times larger shift.
"""

from __future__ import annotations

import math

import pytest

from oracledp.privacy import PrivacyGuarantee, gaussian_delta, group_privacy
from oracledp.privacy._group import group_loss, group_rho
from oracledp.privacy._guarantees import group_size


def test_pure_approximate_and_ex_post() -> None:
    pure = PrivacyGuarantee.pure(0.25, source="Laplace", requires_exact_oracle=True)
    g = group_privacy(pure, 4)
    assert (g.epsilon, g.delta, g.kind) == (1.0, 0.0, "pure")
    assert g.requires_exact_oracle and g.source == "Laplace" and g.holds
    assert g.neighbouring == "groups of 4 records (replace-one)" and group_size(g.neighbouring) == 4
    assert "group privacy for 4 records per person of the per-record 0.25-DP" in g.notes

    approx = PrivacyGuarantee.approximate(0.5, 1e-6, source="Gaussian", notes="n public")
    g = group_privacy(approx, 3)
    assert g.epsilon == 1.5 and g.kind == "approximate"
    assert g.delta == pytest.approx(1e-6 * (1 + math.exp(0.5) + math.exp(1.0)), rel=1e-15)
    assert g.delta <= 3 * math.exp(2 * 0.5) * 1e-6  # the usual k e^{(k-1) eps} delta form
    assert g.notes.startswith("n public; group privacy")

    ex = PrivacyGuarantee.ex_post(0.3, source="AboveThreshold")
    assert group_privacy(ex, 5).epsilon == pytest.approx(1.5) and group_privacy(ex, 5).kind == "ex-post"
    assert group_privacy(approx, 1) is approx

    nested = group_privacy(group_privacy(pure, 2), 3)
    assert nested.epsilon == 1.5 and group_size(nested.neighbouring) == 6
    assert group_rho(0.5, 3) == 4.5 and group_rho(0.5, 1) == 0.5


def test_plain_words_name_the_persons_records() -> None:
    g = group_privacy(PrivacyGuarantee.pure(0.5, source="x"), 3)
    assert "any one person's records (up to 3 of them)" in g.in_plain_words()
    assert "any one person's record was" in PrivacyGuarantee.pure(0.5, source="x").in_plain_words()


def test_refusals() -> None:
    approx = PrivacyGuarantee.approximate(2.0, 1e-3, source="x")
    with pytest.raises(ValueError, match="vacuous"):
        group_privacy(approx, 10)  # delta (e^20 - 1)/(e^2 - 1) 1e-3 > 1
    assert group_loss(2.0, 1e-3, 400)[1] == math.inf  # e^{(k-1) eps} overflows
    with pytest.raises(ValueError, match="delta > 0 is not proven"):
        group_privacy(PrivacyGuarantee.ex_post(0.3, delta=1e-6, source="x"), 2)
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="integer >= 1"):
            group_privacy(approx, bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("mu", [0.2, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_the_bound_holds_for_the_gaussian_mechanism(mu: float, k: int) -> None:
    """A Gaussian release with shift/sigma = mu has the exact profile delta(eps) =
    gaussian_delta(eps, mu) (Balle-Wang 2018); k records shift it k times as far.  The group
    statement must lie above the exact group profile, and is close to it for small mu."""
    for eps in (0.1, 0.5, 1.0, 2.0):
        delta = gaussian_delta(eps, mu)
        if delta <= 0:
            continue
        k_eps, k_delta = group_loss(eps, delta, k)
        exact = gaussian_delta(k_eps, k * mu)
        assert exact <= k_delta * (1 + 1e-12) + 1e-300
