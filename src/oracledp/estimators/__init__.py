"""scikit-learn estimators wrapping the private learners of :mod:`oracledp.learners`.

The estimators only validate, map labels and call the learner functions; the
privacy statement of every fit is stored on the estimator as ``guarantee_``.
"""

from oracledp.estimators.accuracy_first import (
    AccuracyFirstLogisticRegression,
    AccuracyFirstRidge,
)
from oracledp.estimators.opdisc import OPDiscClassifier
from oracledp.estimators.opsamp import OPSampClassifier
from oracledp.estimators.rspm import RSPMClassifier

__all__ = [
    "AccuracyFirstLogisticRegression",
    "AccuracyFirstRidge",
    "OPDiscClassifier",
    "OPSampClassifier",
    "RSPMClassifier",
]
