"""scikit-learn's model selection fits a private estimator again and again: it says so.

``cross_val_score`` and ``GridSearchCV`` clone the estimator and fit every clone on the same or
overlapping records: each fit is a separate release and the privacy losses add up.  Each clone
made there issues a PrivacyWarning (whatever ``n_jobs``: the clones are made in the calling
process); with an active BudgetAccountant there is no warning, the fits are charged, and a
search that would go beyond the budget is refused fit by fit; a clone fitted in a worker
process, where the accountant cannot see it, is refused before any noise.  Under an accountant
a search or cross-validation must pass ``error_score="raise"``: scikit-learn's default records
a refused fit as a failure and carries on, choosing among the fits the budget allowed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate

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
            cross_val_score(_clf(), X, Y, cv=3, error_score="raise")
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


@pytest.mark.parametrize("run", [
    lambda: GridSearchCV(_clf(), {"epsilon": [0.5, 1.0]}, cv=2).fit(X, Y),
    lambda: GridSearchCV(_clf(), {"epsilon": [0.5, 1.0]}, cv=2, error_score=0.0).fit(X, Y),
    lambda: cross_val_score(_clf(), X, Y, cv=2),
    lambda: cross_validate(_clf(), X, Y, cv=2, error_score=-1),
], ids=["grid-default", "grid-zero", "cross_val_score", "cross_validate"])
def test_a_search_that_would_skip_refusals_is_refused_before_any_fit(run) -> None:
    with BudgetAccountant(10.0) as acct, pytest.raises(BudgetError, match="error_score='raise'"):
        run()
    assert acct.spends == ()


def test_a_search_that_runs_out_of_budget_stops_there() -> None:
    """Before: the refused candidate became a FitFailedWarning and the search chose the
    only candidate that fitted."""
    search = GridSearchCV(_clf(), {"epsilon": [0.5, 2.0]}, cv=2, error_score="raise")
    with BudgetAccountant(2.0) as acct, pytest.raises(BudgetError, match="before any noise"):
        search.fit(X, Y)  # 0.5 + 0.5, then 2.0 does not fit
    assert [c.epsilon for c in acct.spends] == [0.5, 0.5]
    assert not hasattr(search, "best_params_")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning",
                            "ignore:One or more of the test scores are non-finite")
def test_a_refusal_inside_a_refitter_that_is_not_found_still_warns(monkeypatch) -> None:
    """The planted gap: if the error_score cannot be found, the refusal still says where."""
    from oracledp.privacy import _accountant

    monkeypatch.setattr(_accountant, "_error_score", lambda: None)
    search = GridSearchCV(_clf(), {"epsilon": [0.5, 2.0]}, cv=2)
    with BudgetAccountant(2.0), pytest.warns(PrivacyWarning, match="refused by the active "
                                                                  "BudgetAccountant inside "
                                                                  "scikit-learn"):
        search.fit(X, Y)
    assert search.best_params_ == {"epsilon": 0.5}  # what the guard above prevents
