"""`oracledp fit` refuses an option that the chosen --model does not take (never ignores it).

Every model-specific option (--epsilon, --delta, --alpha, --max-epsilon, --solver,
--time-limit, --space, --work-limit) given to a model it does not apply to is refused with one ``error:`` line
naming the option and the model, exit 2, before DATA is read (here DATA does not exist, so a
read would end in "cannot read the file" instead); every option a model does take passes this
rule.  An option given with its default value counts as given.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracledp._cli import app
from oracledp._registry import MODELS

ENV = {"COLUMNS": "200"}
SCHEMA = {"target": {"name": "y", "labels": ["no", "yes"]},
          "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1}]}
TAKES = {  # the rule as a user reads it in `oracledp fit --help`
    "--epsilon": {"opdisc", "rspm", "gaussian-rspm", "opsamp", "dpsgd"},
    "--delta": {"opdisc", "gaussian-rspm", "opsamp", "dpsgd"},
    "--alpha": {"accuracy-first"},
    "--max-epsilon": {"accuracy-first"},
    "--solver": {"opdisc", "rspm", "gaussian-rspm"},
    "--time-limit": {"opdisc", "rspm", "gaussian-rspm"},
    "--space": {"opdisc", "rspm", "gaussian-rspm"},
    "--work-limit": {"opdisc", "rspm", "gaussian-rspm"},
}
VALUES = {"--epsilon": "1", "--delta": "1e-6", "--alpha": "0.1", "--max-epsilon": "5",
          "--solver": "highs", "--time-limit": "60", "--space": "auto",
          "--work-limit": "1000"}  # valid values (the defaults where any)


def _fit(runner, tmp_path: Path, model: str, *extra: str):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    base = ["fit", str(tmp_path / "missing.csv"), "--schema", str(schema), "--model", model,
            "--out", str(tmp_path / "out")]
    if model != "accuracy-first" and "--epsilon" not in extra:
        base += ["--epsilon", "1"]
    return runner.invoke(app, [*base, *extra], env=ENV)


CASES = [(m, o) for o in TAKES for m in MODELS]


@pytest.mark.parametrize(("model", "option"), [c for c in CASES if c[0] not in TAKES[c[1]]])
def test_an_option_the_model_does_not_take_is_refused(runner, tmp_path, model, option):
    res = _fit(runner, tmp_path, model, option, VALUES[option])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    err = res.stderr
    assert err.startswith(f"error: {option} does not apply to --model {model} ("), err
    assert err.count("\n") == 1 and res.stdout == ""
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("model", "option"), [c for c in CASES if c[0] in TAKES[c[1]]])
def test_an_option_the_model_takes_passes(runner, tmp_path, model, option):
    res = _fit(runner, tmp_path, model, option, VALUES[option])
    assert res.exit_code == 2 and "does not apply" not in res.stderr
    assert "cannot read the file" in res.stderr  # it got as far as reading DATA


def test_every_inapplicable_option_is_named_in_one_line(runner, tmp_path):
    res = _fit(runner, tmp_path, "dpsgd", "--alpha", "0.2", "--solver", "brute",
               "--time-limit", "5")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("error: --alpha, --solver, --time-limit do not apply to "
                                 "--model dpsgd (--alpha is an option of accuracy-first only;")
