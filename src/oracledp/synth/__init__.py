"""Private synthetic data for contingency tables: domains, workloads, baselines.

Foundations for OracleQuery (see ``docs``/specs): public categorical
:class:`Domain`, k-way marginal workloads with fast evaluation, and the
baselines (independent Laplace 1-way marginals, MWEM).  The synthesizers
:class:`OracleQuerySynthesizer` (:mod:`oracledp.synth._oracle_query`) and
:class:`OracleQueryPGM` (:mod:`oracledp.synth._oracle_query_pgm`) are loaded on first use
(OracleQuery's PRSMA player imports joblib); MST and AIM are in :mod:`oracledp.synth._peers`
(optional ``peers`` extra).

Every synthesizer shares one interface, :class:`Synthesizer` (``fit(data, domain)``,
``guarantee_``, ``answer``, ``sample_codes``, ``sample``): :class:`OracleQuerySynthesizer`,
:class:`OracleQueryPGM`, :class:`MWEMSynthesizer`, :class:`IndependentMarginalsSynthesizer`,
:class:`MSTSynthesizer`, :class:`AIMSynthesizer`; the function forms (:func:`mwem`, ...)
return their result objects for scripts.

Your own table (a CSV or DataFrame and its public :class:`~oracledp.tabular.TableSchema`):
:class:`TableSynthesizer` (``fit(data, schema)``, ``sample(n)``, ``save``/``load``) over the
schema's public domain :class:`TableDomain`, and :func:`evaluate_synthetic` (marginal errors
and train-synthetic/test-real accuracy; NOT private).
"""

from oracledp._lazy import lazy_attributes
from oracledp.synth._baselines import (
    IndependentMarginalsResult,
    MWEMResult,
    independent_marginals,
    mwem,
)
from oracledp.synth._domain import (
    ADULT_CATEGORICAL_ATTRIBUTES,
    AdultCategorical,
    Domain,
    adult_categorical_domain,
    load_adult_categorical,
)
from oracledp.synth._workload import (
    MarginalWorkload,
    answer,
    answer_distribution,
    errors,
    kway_marginal_workload,
)

_LAZY = {
    "Synthesizer": "oracledp.synth._base",
    "IndependentMarginalsSynthesizer": "oracledp.synth._synthesizers",
    "MWEMSynthesizer": "oracledp.synth._synthesizers",
    "MSTSynthesizer": "oracledp.synth._synthesizers",
    "AIMSynthesizer": "oracledp.synth._synthesizers",
    "OracleQuerySynthesizer": "oracledp.synth._oracle_query",
    "OracleQueryPGM": "oracledp.synth._oracle_query_pgm",
    "TableDomain": "oracledp.synth._table",
    "TableSynthesizer": "oracledp.synth._table_synthesizer",
    "evaluate_synthetic": "oracledp.synth._table_evaluate",
}


__getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)


__all__ = [
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
]
