"""Laplace(0, b) density, cdf and survival function written out, for exact-law quadratures.

scipy.stats' per-point calls dominated those quadratures (about 100x slower);
``tests/privacy/test_laplace_reference.py`` checks these against ``scipy.stats.laplace``.
"""

from __future__ import annotations

import math


def laplace_pdf(x: float, b: float) -> float:
    return math.exp(-abs(x) / b) / (2 * b)


def laplace_cdf(x: float, b: float) -> float:
    return 0.5 * math.exp(x / b) if x < 0 else 1.0 - 0.5 * math.exp(-x / b)


def laplace_sf(x: float, b: float) -> float:
    return 0.5 * math.exp(-x / b) if x > 0 else 1.0 - 0.5 * math.exp(x / b)
