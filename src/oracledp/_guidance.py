"""Public policy of the command line: the epsilon cap, and which model to use.

* :data:`EPSILON_CAP`: ``oracledp fit`` refuses ``--epsilon`` (and Accuracy First's
  ``--max-epsilon``) above it unless ``--allow-large-epsilon``.  At epsilon = 10 the
  guarantee allows the odds of any conclusion about one record to change by a factor
  e^10 ~ 22,000: above that, differential privacy's promise says little.
* :data:`MODEL_GUIDE`: the measured recommendation printed by ``oracledp models``, from
  ``benchmarks/your_tables.py`` (the numbers are in ``docs/choosing-a-model.md``).
* :data:`OPSAMP_WARNING`: what OPSamp achieved in that benchmark.
* :data:`ACCURACY_FIRST_N`: the records Accuracy First needs, from its public refusal rules.
* :func:`advise_model` (:class:`ModelAdvice`): which model for one table, from its public facts
  (d, epsilon, n if given, |W| of the default parameter space, which the estimators size from
  d and the schema's columns not declared 0/1), printed by
  ``oracledp models --schema S --epsilon E [DATA]``.

Nothing here reads data: these are constants and checks of public parameters.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oracledp._validation import check_delta, check_epsilon, check_integer

__all__ = ["ACCURACY_FIRST_N", "EPSILON_CAP", "GAUSSIAN_RSPM_NOTE", "MODEL_GUIDE", "OPSAMP_WARNING",
           "RECOMMENDED_MODELS", "ModelAdvice", "advise_model", "check_epsilon_cap",
           "check_person_cap"]

#: The largest epsilon ``oracledp fit`` accepts without ``--allow-large-epsilon``.
EPSILON_CAP = 10.0

#: Models listed by default (``oracledp models``); OPSamp only with ``--all``.
RECOMMENDED_MODELS = ("opdisc", "rspm", "dpsgd", "auto", "accuracy-first")

#: Shown whenever OPSamp is chosen (measured by benchmarks/your_tables.py on the bundled
#: public tables, 3 seeds; docs/choosing-a-model.md has the table).
OPSAMP_WARNING = (
    "OPSamp is not recommended: in benchmarks/your_tables.py its test accuracy at epsilon "
    "0.1, 1 and 2 was below the majority rate on 4 of 5 tables (0.44-0.56 against 0.62-0.81) "
    "and 0.67 +- 0.35 on the fifth (majority 0.62, DP-SGD 0.95), the same at every epsilon: "
    "its sampling noise swamps the data at these sizes. Use dpsgd (see `oracledp models` and "
    "docs/choosing-a-model.md)."
)

#: (when, why) of ``gaussian-rspm``, listed by ``oracledp models --all`` (measured on Adult,
#: d = 23, 5 seeds, epsilon 1, delta 1/n^2, and by benchmarks/your_tables.py).
GAUSSIAN_RSPM_NOTE = (
    "as rspm, when (epsilon, delta)-DP is acceptable",
    "Gaussian separator weights with the sigma proven in "
    "docs/proofs/gaussian-rspm-calibration.md (the paper's sigma is not private); on Adult at "
    "epsilon 1 its mean test accuracy was rspm's (0.756 against 0.755, 5 seeds); on the small "
    "tables titanic and biopsy at epsilon 1 it was the best model (0.791, 0.970)",
)

#: Accuracy First (OutputNR, the command line's) is refused before any noise below about
#: ``ACCURACY_FIRST_N / (alpha * max_epsilon)`` records: the smallest n that passes both
#: refusals of :func:`oracledp.erm._framework.records_needed` (the accuracy test's own epsilon
#: within the cap; the capped grid within reach of the theory curve) is within 15% of it for
#: 10 to 100 features, alpha 0.05 to 0.2 and max-epsilon 1 to 10 (lambda 0.005, gamma 0.1;
#: tests/tabular/test_user_tables.py checks it).
ACCURACY_FIRST_N = 4_500

#: (recommended model, when: table shape and epsilon, why in brief) -- measured by
#: benchmarks/your_tables.py; docs/choosing-a-model.md has the numbers.
MODEL_GUIDE: tuple[tuple[str, str, str], ...] = (
    ("auto", "epsilon >= 1, when you cannot tell in advance whether the exact model or dpsgd "
     "wins on your table (no public fact told them apart)",
     "a private choice, at your total epsilon, between the exact model `oracledp models "
     "--schema` advises and dpsgd, each at half of it (docs/proofs/model-selection.md); "
     "within 0.004 of the best single model on the four bundled tables at epsilon 1 and 2 "
     "(in-sample, 3 seeds; benchmarks/model_auto.py); model.json records the selection. An "
     "exact trial that does not certify refuses the whole selection (charged under --budget)"),
    ("opdisc", "epsilon >= 1, any table whose fit certifies (every bundled one but nhefs)",
     "exact 0/1-loss halfspace over the compact default W (--space auto); at epsilon 1 it "
     "beat DP-SGD on the wide mixed tables (health_insurance 0.774 against 0.743, "
     "doctor_visits 0.717 / 0.715; every fit certified), but not on every table (on a "
     "23-feature panel DP-SGD was 1.6-1.8 points better: the compact W's accuracy ceiling); "
     "if the oracle does not certify in time, nothing is released, and under --budget the "
     "fit stays charged (use --work-limit for a reproducible decision)"),
    ("dpsgd", "epsilon below 1, or a table whose exact fit does not certify",
     "the best test accuracy, or within 0.01 of it, at epsilon 0.1 on every bundled table "
     "(0.71-0.77 against majority rates 0.62-0.68); never stops for lack of a certificate"),
    ("rspm", "as opdisc, when pure epsilon-DP is wanted",
     "weights in {-1, 0, 1} over the default W; at epsilon 1 within 0.05 of opdisc on the "
     "bundled tables, equal or better at epsilon 2"),
    ("accuracy-first", "an accuracy target instead of an epsilon, and n >= about "
     f"{ACCURACY_FIRST_N:,} / (alpha x max-epsilon) records (4,500 at the defaults alpha 0.1, "
     "max-epsilon 10; 22,000 at max-epsilon 2)",
     "the most private level meeting --alpha, ex-post loss <= --max-epsilon; with fewer "
     "records fit refuses before drawing any noise (the accuracy test alone, or the levels "
     "the cap leaves for the hypotheses, cannot meet alpha); just above that floor a search "
     "may spend the cap and refuse (on a measured table, every fit up to 1.11 times the "
     "floor did, and every fit from 1.22 times released): plan for well above it"),
    ("(none)", "few records per column (e.g. 1,000 records, 100 encoded features)",
     "no private model beat the majority rate at epsilon <= 2 on such a table: use fewer "
     "columns (chosen by public knowledge) or more records"),
)


def check_epsilon_cap(value: float, option: str, allow_large: bool) -> str | None:
    """The refusal message for an epsilon above :data:`EPSILON_CAP`, or None if acceptable."""
    if allow_large or not (isinstance(value, float | int) and math.isfinite(value)):
        return None
    if value > EPSILON_CAP:
        return (f"{option} {value:g} is above the cap of {EPSILON_CAP:g}: at epsilon = "
                f"{EPSILON_CAP:g} one record may already change the odds of any conclusion by a "
                f"factor of e^{EPSILON_CAP:g} ~ {math.exp(EPSILON_CAP):,.0f}, and beyond it the "
                "guarantee says little. Choose a smaller epsilon, or pass "
                "--allow-large-epsilon if you mean it.")
    return None


def check_person_cap(value: float, k: int, option: str, allow_large: bool) -> str | None:
    """The refusal for an epsilon per record within :data:`EPSILON_CAP` whose loss per person
    (``k * value`` by group privacy, ``k`` the schema's records_per_person) is above it, or
    None.  The cap speaks of what one person's data can change, so it bounds the loss per
    person."""
    if allow_large or k <= 1 or not (isinstance(value, float | int) and math.isfinite(value)):
        return None
    if k * value > EPSILON_CAP * (1 + 1e-12):  # (10 / k per record is within it)
        return (f"{option} {value:g} per record is epsilon {k * value:g} per person (the "
                f"records_per_person {k}; group privacy), above the cap of "
                f"{EPSILON_CAP:g}: beyond it the guarantee says little. Choose a smaller "
                "epsilon, or pass --allow-large-epsilon if you mean it.")
    return None


# --- Advice from a table's public facts (``oracledp models --schema S --epsilon E [DATA]``) --
#
# The rule reads d (the schema's encoded features), epsilon, n when given (public, as in
# ``oracledp fit``, where delta defaults to 1/n^2) and the sizes |W| of the parameter spaces
# the default ``--space auto`` gives for that d; never the records.  Its principle: among the
# models whose fits are likely to certify at this shape, the one whose largest measured
# shortfall from the best model was smallest on the measured tables of that shape; dpsgd
# wherever an exact fit is not likely to certify (a refused fit releases nothing, and under
# --budget it stays charged).  The measurements: docs/choosing-a-model.md and
# benchmarks/advice_check.py.

#: Below this epsilon the advice is dpsgd: at epsilon 0.1 it was the best model or within
#: 0.003 of it on every measured table; from epsilon 1 the exact models were as good or better
#: on most.  Between 0.1 and 1 the default W was not measured on the bundled tables.
ADVICE_MIN_EXACT_EPSILON = 1.0

#: Fewer records than this per encoded feature: a warning (nhefs: 1,140 records for 111
#: features, 10 per feature, where no private model beat the majority rate; biopsy, with 44,
#: worked).
FEW_RECORDS_PER_FEATURE = 20

#: Default W (either model) with at most this many points: every measured exact fit
#: certified (largest measured with the default W: health_insurance, d 25, |W| 222,101;
#: Adult + workclass, d 32, certified over the paper's larger W).  OPDisc's W reaches it at d 36.
CERTIFIES_W = 10**6

#: OPDisc over a default W with at least this many points at epsilon >= 1: refusals measured
#: (nhefs, d 111, |W| 97,623,465: none certified within 30 s; a 135-feature table, |W|
#: 214,970,041: 0 of 6 at epsilon 1 and 2 within 60 s).  Between CERTIFIES_W and this: not
#: measured.
OPDISC_REFUSES_W = 9 * 10**7

#: RSPM and Gaussian RSPM released every measured fit over a default W of at most this many
#: points (the 135-feature table's, 6 of 6 each); beyond it: not measured.
RSPM_MEASURED_W = 214_969_771

#: The exact models, whose fits are refused when the oracle does not certify the optimum.
ADVICE_EXACT_MODELS = ("opdisc", "rspm", "gaussian-rspm")

#: How the messages name the default oracle limit (deterministic work since commit 4c8d330;
#: the sizes above were measured with 30-60 s time limits).
_DEFAULT_LIMIT = "default oracle limit"

_EVIDENCE_SMALL_EPSILON = (
    "at epsilon 0.1 dpsgd was the most accurate model or within 0.003 of it on every "
    "measured table (titanic 0.718, biopsy 0.770, health_insurance 0.723, doctor_visits "
    "0.712, Adult 0.758), where opdisc scored 0.361-0.753 over the former default W ||k||^2 "
    "<= 4 (the exact models' noise outweighs the data on small tables: titanic 0.361, biopsy "
    "0.462) and 0.630 and 0.619 on those two, their majority rates, over the W its noise rule "
    "now lowers to ||k||^2 <= 1 (benchmarks/w_rule.py); between epsilon 0.1 and 1 it was not "
    "measured")
_EVIDENCE_BOX = (
    "rspm's default W is the whole box {-1, 0, 1}^d here, so Gaussian RSPM can weight every "
    "feature; at epsilon 1 and 2 it was the most accurate model on both such measured tables "
    "(titanic, d 9: 0.791 against dpsgd 0.786 and opdisc 0.775; biopsy, d 11: 0.970 against "
    "dpsgd 0.954-0.957 and opdisc 0.949), every fit certified in seconds; it is (epsilon, "
    "delta)-DP like opdisc and dpsgd (for pure epsilon-DP: rspm, 0.778-0.786 and 0.905-0.952 "
    "there)")
_EVIDENCE_COMPACT = (
    "opdisc's default W is within the sizes where every measured fit certified; at epsilon 1 "
    "and 2 on the bundled tables of this shape it was the best model or within 0.002 of it "
    "(health_insurance, d 25: 0.774, the best, dpsgd 0.743; doctor_visits, d 23: 0.717 / "
    "0.715, dpsgd 0.715 / 0.714; Adult, d 23: 0.758, dpsgd 0.759), where dpsgd was up to "
    "0.032 below (health_insurance). Its W holds only weights with ||k||^2 <= 4 (5 where the "
    "noise rule raises it; at most that many nonzero), an accuracy ceiling no epsilon "
    "removes: on a 23-feature panel (13,781 records) "
    "dpsgd beat it by 1.6-1.8 points at epsilon 1-2 (0.756 / 0.758 against 0.740), and the "
    "best point of W scored 0.748 even at epsilon 1000. No public fact told these tables "
    "apart: if you do not need an exact 0/1-loss halfspace, dpsgd (never refused) is as "
    "sound a choice; for pure epsilon-DP: rspm (0.711-0.774 on those three tables)")
_EVIDENCE_AUTO = (
    "auto lets the records choose, privately, between opdisc and dpsgd at your total epsilon "
    "(each trial at half of it; docs/proofs/model-selection.md): on the bundled tables of "
    "this shape at epsilon 1 and 2 it came within 0.003 of the best single model "
    "(health_insurance 0.773 / 0.774, doctor_visits 0.714 / 0.716; benchmarks/model_auto.py, "
    "3 seeds, in-sample: the rule was written from these tables). An exact trial that does "
    "not certify refuses the whole selection, charged under --budget; for an exact "
    "0/1-loss halfspace whatever the records say, use --model opdisc")
_EVIDENCE_BOX_AUTO = (
    "--model auto (gaussian-rspm or dpsgd, chosen privately, each at half of epsilon) came "
    "within 0.004 of it there (titanic 0.786, biopsy 0.970-0.971; benchmarks/model_auto.py)")
_EVIDENCE_WIDE = (
    "opdisc's default W is beyond the sizes where every measured fit certified (<= 10^6 "
    "points); dpsgd needs no exact oracle, so it is never refused")
_EVIDENCE_FEW = (
    "on nhefs (1,140 records, 111 encoded features: 10 per feature) no private model beat the "
    "majority rate at epsilon <= 2 (dpsgd 0.802-0.810, majority 0.810; rspm 0.678 at epsilon "
    "0.1; opdisc never certified), and non-private logistic regression gained only 3 points")
_CASE_135 = ("on a 135-feature table (4,075 records) opdisc ran 62 s and was refused 6 of 6 "
             "times at epsilon 1 and 2 (3 of 3 certified at epsilon 0.1), while rspm and "
             "gaussian-rspm released 6 of 6")
_EVIDENCE_NOISE_W = (
    "R is lowered while OPDisc's sigma exceeds 0.3 n (on the bundled titanic and biopsy "
    "tables at epsilon 0.1 the default W released classifiers below the majority rate, ||k||^2 "
    "<= 1 the majority rate) and raised, up to 5, while it stays below n / 200 "
    "(docs/choosing-a-model.md, benchmarks/w_rule.py)")

_EVIDENCE_LOWERED = (
    "on a stand-in of a 135-feature table with 83 numeric columns (benchmarks/wide_exact.py; "
    "opdisc's W lowered to ||k||^2 <= 2) opdisc released 6 of 6 fits at epsilon 1 and 2, "
    "each at the majority rate (0.622), as did dpsgd (0.621-0.622)")


@dataclass(frozen=True)
class ModelAdvice:
    """Which model to use for a table, from its public facts only (:func:`advise_model`).

    ``model`` is the advice; ``exact_model`` the exact 0/1-loss model to use if you want one
    (an exact halfspace with small integer weights), or None if none is likely to certify.
    ``model`` may be ``"auto"``: the private selection between ``exact_model`` and dpsgd
    (``oracledp fit --model auto``).
    ``certify`` says, per exact model, whether its fit is ``"likely"``, ``"uncertain"`` or
    ``"unlikely"`` to certify within the default oracle limit (a fit that does not
    certify releases nothing).  ``space_sizes`` are |W| of the default ``--space auto`` for
    opdisc and for rspm / gaussian-rspm, as the estimators size it (from d and, with a schema,
    its columns not declared 0/1); ``delta`` the one given, else the default 1/n^2 when n is
    given (``delta_given`` says which).
    ``reasons`` and ``warnings`` state the measured evidence in words.
    """

    model: str
    exact_model: str | None
    epsilon: float
    d: int
    n: int | None
    delta: float | None
    space_sizes: tuple[tuple[str, int], ...]
    certify: tuple[tuple[str, str], ...]
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    delta_given: bool = False

    def certifies(self, model: str) -> str:
        """``"likely"``, ``"uncertain"`` or ``"unlikely"`` for an exact model."""
        return dict(self.certify)[model]


def _default_spaces(d: int, schema: Any, n: int | None = None,
                    epsilon: float = 1.0, delta: float | None = None) -> tuple[Any, Any]:
    """W of ``--space auto`` for opdisc and for rspm / gaussian-rspm.

    With a :class:`~oracledp.oracles.FeatureSchema`: the W the estimators' own ``fit`` declares
    (``ExactHalfspaceClassifier._make_space``: d, the schema's columns not declared 0/1, which
    lower OPDisc's R on tables with many numeric columns, and, with n given, OPDisc's noise at
    n records, ``epsilon`` and ``delta``, by default 1/n^2), called here, not copied.
    With d alone the 0/1 columns are not known: W as :func:`auto_norm2` gives it when they are
    not (``n_numeric=None``: R = min(d, 4) before the noise rule)."""
    from oracledp.estimators._base import delta_for
    from oracledp.estimators._space_spec import parameter_space

    noise: dict[str, Any] = ({} if n is None else
                             {"n": n, "epsilon": epsilon, "delta": delta_for(delta, n)})
    if schema is None:
        return (parameter_space("auto", d, **noise),
                parameter_space("auto", d, model="rspm"))
    from oracledp.estimators import OPDiscClassifier, RSPMClassifier

    spaces = []
    for cls in (OPDiscClassifier, RSPMClassifier):
        est = cls(epsilon, schema=schema)  # space="auto"; nothing is fitted or drawn
        spaces.append(est._make_space(d, est._check_params(),
                                      **({} if n is None else
                                         {"n": n, "delta": noise["delta"]}))[0])
    return spaces[0], spaces[1]


def _certify(model: str, size: int, epsilon: float) -> str:
    if model == "opdisc":
        if size <= CERTIFIES_W:
            return "likely"
        return ("unlikely" if size >= OPDISC_REFUSES_W and epsilon >= ADVICE_MIN_EXACT_EPSILON
                else "uncertain")
    return "likely" if size <= RSPM_MEASURED_W else "uncertain"


def advise_model(schema: Any, epsilon: float, n: int | None = None, *,
                 delta: float | None = None) -> ModelAdvice:
    """Which model to use, from public facts only: d, epsilon, n and delta (optional) and |W|.

    ``schema`` is a :class:`~oracledp.tabular.TableSchema` (its encoded features d, intercept
    included), a schema dict, or d itself.  ``n`` is the number of records, public here as in
    ``oracledp fit`` (delta defaults to 1/n^2); without it the records-per-feature check is
    skipped.  ``delta`` the one you mean to fit with (``fit --delta``), which with n sizes
    opdisc's W as that fit would; it needs n.  Nothing else about the data enters, and nothing
    is drawn.

    The rule (evidence in docs/choosing-a-model.md and benchmarks/advice_check.py):

    * epsilon < 1: dpsgd;
    * fewer than 20 records per encoded feature: dpsgd, with a warning;
    * opdisc's default W larger than 10^6 points (d >= 36 with few numeric columns; a W the
      noise rule raised to ||k||^2 <= 5 is judged as the ||k||^2 <= 4 it grew from: at that
      size 9 of 9 fits on the 23- and 25-feature bundled tables certified), where
      its certification was not established: dpsgd, with a warning that a refused exact fit is still charged under
      --budget;
    * rspm's default W the whole box {-1, 0, 1}^d (d <= 12): gaussian-rspm (auto came within
      0.004 of it);
    * otherwise: auto, the private choice between opdisc and dpsgd at the total epsilon (on
      the tables of this shape opdisc was ahead of dpsgd by up to 3.1 points or behind by up
      to 1.8, and no public fact told which; auto came within 0.003 of the best single model
      on the bundled ones), with opdisc as ``exact_model``.

    ``schema`` a TableSchema, a schema dict or a :class:`~oracledp.oracles.FeatureSchema`: |W|
    is the estimators' own (d and the columns not declared 0/1); d alone: |W| as if few
    columns were numeric (the largest W the rule gives for that d).

    >>> from oracledp import advise_model
    >>> a = advise_model(25, 1.0, n=15_590)
    >>> a.model, a.exact_model
    ('auto', 'opdisc')
    >>> a = advise_model(135, 1.0, n=4_075)
    >>> a.model, a.exact_model, a.certifies("opdisc"), a.certifies("rspm")
    ('dpsgd', 'rspm', 'unlikely', 'likely')
    >>> advise_model(9, 0.1).model
    'dpsgd'
    """
    from oracledp.estimators._space_spec import AUTO_NORM2

    d, features = _advice_schema(schema)
    eps = check_epsilon(epsilon)
    if n is not None:
        n = check_integer(n, "n")
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
    if delta is not None:
        delta = check_delta(delta)
        if n is None:
            raise ValueError("delta needs n: the W that delta sizes is the one of a fit on n "
                             "records")
    # with n records the W of fit --model opdisc at its delta, by default 1/n^2 (none for
    # n = 1 and no delta given: 1/n^2 is no delta)
    sized = n if n is not None and (n > 1 or delta is not None) else None
    space_opdisc, space_rspm = _default_spaces(d, features, sized, eps, delta)
    w_opdisc, w_rspm = space_opdisc.size(), space_rspm.size()
    box = space_rspm.k_norm2_max >= d  # rspm's W is the whole box {-1, 0, 1}^d
    space_columns = _default_spaces(d, features)[0]  # W before the noise rule
    r_columns = space_columns.k_norm2_max
    lowered = r_columns < min(d, AUTO_NORM2["opdisc"])
    # a W the noise rule raised (at most AUTO_GROW_MAX, where the bundled tables certified) is
    # judged as the W it grew from
    w_certify = w_opdisc if space_opdisc.k_norm2_max <= r_columns else space_columns.size()
    certify = (("opdisc", _certify("opdisc", w_certify, eps)),
               ("rspm", _certify("rspm", w_rspm, eps)),
               ("gaussian-rspm", _certify("gaussian-rspm", w_rspm, eps)))
    cert = dict(certify)
    few = n is not None and n < FEW_RECORDS_PER_FEATURE * d
    if cert["opdisc"] == "likely":
        exact: str | None = "gaussian-rspm" if box else "opdisc"
    else:
        exact = "rspm" if cert["rspm"] == "likely" else None

    reasons: list[str] = []
    warnings: list[str] = []
    if eps < ADVICE_MIN_EXACT_EPSILON:
        model = "dpsgd"
        reasons.append(f"epsilon {eps:g} < {ADVICE_MIN_EXACT_EPSILON:g}: {_EVIDENCE_SMALL_EPSILON}")
    elif few:
        model = "dpsgd"
    elif cert["opdisc"] != "likely":
        model = "dpsgd"
        reasons.append(f"d = {d}: {_EVIDENCE_WIDE}")
    elif box:
        model = "gaussian-rspm"
        reasons.append(f"d = {d}: {_EVIDENCE_BOX}; {_EVIDENCE_BOX_AUTO}")
    else:
        model = "auto"
        if lowered:
            reasons.append(f"d = {d}: opdisc's default W is lowered to ||k||^2 <= "
                           f"{r_columns} by the schema's numeric columns: {_EVIDENCE_LOWERED}")
        if space_opdisc.k_norm2_max != r_columns:
            reasons.append(f"n = {n:,}, epsilon {eps:g}: opdisc's default W follows its noise, "
                           f"||k||^2 <= {space_opdisc.k_norm2_max} ({w_opdisc:,} points) for "
                           f"--model opdisc at this epsilon and delta "
                           f"{'1/n^2' if delta is None else f'{delta:.3g}'} (--model auto sizes "
                           f"each trial's W at its own, smaller epsilon): {_EVIDENCE_NOISE_W}")
        reasons.append(f"d = {d}: {_EVIDENCE_COMPACT}")
        reasons.append(f"--model auto: {_EVIDENCE_AUTO}")
    if few:
        assert n is not None
        warnings.append(
            f"only {n / d:.1f} records per encoded feature (fewer than "
            f"{FEW_RECORDS_PER_FEATURE}): {_EVIDENCE_FEW}. Expect little above the majority "
            "rate; use fewer columns (chosen by public knowledge, not by looking at the data) "
            "or more records")
        if eps >= ADVICE_MIN_EXACT_EPSILON:
            reasons.append(f"n = {n:,} for d = {d}: dpsgd, which needs no exact oracle, "
                           "reached the majority rate there")
    if model == "dpsgd" and exact is not None:
        reasons.append(f"if you need an exact 0/1-loss halfspace: {exact} (likely to certify "
                       f"within the {_DEFAULT_LIMIT})"
                       + (", though less accurate than dpsgd at this epsilon"
                          if eps < ADVICE_MIN_EXACT_EPSILON else ""))
    doubtful = [m for m, c in certify if c != "likely"]
    if doubtful:
        which = ", ".join(f"{m} {cert[m]}" for m in doubtful)
        alternatives = ["--model dpsgd (never refused)"]
        if exact is not None:
            alternatives.append(f"--model {exact} (likely to certify)")
        warnings.append(
            f"exact fits may be refused here ({which} to certify within the "
            f"{_DEFAULT_LIMIT}): {_CASE_135}. A refused fit releases "
            "nothing, yet under --budget it stays charged its full epsilon (its noise was "
            f"drawn before the oracle gave up). Prefer {' or '.join(alternatives)}; if you "
            "try an exact model anyway, set --work-limit (a refusal then does not depend on "
            "the machine's load) and consider a smaller epsilon (opdisc certified at 0.1 "
            "there, but below epsilon 1 dpsgd was the more accurate)")
    if eps > EPSILON_CAP:
        warnings.append(f"oracledp fit refuses --epsilon above {EPSILON_CAP:g} unless "
                        "--allow-large-epsilon")
    given = delta is not None
    if delta is None and n is not None and n > 1:
        delta = 1.0 / n**2
    return ModelAdvice(model=model, exact_model=exact, epsilon=eps, d=d, n=n, delta=delta,
                       space_sizes=(("opdisc", w_opdisc), ("rspm", w_rspm)), certify=certify,
                       reasons=tuple(reasons), warnings=tuple(warnings), delta_given=given)


def _advice_schema(schema: Any) -> tuple[int, Any]:
    """(d, FeatureSchema or None): the encoded features (intercept included) of a TableSchema,
    its dict or a FeatureSchema, with its FeatureSchema; or d given as an int, with None."""
    from oracledp.oracles._halfspace import FeatureSchema

    if isinstance(schema, bool):
        raise TypeError("schema must be a TableSchema, a schema dict, a FeatureSchema or the "
                        "number of encoded features, got bool")
    if isinstance(schema, Mapping):
        from oracledp.tabular import TableSchema

        schema = TableSchema.from_dict(dict(schema))
    if isinstance(schema, numbers.Integral):
        d, features = int(schema), None
    elif isinstance(schema, FeatureSchema):
        d, features = schema.d, schema
    elif callable(getattr(schema, "feature_schema", None)):
        features = schema.feature_schema()
        d = features.d
    else:
        raise TypeError("schema must be a TableSchema, a schema dict, a FeatureSchema or the "
                        f"number of encoded features, got {type(schema).__name__}")
    if d < 1:
        raise ValueError(f"the number of encoded features d must be at least 1, got {d}")
    return d, features
