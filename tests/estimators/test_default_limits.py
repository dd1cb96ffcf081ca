"""The exact learners' default oracle limit is deterministic work, not seconds (issue 40).

Whether a fit certifies must not depend on what else the machine runs: with no limit given,
the default ``highs`` oracle gets each formulation's default work limit and no time limit;
a time limit given alone replaces it; a backend without a work limit keeps 60 seconds.  The
``"auto"`` W of OPDisc shrinks where the exact search runs over W itself (many numeric
columns), so that the default work certifies it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracledp.estimators import OPDiscClassifier, RSPMClassifier
from oracledp.estimators._exact import DEFAULT_TIME_LIMIT, build_oracle
from oracledp.estimators._space_spec import (
    BRANCH_W_MAX,
    auto_norm2,
    check_space,
    parameter_space,
    space_label,
)
from oracledp.oracles._branch import DEFAULT_WORK_LIMIT as BRANCH_WORK
from oracledp.oracles._structured import DEFAULT_WORK_LIMIT as STRUCTURED_WORK
from oracledp.oracles._structured import MAX_CANDIDATES
from oracledp.oracles._structured_tables import count_ball


def test_no_limit_given_means_the_default_work_and_no_time_limit():
    oracle = build_oracle("highs", None, None)
    assert oracle._structured.work_limit == STRUCTURED_WORK
    assert oracle._branch.work_limit == BRANCH_WORK
    assert math.isinf(oracle._structured.time_limit) and math.isinf(oracle._branch.time_limit)


def test_a_time_limit_alone_replaces_the_work_limit_and_a_work_limit_drops_the_time():
    timed = build_oracle("highs", 7.0, None)
    assert timed._structured.time_limit == 7.0 and timed._structured.work_limit is None
    assert timed._branch.time_limit == 7.0 and timed._branch.work_limit is None
    worked = build_oracle("highs", None, 123)
    assert worked._structured.work_limit == 123 and math.isinf(worked._structured.time_limit)
    both = build_oracle("highs", 5.0, 9)
    assert (both._branch.time_limit, both._branch.work_limit) == (5.0, 9)


def test_a_backend_without_a_work_limit_keeps_sixty_seconds():
    assert build_oracle("highs-monolithic", None, None).time_limit == DEFAULT_TIME_LIMIT == 60.0


def test_the_estimators_default_to_no_time_limit():
    for cls in (OPDiscClassifier, RSPMClassifier):
        est = cls(epsilon=1.0)
        assert est.time_limit is None and est.work_limit is None


@pytest.mark.parametrize("d", [11, 20, 25, 40, 60, 135])
def test_opdisc_auto_w_over_many_numeric_columns_has_at_most_the_cap(d):
    """All columns numeric (the branch-and-bound searches W unless the decomposition takes
    the ball): R is lowered from 4 only while W has more than BRANCH_W_MAX points and the
    decomposition does not apply; the next R up is too large (so the rule is not too small)."""

    r = auto_norm2(d, "opdisc", n_numeric=d)
    small = count_ball(d, math.isqrt(r), r) <= BRANCH_W_MAX
    assert small or count_ball(d, math.isqrt(r), r) <= MAX_CANDIDATES
    assert r == min(d, 4) or count_ball(d, math.isqrt(r + 1), r + 1) > BRANCH_W_MAX
    # few numeric columns: the structured decomposition applies, R stays min(d, 4)
    assert auto_norm2(d, "opdisc", n_numeric=2) == min(d, 4)
    # RSPM: its box while small (d <= 12), else the same lowering over its W (|k_j| <= 1)
    q = auto_norm2(d, "rspm", n_numeric=d)
    if d <= 12:
        assert q == d
    else:
        assert count_ball(d, 1, q) <= BRANCH_W_MAX or count_ball(d, 1, q) <= MAX_CANDIDATES
        assert q == 4 or count_ball(d, 1, q + 1) > BRANCH_W_MAX
    assert auto_norm2(d, "rspm", n_numeric=2) == auto_norm2(d, "rspm")


def test_rspm_on_the_135_feature_shape_gets_the_smaller_w():
    """The stand-in of benchmarks/wide_exact.py (83 numeric columns of 135 features): R = 4
    was refused in 2 of 3 fits at eps 2 within the default work (docs/results/wide-exact);
    the rule now gives R = 2 (36,451 points), as for OPDisc."""
    assert auto_norm2(135, "rspm", n_numeric=83) == auto_norm2(135, n_numeric=83) == 2
    w = parameter_space("auto", 135, model="rspm", n_numeric=83)
    assert (w.k_max, w.k_norm2_max, w.size()) == (1, 2, 36_451)
    assert "lowered to 2" in space_label(check_space("auto"), 135, "rspm", 83)


def test_a_wide_numeric_fit_gets_the_smaller_w_and_says_so():
    rng = np.random.default_rng(0)
    d = 60
    X = rng.integers(0, 3, size=(40, d)) / 2
    y = np.where(X[:, 0] + rng.normal(0, 0.3, 40) > 0.5, 1, -1)
    # epsilon 4: OPDisc's noise rule keeps the columns' W for 40 records (share 0.26 <= 0.3)
    clf = OPDiscClassifier(epsilon=4.0, feature_grid=0.5, random_state=0).fit(X, y)
    want = parameter_space("norm2=2", d)
    assert (clf.space_.k_max, clf.space_.k_norm2_max) == (want.k_max, want.k_norm2_max) == (1, 2)
    assert "lowered to 2" in clf.guarantee_.notes and "100,000 points" in clf.guarantee_.notes
