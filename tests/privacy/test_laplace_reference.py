"""The written-out Laplace functions of tests/_laplace.py against scipy.stats.laplace."""

from __future__ import annotations

import pytest
from scipy import stats

from _laplace import laplace_cdf, laplace_pdf, laplace_sf


@pytest.mark.parametrize("b", [0.05, 0.5, 1.0, 2.0, 8.0, 30.0])
def test_laplace_closed_forms_match_scipy(b: float) -> None:
    for x in (-40.0, -30.0, -2.0, -1.3, -0.1, 0.0, 0.3, 0.7, 5.0, 25.0, 90.0):
        assert laplace_pdf(x, b) == pytest.approx(stats.laplace.pdf(x, scale=b), rel=1e-12)
        assert laplace_cdf(x, b) == pytest.approx(stats.laplace.cdf(x, scale=b), rel=1e-12)
        assert laplace_sf(x, b) == pytest.approx(stats.laplace.sf(x, scale=b), rel=1e-12)
