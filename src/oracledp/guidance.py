"""Public policy of the command line: the epsilon cap, and which model to use.

* :data:`EPSILON_CAP`: ``oracledp fit`` refuses ``--epsilon`` (and Accuracy First's
  ``--max-epsilon``) above it unless ``--allow-large-epsilon``.  At epsilon = 10 the
  guarantee allows the odds of any conclusion about one record to change by a factor
  e^10 ~ 22,000: above that, differential privacy's promise says little.
* :data:`MODEL_GUIDE`: the measured recommendation printed by ``oracledp models`` and
  written out in ``docs/choosing-a-model.md``, from ``benchmarks/your_tables.py``.
* :data:`OPSAMP_WARNING`: what OPSamp achieved in that benchmark.

Nothing here reads data: these are constants and checks of public parameters.
"""

from __future__ import annotations

import math

__all__ = ["EPSILON_CAP", "MODEL_GUIDE", "OPSAMP_WARNING", "RECOMMENDED_MODELS",
           "check_epsilon_cap"]

#: The largest epsilon ``oracledp fit`` accepts without ``--allow-large-epsilon``.
EPSILON_CAP = 10.0

#: Models listed by default (``oracledp models``); OPSamp only with ``--all``.
RECOMMENDED_MODELS = ("opdisc", "rspm", "dpsgd", "accuracy-first")

#: Shown whenever OPSamp is chosen (measured by benchmarks/your_tables.py, see
#: docs/choosing-a-model.md).
OPSAMP_WARNING = (
    "OPSamp is not recommended: in benchmarks/your_tables.py it scored at or below the "
    "majority rate on every table at every epsilon in {0.1, 1, 2} (its sampling noise swamps "
    "the data at these sizes); see docs/choosing-a-model.md. Use opdisc, rspm or dpsgd."
)

#: (table shape, epsilon range, recommended model, why) -- filled from the benchmark.
MODEL_GUIDE: tuple[tuple[str, str, str, str], ...] = (
    ("any table", "any", "dpsgd",
     "the most robust: no exact oracle, so it never stops for lack of a certificate"),
    ("few encoded features (<= ~25), 0/1 loss wanted", "eps >= 1", "opdisc",
     "exact 0/1-loss halfspace; needs the oracle to certify (can stop after --time-limit)"),
    ("few encoded features, pure epsilon-DP wanted", "eps >= 1", "rspm",
     "pure DP, weights in {-1, 0, 1}; needs the oracle to certify"),
    ("large n, accuracy target instead of an epsilon", "ex-post, capped", "accuracy-first",
     "releases the smallest epsilon on its grid that meets --alpha; refuses above --max-epsilon"),
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
