"""Laplace-based building blocks of "Accuracy First" (Ligett et al. 2017).

* :func:`noise_reduction` (Algorithm 1): releases at increasing privacy levels;
  any prefix is ``eps_t``-DP (Theorem 2.7).
* :class:`InteractiveAboveThreshold` (Algorithm 2): halts at the first query
  above a noisy threshold; ex-post loss ``eps_A + eps_t`` (Lemma 2.8), reported
  as :class:`ExPostLoss`.
"""

from oracledp.mechanisms._above_threshold import (
    ExPostLoss,
    InteractiveAboveThreshold,
    iat_query_scale,
    iat_threshold_scale,
)
from oracledp.mechanisms._noise_reduction import (
    noise_reduction,
    noise_reduction_guarantee,
    nr_keep_probabilities,
    nr_scales,
)

__all__ = [
    "ExPostLoss",
    "InteractiveAboveThreshold",
    "iat_query_scale",
    "iat_threshold_scale",
    "noise_reduction",
    "noise_reduction_guarantee",
    "nr_keep_probabilities",
    "nr_scales",
]
