"""Laplace-based building blocks of "Accuracy First" (Ligett et al. 2017).

* :func:`noise_reduction` (Algorithm 1): releases at increasing privacy levels;
  any prefix is ``eps_t``-DP (Theorem 2.7).
* :class:`InteractiveAboveThreshold` (Algorithm 2): halts at the first query
  above a noisy threshold; ex-post loss ``eps_A + eps_t`` (Lemma 2.8), reported
  as :class:`ExPostLoss`.
"""

import sys as _sys

from oracledp.mechanisms import _noise_reduction as _noise_reduction_module
from oracledp.mechanisms._noise_reduction import (
    noise_reduction,
    noise_reduction_guarantee,
    nr_keep_probabilities,
    nr_scales,
)
from oracledp.mechanisms.above_threshold import (
    ExPostLoss,
    InteractiveAboveThreshold,
    iat_query_scale,
    iat_threshold_scale,
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

# Pickles made before the implementation modules became private name them by their former
# paths: keep those importable for unpickling (the package attributes are the functions).
_sys.modules.update({
    f"{__name__}.noise_reduction": _noise_reduction_module,
})
