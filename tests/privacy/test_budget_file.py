"""The budget file is the saved form of the one BudgetAccountant.

* ``to_dict``/``from_dict`` round-trip every charge (guarantee, cost, status, details), and a
  reloaded accountant refuses exactly what the original refuses;
* ``open_budget_file`` activates the saved accountant: fits in the block are refused beyond
  the total and charged, and the charges are in the file afterwards, whatever path (a symbolic
  link) reached it; a look or a refusal leaves the file byte for byte as it was;
* a zCDP ledger composes in rho.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oracledp import BudgetError
from oracledp.privacy import BudgetAccountant, PrivacyGuarantee, open_budget_file
from oracledp.synth import Domain, IndependentMarginalsSynthesizer

DOM = Domain(("a", "b"), ((0, 1), (0, 1, 2)))
CODES = np.array([[0, 1], [1, 2], [1, 0], [0, 1]])


def _fit(eps: float, seed: int = 0) -> None:
    IndependentMarginalsSynthesizer(eps, random_state=seed).fit(CODES, DOM)


def test_the_saved_form_round_trips_and_refuses_the_same() -> None:
    with BudgetAccountant(1.0, 1e-6, records_per_person=2) as acct:
        _fit(0.2)
    acct.charge(PrivacyGuarantee.approximate(0.1, 1e-8, source="by hand"), label="hand")
    doc = json.loads(json.dumps(acct.to_dict(), allow_nan=False))
    again = BudgetAccountant.from_dict(doc)
    assert again.to_dict() == doc and again.spends == acct.spends
    assert (again.total, again.records_per_person, again.spent) == (
        acct.total, acct.records_per_person, acct.spent)
    for eps in (0.3, 0.35):  # 0.4 + 0.2 + 0.3 fits in 1.0 per person; 0.4 + 0.2 + 0.35 does not
        outcomes = []
        for a in (acct, again):
            try:
                a.check(eps / 2)
                outcomes.append("fits")
            except BudgetError:
                outcomes.append("refused")
        assert outcomes[0] == outcomes[1]


def test_a_release_without_a_guarantee_is_saved_as_unbounded() -> None:
    acct = BudgetAccountant(1.0)
    g = PrivacyGuarantee.pure(0.1, source="x").not_holding("the oracle did not certify")
    acct.charge(g, label="uncertified")
    doc = json.loads(json.dumps(acct.to_dict(), allow_nan=False))
    assert doc["spends"][0]["epsilon"] == "inf"
    with pytest.raises(BudgetError):
        BudgetAccountant.from_dict(doc).check(1e-9)


def test_a_hand_started_ledger_and_a_hand_recorded_spend() -> None:
    acct = BudgetAccountant.from_dict({"total_epsilon": 1, "note": "study 7",
                                       "spends": [{"epsilon": 0.5, "delta": 0, "by": "R"}]})
    assert acct.spent == (0.5, 0.0) and acct.spends[0].guarantee is None
    assert acct.spends[0].details == {"by": "R"} and acct.to_dict()["note"] == "study 7"
    with pytest.raises(BudgetError):
        acct.check(0.6)


@pytest.mark.parametrize(("doc", "says"), [
    ([], "JSON object"),
    ({"total_epsilon": 1, "composition": "rdp"}, "composition must be one of"),
    ({"total_epsilon": 1, "records_per_person": 0}, "records_per_person"),
    ({"total_epsilon": 1, "spends": [{"epsilon": 0.1, "delta": 0, "status": 3}]},
     "spends[0].status must be a string"),
    ({"total_epsilon": 1, "spends": [{"epsilon": 0.1, "delta": 0, "kind": "approximate",
                                      "guarantee": PrivacyGuarantee.pure(0.1, source="x")
                                      .to_dict()}]}, "spends[0].kind is not"),
])
def test_a_malformed_saved_form_is_refused(doc, says: str) -> None:
    with pytest.raises(ValueError, match=None) as err:
        BudgetAccountant.from_dict(doc)
    assert says in str(err.value)


def test_open_budget_file_activates_saves_and_follows_links(tmp_path: Path) -> None:
    real = tmp_path / "budget.json"
    real.write_text('{"total_epsilon": 1.0}')
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with open_budget_file(link) as acct:
        _fit(0.6)
        assert acct.spent == (0.6, 0.0)
    assert link.is_symlink() and len(json.loads(real.read_text())["spends"]) == 1
    before = real.read_text()
    with pytest.raises(BudgetError), open_budget_file(real):
        _fit(0.6, seed=1)  # the same ledger through the other path: refused
    assert real.read_text() == before  # a refusal writes nothing
    with open_budget_file(real) as acct:
        _fit(0.4, seed=2)
    assert [s["epsilon"] for s in json.loads(real.read_text())["spends"]] == [0.6, 0.4]


def test_a_zcdp_ledger_composes_in_rho(tmp_path: Path) -> None:
    path = tmp_path / "budget.json"
    path.write_text('{"total_epsilon": 3.0, "total_delta": 1e-6, "composition": "zcdp"}')
    with open_budget_file(path) as acct:  # rho budget 0.147
        for seed in range(3):
            _fit(0.3, seed)  # pure: rho = 0.045 each
        assert acct.spent_rho == pytest.approx(0.135)
    saved = json.loads(path.read_text())
    assert [s["rho"] for s in saved["spends"]] == pytest.approx([0.045] * 3)
    assert saved["composition"] == "zcdp"
    with pytest.raises(BudgetError, match="rho"), open_budget_file(path):
        _fit(0.3, 4)  # 0.18 > 0.147 in rho, although 1.2 < 3 by basic composition


def test_each_charge_is_saved_as_it_happens(tmp_path: Path) -> None:
    """A process killed inside the block must leave its charges in the file: the file is
    written as each fit books (reserved) and settles, not only at the block's end."""
    path = tmp_path / "budget.json"
    path.write_text('{"total_epsilon": 1.0}')
    seen = []
    with open_budget_file(path):
        _fit(0.3)
        seen.append([s["epsilon"] for s in json.loads(path.read_text())["spends"]])
        _fit(0.2, seed=1)
        seen.append([s["status"] for s in json.loads(path.read_text())["spends"]])
    assert seen == [[0.3], ["released", "released"]]


def test_a_zcdp_ledger_gives_rho_only_to_pure_hand_spends() -> None:
    doc = {"total_epsilon": 3.0, "total_delta": 1e-6, "composition": "zcdp",
           "spends": [{"epsilon": 0.3, "delta": 0, "kind": "pure"}]}
    assert BudgetAccountant.from_dict(doc).spent_rho == pytest.approx(0.045)
    doc["spends"] = [{"epsilon": 0.3, "delta": 0, "kind": "ex-post"}]
    with pytest.raises(BudgetError):  # no zCDP statement: the budget is exhausted
        BudgetAccountant.from_dict(doc).check(0.01)
