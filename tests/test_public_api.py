"""The declared surface: each package's ``__init__`` is its only public face, pinned here.

* Every ``__all__`` is pinned (:data:`PUBLIC`): adding or removing a public name is a
  deliberate change of this file (and of ``CHANGELOG.md``), never a side effect.  Every listed
  name resolves, and no private name is listed.
* Every implementation module is private (a leading underscore); the packages are exactly
  :data:`PUBLIC`'s keys.
* No package attribute shares a name with one of its submodules unless it is that submodule
  (a function and a module behind one dotted name read differently by attribute access and by
  ``import``).
* The top level's lazily loaded names come from public packages.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import oracledp

SRC = Path(oracledp.__file__).resolve().parent

# regenerate with: python tests/test_public_api.py (then review the diff)
PUBLIC: dict[str, list[str]] = {
    "oracledp": [
        "AIMSynthesizer",
        "AccuracyFirstLogisticRegression",
        "AccuracyFirstRidge",
        "BoundsViolation",
        "BudgetError",
        "ClippedValuesWarning",
        "DPSGDLogisticRegression",
        "DataIntegrityError",
        "DiagnosticsWarning",
        "GaussianRSPMClassifier",
        "GuaranteeKind",
        "IndependentMarginalsSynthesizer",
        "MODELS",
        "MSTSynthesizer",
        "MWEMSynthesizer",
        "ModelAdvice",
        "ModelFileError",
        "NoHaltError",
        "NonPrivateDiagnostics",
        "OPDiscClassifier",
        "OPSampClassifier",
        "OracleDPError",
        "OracleFailure",
        "OracleQueryPGM",
        "OracleQuerySynthesizer",
        "PredictionPolicyWarning",
        "PrivacyGuarantee",
        "PrivacyWarning",
        "RSPMClassifier",
        "SchemaTransformer",
        "Synthesizer",
        "TableInputError",
        "TableSchema",
        "UnconfirmedSchemaError",
        "__version__",
        "advise_model",
        "check_rng",
        "covnr",
        "doubling",
        "environment",
        "ftpl",
        "gaussian_rspm",
        "independent_marginals",
        "make_estimator",
        "model_schema",
        "mwem",
        "noise_reduction",
        "opdisc",
        "opsamp",
        "outputnr",
        "prsma",
        "research_diagnostics",
        "rspm",
    ],
    "oracledp.audit": [
        "ALPHA",
        "AuditResult",
        "FAILURE",
        "audit",
        "clopper_pearson_interval",
        "clopper_pearson_lower",
        "clopper_pearson_upper",
        "epsilon_lower_bound",
        "failure_aware_sampler",
        "gaussian_mu_max",
        "is_failure",
        "mu_lower_bound",
    ],
    "oracledp.baselines": [
        "DEFAULT_PAPER_GRID",
        "DPSGDLogisticRegression",
        "DPSGDResult",
        "calibrate_noise_multiplier",
        "dpsgd_epsilon",
        "dpsgd_logistic",
        "dpsgd_paper_protocol",
    ],
    "oracledp.datasets": [
        "DataIntegrityError",
        "TABLES",
        "TabularDataset",
        "adult_csv",
        "kdd99_csv",
        "list_datasets",
        "load_adult",
        "load_kdd99",
        "load_kdd99_raw",
        "table_csv",
        "table_info",
        "table_schema",
    ],
    "oracledp.erm": [
        "AccuracyFirstResult",
        "LogisticProblem",
        "NoHaltError",
        "RidgeProblem",
        "covnr",
        "covpert_ridge_epsilon",
        "default_eps_grid",
        "doubling",
        "outpert_logistic_epsilon",
        "outpert_ridge_epsilon",
        "outputnr",
    ],
    "oracledp.estimators": [
        "AccuracyFirstLogisticRegression",
        "AccuracyFirstRidge",
        "AutoClassifier",
        "GaussianRSPMClassifier",
        "OPDiscClassifier",
        "OPSampClassifier",
        "RSPMClassifier",
    ],
    "oracledp.learners": [
        "ClassRSPMBase",
        "GaussianRSPMResult",
        "OPDiscResult",
        "OPSampResult",
        "RSPMResult",
        "follow_the_leader",
        "ftpl",
        "ftpl_privacy",
        "ftpl_regret_bound",
        "gaussian_rspm",
        "gaussian_rspm_calibration",
        "gaussian_rspm_guarantee",
        "opdisc",
        "opdisc_guarantee",
        "opdisc_sigma",
        "opsamp",
        "opsamp_guarantee",
        "opsamp_lambda",
        "opsamp_parameters",
        "opsamp_sensitivity",
        "prsma",
        "prsma_cost",
        "rspm",
        "rspm_guarantee",
        "rspm_space",
    ],
    "oracledp.mechanisms": [
        "ExPostLoss",
        "InteractiveAboveThreshold",
        "iat_query_scale",
        "iat_threshold_scale",
        "noise_reduction",
        "noise_reduction_guarantee",
        "nr_keep_probabilities",
        "nr_scales",
    ],
    "oracledp.oracles": [
        "CERTIFY_ABS_TOL",
        "FeatureSchema",
        "HalfspaceProblem",
        "IntegerBall",
        "Oracle",
        "OracleResult",
        "OracleStatus",
        "available_oracles",
        "check_solver_name",
        "make_oracle",
    ],
    "oracledp.privacy": [
        "BudgetAccountant",
        "BudgetFileError",
        "COMPOSITIONS",
        "Charge",
        "GuaranteeKind",
        "PrivacyGuarantee",
        "Spend",
        "active_accountant",
        "advanced_composition",
        "advanced_composition_k",
        "basic_composition",
        "compose",
        "exponential_mechanism_guarantee",
        "exponential_mechanism_rho",
        "gaussian_delta",
        "gaussian_multiplier_rho",
        "gaussian_rho",
        "gaussian_zcdp_sigma",
        "group_privacy",
        "laplace_guarantee",
        "laplace_scale",
        "ledger_guarantee",
        "open_budget_file",
        "pure_to_zcdp",
        "read_budget_file",
        "select_measure_rho",
        "set_default_accountant",
        "zcdp_epsilon",
        "zcdp_rho",
    ],
    "oracledp.query_classes": [
        "BruteForceClassOracle",
        "ClassOracleResult",
        "ConjunctionsOfLiterals",
        "ENUMERATE_LIMIT",
        "HighsClassOracle",
        "IntegerHalfspaces",
        "LocalSearchClassOracle",
        "LossClass",
        "LossOracle",
        "MonotoneConjunctions",
        "MonotoneDecisionLists",
        "MonotoneDisjunctions",
        "NegatedClass",
        "NegatedOracle",
        "Parities",
        "QueryClass",
        "WeightedOracle",
        "make_class_oracle",
    ],
    "oracledp.synth": [
        "ADULT_CATEGORICAL_ATTRIBUTES",
        "AIMSynthesizer",
        "AdultCategorical",
        "Domain",
        "IndependentMarginalsResult",
        "IndependentMarginalsSynthesizer",
        "MSTSynthesizer",
        "MWEMResult",
        "MWEMSynthesizer",
        "MarginalWorkload",
        "OracleQueryPGM",
        "OracleQuerySynthesizer",
        "Synthesizer",
        "TableDomain",
        "TableSynthesizer",
        "adult_categorical_domain",
        "answer",
        "answer_distribution",
        "errors",
        "evaluate_synthetic",
        "independent_marginals",
        "kway_marginal_workload",
        "load_adult_categorical",
        "mwem",
    ],
    "oracledp.tabular": [
        "AggregatedTable",
        "ClippedValuesWarning",
        "Column",
        "ModelFileError",
        "SavedModel",
        "SchemaTransformer",
        "TableInputError",
        "TableSchema",
        "UnconfirmedSchemaError",
        "check_table",
        "fit_aggregated",
        "load_model",
        "read_aggregated",
        "read_csv",
        "save_model",
    ],
}


def _packages() -> list[str]:
    found = ["oracledp"]
    for info in pkgutil.walk_packages(oracledp.__path__, "oracledp."):
        if info.ispkg and not any(p.startswith("_") for p in info.name.split(".")):
            found.append(info.name)
    return sorted(found)


def test_the_packages_are_the_pinned_ones() -> None:
    assert _packages() == sorted(PUBLIC)


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_all_is_pinned_and_resolves(package: str) -> None:
    mod = importlib.import_module(package)
    names = list(mod.__all__)
    assert len(names) == len(set(names)), "a name is listed twice"
    assert sorted(names) == PUBLIC[package]
    for name in names:
        assert not name.startswith("_") or name == "__version__", name
        getattr(mod, name)  # resolves (lazy names load here)


def test_every_implementation_module_is_private() -> None:
    public_files = sorted(
        str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py") and not p.name.startswith("_")
        and not any(part.startswith("_") for part in p.relative_to(SRC).parts[:-1]))
    assert public_files == []


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_no_attribute_shadows_a_submodule(package: str) -> None:
    mod = importlib.import_module(package)
    for info in pkgutil.iter_modules(mod.__path__):
        sub = importlib.import_module(f"{package}.{info.name}")
        attr = getattr(mod, info.name, sub)
        assert attr is sub, f"{package}.{info.name} is both a module and another object"


def test_top_level_lazy_names_come_from_public_packages() -> None:
    for name, home in oracledp._LAZY.items():
        parts = home.split(".")
        assert home == "oracledp" or not parts[-1].startswith("_") or len(parts) == 2, (name, home)
        assert getattr(oracledp, name) is getattr(importlib.import_module(home), name)


if __name__ == "__main__":
    for pkg in _packages():
        names = sorted(importlib.import_module(pkg).__all__)
        body = "".join(f'\n        "{n}",' for n in names)
        print(f'    "{pkg}": [{body}\n    ],')
