"""The scikit-learn transformer :class:`SchemaTransformer` encoding by a public schema."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin

from oracledp.tabular._schema import TableSchema


class SchemaTransformer(TransformerMixin, BaseEstimator):
    """scikit-learn transformer encoding a DataFrame by a public :class:`TableSchema`.

    ``fit`` reads nothing from the data: it refuses an unconfirmed schema (any
    ``from_data`` entry, any unresolved column) and checks ``X`` against it; ``fit_transform``
    encodes the training rows with the same strict checks.  ``transform`` encodes rows to
    predict on (one-hot, exact grid ``k/K``, thermometer bins, missing indicators, the
    intercept feature, ``row_divisor``) by ``on_unknown``: ``"clip"`` (default) applies the
    prediction policy of :meth:`TableSchema.encode_for_prediction` (numbers clipped to the
    public bounds, unknown levels all-zero, a
    :class:`~oracledp._errors.PredictionPolicyWarning` counting the rows), ``"refuse"``
    raises one BoundsViolation listing every problem.  Training data are clipped only in the
    columns that declare ``"out_of_bounds": "clip"`` (as every encoding clips them).
    Output: a float numpy array whose columns are ``get_feature_names_out()`` and whose
    public feature schema is ``schema.feature_schema()``.

    Examples
    --------
    >>> import pandas as pd
    >>> from oracledp import SchemaTransformer, TableSchema
    >>> df = pd.DataFrame({"age": [23, 45, 31, 60], "job": ["a", "b", "a", "c"], "y": [0, 1, 0, 1]})
    >>> schema = TableSchema.infer(df, target="y")[0].confirmed()  # public bounds, confirmed
    >>> SchemaTransformer(schema).fit_transform(df[["age", "job"]]).shape
    (4, 5)
    """

    def __init__(self, schema: TableSchema, on_unknown: str = "clip") -> None:
        self.schema = schema
        self.on_unknown = on_unknown

    def _schema(self) -> TableSchema:
        if not isinstance(self.schema, TableSchema):
            raise TypeError(f"schema must be a TableSchema, got {type(self.schema).__name__}")
        if self.on_unknown not in ("clip", "refuse"):
            raise ValueError(f"on_unknown must be 'clip' or 'refuse', got {self.on_unknown!r}")
        return self.schema

    def fit(self, X: pd.DataFrame, y: Any = None) -> SchemaTransformer:
        schema = self._schema()
        schema.check_confirmed()
        schema.check(X)
        self.n_features_in_ = X.shape[1]
        self.feature_names_in_ = np.asarray(list(map(str, X.columns)), dtype=object)
        return self

    def fit_transform(self, X: pd.DataFrame, y: Any = None, **fit_params: Any,
                      ) -> NDArray[np.float64]:
        """Fit, then encode the training rows strictly (clipped only where declared)."""
        self.fit(X, y)
        return self._schema().encode(X)

    def transform(self, X: pd.DataFrame) -> NDArray[np.float64]:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_features_in_")
        schema = self._schema()
        if self.on_unknown == "refuse":
            return schema.encode(X)
        return schema.encode_for_prediction(X)[0]

    def get_feature_names_out(self, input_features: Any = None) -> NDArray[np.object_]:
        return np.asarray(self._schema().feature_names, dtype=object)
