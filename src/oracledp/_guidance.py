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
  (d, epsilon, n if given, |W| of the default parameter space), printed by
  ``oracledp models --schema S --epsilon E [DATA]``.

Nothing here reads data: these are constants and checks of public parameters.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oracledp._validation import check_epsilon, check_integer

__all__ = ["ACCURACY_FIRST_N", "EPSILON_CAP", "GAUSSIAN_RSPM_NOTE", "MODEL_GUIDE", "OPSAMP_WARNING",
           "RECOMMENDED_MODELS", "ModelAdvice", "advise_model", "check_epsilon_cap"]

#: The largest epsilon ``oracledp fit`` accepts without ``--allow-large-epsilon``.
EPSILON_CAP = 10.0

#: Models listed by default (``oracledp models``); OPSamp only with ``--all``.
RECOMMENDED_MODELS = ("opdisc", "rspm", "dpsgd", "accuracy-first")

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
     "the cap leaves for the hypotheses, cannot meet alpha)"),
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

_DEFAULT_TIME_LIMIT = 60  # seconds: `oracledp fit --time-limit`'s default

_EVIDENCE_SMALL_EPSILON = (
    "at epsilon 0.1 dpsgd was the most accurate model or within 0.003 of it on every "
    "measured table (titanic 0.718, biopsy 0.770, health_insurance 0.723, doctor_visits "
    "0.712, Adult 0.758), where opdisc scored 0.361-0.753 over the default W (the exact "
    "models' noise outweighs the data on small tables: titanic 0.361, biopsy 0.462); between "
    "epsilon 0.1 and 1 it was not measured")
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
    "0.032 below (health_insurance). Its W holds only weights with ||k||^2 <= 4 (at most 4 "
    "nonzero), an accuracy ceiling no epsilon removes: on a 23-feature panel (13,781 records) "
    "dpsgd beat it by 1.6-1.8 points at epsilon 1-2 (0.756 / 0.758 against 0.740), and the "
    "best point of W scored 0.748 even at epsilon 1000. No public fact told these tables "
    "apart: if you do not need an exact 0/1-loss halfspace, dpsgd (never refused) is as "
    "sound a choice; for pure epsilon-DP: rspm (0.711-0.774 on those three tables)")
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


@dataclass(frozen=True)
class ModelAdvice:
    """Which model to use for a table, from its public facts only (:func:`advise_model`).

    ``model`` is the advice; ``exact_model`` the exact 0/1-loss model to use if you want one
    (an exact halfspace with small integer weights), or None if none is likely to certify.
    ``certify`` says, per exact model, whether its fit is ``"likely"``, ``"uncertain"`` or
    ``"unlikely"`` to certify within the default 60 s oracle limit (a fit that does not
    certify releases nothing).  ``space_sizes`` are |W| of the default ``--space auto`` for
    opdisc and for rspm / gaussian-rspm; ``delta`` the default 1/n^2 when n is given.
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

    def certifies(self, model: str) -> str:
        """``"likely"``, ``"uncertain"`` or ``"unlikely"`` for an exact model."""
        return dict(self.certify)[model]


def _default_space_sizes(d: int) -> tuple[int, int, bool]:
    """|W| of ``--space auto`` for opdisc and for rspm, and whether rspm's W is the box."""
    from oracledp.estimators._space_spec import auto_norm2, parameter_space

    return (parameter_space("auto", d).size(), parameter_space("auto", d, model="rspm").size(),
            auto_norm2(d, "rspm") == d)


def _certify(model: str, size: int, epsilon: float) -> str:
    if model == "opdisc":
        if size <= CERTIFIES_W:
            return "likely"
        return ("unlikely" if size >= OPDISC_REFUSES_W and epsilon >= ADVICE_MIN_EXACT_EPSILON
                else "uncertain")
    return "likely" if size <= RSPM_MEASURED_W else "uncertain"


def advise_model(schema: Any, epsilon: float, n: int | None = None) -> ModelAdvice:
    """Which model to use, from public facts only: d, epsilon, n (optional) and |W|.

    ``schema`` is a :class:`~oracledp.tabular.TableSchema` (its encoded features d, intercept
    included), a schema dict, or d itself.  ``n`` is the number of records, public here as in
    ``oracledp fit`` (delta defaults to 1/n^2); without it the records-per-feature check is
    skipped.  Nothing else about the data enters, and nothing is drawn.

    The rule (evidence in docs/choosing-a-model.md and benchmarks/advice_check.py):

    * epsilon < 1: dpsgd;
    * fewer than 20 records per encoded feature: dpsgd, with a warning;
    * opdisc's default W larger than 10^6 points (d >= 36), where its certification was not
      established: dpsgd, with a warning that a refused exact fit is still charged under
      --budget;
    * rspm's default W the whole box {-1, 0, 1}^d (d <= 12): gaussian-rspm;
    * otherwise: opdisc (with dpsgd as an equally sound choice without an exact halfspace).

    >>> from oracledp import advise_model
    >>> advise_model(25, 1.0, n=15_590).model
    'opdisc'
    >>> a = advise_model(135, 1.0, n=4_075)
    >>> a.model, a.exact_model, a.certifies("opdisc"), a.certifies("rspm")
    ('dpsgd', 'rspm', 'unlikely', 'likely')
    >>> advise_model(9, 0.1).model
    'dpsgd'
    """
    d = _advice_d(schema)
    eps = check_epsilon(epsilon)
    if n is not None:
        n = check_integer(n, "n")
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
    w_opdisc, w_rspm, box = _default_space_sizes(d)
    certify = (("opdisc", _certify("opdisc", w_opdisc, eps)),
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
        reasons.append(f"d = {d}: {_EVIDENCE_BOX}")
    else:
        model = "opdisc"
        reasons.append(f"d = {d}: {_EVIDENCE_COMPACT}")
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
                       f"within the default {_DEFAULT_TIME_LIMIT} s limit)"
                       + (", though less accurate than dpsgd at this epsilon"
                          if eps < ADVICE_MIN_EXACT_EPSILON else ""))
    doubtful = [m for m, c in certify if c != "likely"]
    if doubtful:
        which = ", ".join(f"{m} {cert[m]}" for m in doubtful)
        alternatives = ["--model dpsgd (never refused)"]
        if exact is not None:
            alternatives.append(f"--model {exact} (likely to certify)")
        warnings.append(
            f"exact fits may be refused here ({which} to certify within the default "
            f"{_DEFAULT_TIME_LIMIT} s oracle limit): {_CASE_135}. A refused fit releases "
            "nothing, yet under --budget it stays charged its full epsilon (its noise was "
            f"drawn before the oracle gave up). Prefer {' or '.join(alternatives)}; if you "
            "try an exact model anyway, set --work-limit (a refusal then does not depend on "
            "the machine's load) and consider a smaller epsilon (opdisc certified at 0.1 "
            "there, but below epsilon 1 dpsgd was the more accurate)")
    if eps > EPSILON_CAP:
        warnings.append(f"oracledp fit refuses --epsilon above {EPSILON_CAP:g} unless "
                        "--allow-large-epsilon")
    delta = 1.0 / n**2 if n is not None and n > 1 else None
    return ModelAdvice(model=model, exact_model=exact, epsilon=eps, d=d, n=n, delta=delta,
                       space_sizes=(("opdisc", w_opdisc), ("rspm", w_rspm)), certify=certify,
                       reasons=tuple(reasons), warnings=tuple(warnings))


def _advice_d(schema: Any) -> int:
    """d: the schema's encoded features (a TableSchema or its dict), or d given as an int."""
    if isinstance(schema, bool):
        raise TypeError("schema must be a TableSchema, a schema dict or the number of encoded "
                        "features, got bool")
    if isinstance(schema, Mapping):
        from oracledp.tabular import TableSchema

        schema = TableSchema.from_dict(dict(schema))
    value = schema if isinstance(schema, numbers.Integral) else getattr(schema, "n_features",
                                                                        None)
    if not isinstance(value, numbers.Integral):
        raise TypeError("schema must be a TableSchema, a schema dict or the number of "
                        f"encoded features, got {type(schema).__name__}")
    d = int(value)
    if d < 1:
        raise ValueError(f"the number of encoded features d must be at least 1, got {d}")
    return int(d)
