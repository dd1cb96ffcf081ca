"""Public policy of the command line: the epsilon cap, and which model to use.

* :data:`EPSILON_CAP`: ``oracledp fit`` refuses ``--epsilon`` (and Accuracy First's
  ``--max-epsilon``) above it unless ``--allow-large-epsilon``.  At epsilon = 10 the
  guarantee allows the odds of any conclusion about one record to change by a factor
  e^10 ~ 22,000: above that, differential privacy's promise says little.
* :data:`MODEL_GUIDE`: the measured recommendation printed by ``oracledp models``, from
  ``benchmarks/your_tables.py`` (the numbers are in ``docs/choosing-a-model.md``).
* :data:`OPSAMP_WARNING`: what OPSamp achieved in that benchmark.
* :data:`ACCURACY_FIRST_N`: the records Accuracy First needs, from its public refusal rules.

Nothing here reads data: these are constants and checks of public parameters.
"""

from __future__ import annotations

import math

__all__ = ["ACCURACY_FIRST_N", "EPSILON_CAP", "GAUSSIAN_RSPM_NOTE", "MODEL_GUIDE", "OPSAMP_WARNING",
           "RECOMMENDED_MODELS", "check_epsilon_cap"]

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
     "doctor_visits 0.717 / 0.715; every fit certified); if the oracle does not certify in "
     "time, nothing is released (use --work-limit for a reproducible decision)"),
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
