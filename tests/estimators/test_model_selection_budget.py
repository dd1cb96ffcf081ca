"""scikit-learn's model selection fits a private estimator again and again: it says so.

``cross_val_score`` and ``GridSearchCV`` clone the estimator and fit every clone on the same or
overlapping records: each fit is a separate release and the privacy losses add up.  Each clone
made there issues a PrivacyWarning (whatever ``n_jobs``: the clones are made in the calling
process); with an active BudgetAccountant there is no warning, the fits are charged, and a
search that would go beyond the budget is refused fit by fit; a clone fitted in a worker
process, where the accountant cannot see it, is refused before any noise.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from oracledp import BudgetError, PrivacyWarning
from oracledp.estimators import RSPMClassifier
from oracledp.privacy import BudgetAccountant

X = np.array([[2, 1], [1, 2], [2, 2], [-2, -1], [-1, -2], [-2, 0]] * 3) / 2
Y = np.array([1, 1, 1, 0, 0, 0] * 3)


def _clf(eps: float = 0.5) -> RSPMClassifier:
    return RSPMClassifier(eps, oracle="brute", feature_grid=0.5, random_state=0)


def test_cross_val_score_warns_that_the_fits_add_up() -> None:
    with pytest.warns(PrivacyWarning, match=r"RSPMClassifier is being cloned .*SUM of the "
                                            r"fits' epsilons") as record:
        cross_val_score(_clf(), X, Y, cv=3)
    assert len([w for w in record if issubclass(w.category, PrivacyWarning)]) == 3  # 3 clones
    assert "sklearn.model_selection" in str(record[0].message)
    assert "BudgetAccountant" in str(record[0].message)


def test_grid_search_over_epsilon_warns() -> None:
    search = GridSearchCV(_clf(), {"epsilon": [0.5, 1.0]}, cv=2)
    with pytest.warns(PrivacyWarning, match="cloned by scikit-learn") as record:
        search.fit(X, Y)
    # 2 candidates x 2 folds, then the refit on all the data: 5 releases
    assert len([w for w in record if issubclass(w.category, PrivacyWarning)]) >= 5


def test_a_plain_clone_and_fit_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clone(_clf()).fit(X, Y)


def test_with_an_accountant_the_search_is_charged_and_capped() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # charged, so no warning
        with BudgetAccountant(1.6) as acct:
            cross_val_score(_clf(), X, Y, cv=3)
            assert acct.spent == (pytest.approx(1.5), 0.0) and len(acct.spends) == 3
            with pytest.raises(BudgetError, match="refused before any noise"):
                cross_val_score(_clf(), X, Y, cv=3, error_score="raise")
    assert len(acct.spends) == 3


@pytest.mark.timeout(300)
def test_a_clone_fitted_in_a_worker_process_is_refused() -> None:
    with BudgetAccountant(10.0) as acct:
        with pytest.raises(BudgetError, match="another process"):
            cross_val_score(_clf(), X, Y, cv=2, n_jobs=2, error_score="raise")
    assert acct.spends == ()
