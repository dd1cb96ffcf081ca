"""oracledp: differentially private learning with optimization oracles.

The public API, importable from here (heavy parts load on first use; importing ``oracledp``
imports no solver, pandas or scikit-learn):

* estimators (scikit-learn): :class:`OPDiscClassifier`, :class:`RSPMClassifier`,
  :class:`OPSampClassifier`, :class:`AccuracyFirstLogisticRegression`,
  :class:`AccuracyFirstRidge`, :class:`DPSGDLogisticRegression`; :func:`make_estimator` by name;
* learner functions: :func:`opdisc`, :func:`rspm`, :func:`opsamp`, :func:`prsma`,
  :func:`ftpl`, :func:`covnr`, :func:`outputnr`, :func:`doubling`, :func:`noise_reduction`;
* synthesizers (one interface, :class:`Synthesizer`): :class:`OracleQuerySynthesizer`,
  :class:`OracleQueryPGM`, :class:`MWEMSynthesizer`, :class:`IndependentMarginalsSynthesizer`,
  :class:`MSTSynthesizer`, :class:`AIMSynthesizer`; the functions :func:`mwem`,
  :func:`independent_marginals`;
* tables: :class:`TableSchema`, :class:`SchemaTransformer`; :func:`advise_model` (which model
  for a table, from its public facts: a :class:`ModelAdvice`);
* privacy: :class:`PrivacyGuarantee` (carried by every release), :mod:`oracledp.privacy`;
* errors: :class:`OracleDPError` and its subclasses (:mod:`oracledp._errors`);
* research runs: :class:`NonPrivateDiagnostics` (what a run computed that its guarantee does
  not cover, kept only on request), :func:`research_diagnostics` (a context that silences the
  :class:`DiagnosticsWarning` of such an opt-in, for experiment drivers) and
  :func:`environment` (date, Python and package versions, CPUs and load: the provenance of a
  measurement).
"""

from oracledp._diagnostics import NonPrivateDiagnostics, research_diagnostics
from oracledp._errors import (
    BoundsViolation,
    BudgetError,
    ClippedValuesWarning,
    DataIntegrityError,
    DiagnosticsWarning,
    ModelFileError,
    NoHaltError,
    OracleDPError,
    OracleFailure,
    PredictionPolicyWarning,
    PrivacyWarning,
    TableInputError,
    UnconfirmedSchemaError,
)
from oracledp._lazy import by_module, lazy_attributes
from oracledp._validation import check_rng
from oracledp.privacy._guarantees import GuaranteeKind, PrivacyGuarantee

__version__ = "0.1.0"

__all__ = [
    "MODELS",
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
]

# module -> the names it defines, each imported on first access (PEP 562)
_LAZY = by_module({
    "oracledp.tabular": ("TableSchema", "SchemaTransformer"),
    "oracledp._registry": ("make_estimator", "model_schema", "MODELS"),
    "oracledp.estimators": ("OPDiscClassifier", "RSPMClassifier", "GaussianRSPMClassifier",
                            "OPSampClassifier", "AccuracyFirstLogisticRegression",
                            "AccuracyFirstRidge"),
    "oracledp.baselines": ("DPSGDLogisticRegression",),
    "oracledp.learners": ("opdisc", "rspm", "gaussian_rspm", "opsamp", "prsma", "ftpl"),
    "oracledp.erm": ("covnr", "outputnr", "doubling"),
    "oracledp.mechanisms": ("noise_reduction",),
    "oracledp.synth": ("OracleQuerySynthesizer", "OracleQueryPGM", "mwem", "Synthesizer",
                       "MWEMSynthesizer", "IndependentMarginalsSynthesizer", "MSTSynthesizer",
                       "AIMSynthesizer", "independent_marginals"),
    "oracledp._provenance": ("environment",),
    "oracledp._guidance": ("advise_model", "ModelAdvice"),
})
__getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)
