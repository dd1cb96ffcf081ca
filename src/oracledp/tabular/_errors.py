"""The errors of :mod:`oracledp.tabular`: a table, a schema or a model file that cannot be used.

:class:`TableInputError` (file-level problems of a table or CSV), :class:`UnconfirmedSchemaError`
(a schema with entries read from the data) and :class:`ModelFileError` (an invalid
``model.json``).  All are :class:`~oracledp.errors.OracleDPError` and ValueError.
"""

from __future__ import annotations

from oracledp.errors import OracleDPError


class TableInputError(OracleDPError, ValueError):
    """A table or CSV that cannot be read against its schema (file-level problems)."""


class UnconfirmedSchemaError(OracleDPError, ValueError):
    """A schema still holds entries read from the data (``"from_data": true``)."""


class ModelFileError(TableInputError):
    """A ``model.json`` that is not a valid model of the current format (tampered, truncated,
    written by another version or by hand).  Nothing of it is used."""
