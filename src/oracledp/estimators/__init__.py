"""scikit-learn estimators wrapping the private learners of :mod:`oracledp.learners`.

The estimators only validate, map labels and call the learner functions; the
privacy statement of every fit is stored on the estimator as ``guarantee_``.
"""

from oracledp.estimators._accuracy_first import (
    AccuracyFirstLogisticRegression,
    AccuracyFirstRidge,
)
from oracledp.estimators._auto import AutoClassifier
from oracledp.estimators._gaussian_rspm import GaussianRSPMClassifier
from oracledp.estimators._opdisc import OPDiscClassifier
from oracledp.estimators._opsamp import OPSampClassifier
from oracledp.estimators._rspm import RSPMClassifier

__all__ = [
    "AccuracyFirstLogisticRegression",
    "AccuracyFirstRidge",
    "AutoClassifier",
    "GaussianRSPMClassifier",
    "OPDiscClassifier",
    "OPSampClassifier",
    "RSPMClassifier",
]
