"""Reading a CSV against a schema: :func:`read_csv` and the file-level checks.

The CSV is streamed as UTF-8 text (gunzipped if gzip, a byte-order mark dropped); unreadable,
empty, non-UTF-8 or wrongly delimited files raise :class:`TableInputError`.  The helpers
here are shared with :func:`~oracledp.tabular.read_csv_aggregated`.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pandas as pd

from oracledp._errors import TableInputError
from oracledp._validation import check_sep

if TYPE_CHECKING:
    from oracledp.tabular._schema import TableSchema


# --- CSV reading ---------------------------------------------------------------------------


_BLOCK = 1 << 16  # characters per read of the file-level pre-scan
_PARSE: dict[str, Any] = {"dtype": str, "keep_default_na": False, "skipinitialspace": True}


def _source_label(source: str | Path | bytes) -> str:
    return "the input" if isinstance(source, bytes) else str(source)


@contextlib.contextmanager
def _text_stream(source: str | Path | bytes, label: str) -> Iterator[io.TextIOWrapper]:
    """The CSV as UTF-8 text, read lazily (never held whole): gunzipped if it starts with the
    gzip magic bytes, a leading byte-order mark dropped.  Decoding and gzip errors met while
    reading raise :class:`TableInputError`."""
    with contextlib.ExitStack() as stack:
        raw: IO[bytes]
        if isinstance(source, bytes):
            raw = io.BytesIO(source)
        else:
            try:
                raw = stack.enter_context(open(source, "rb"))
            except OSError as exc:
                raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
        try:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
        except OSError as exc:
            raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
        if gz:
            raw = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="")
        try:
            yield text
        except UnicodeDecodeError:
            raise TableInputError(f"{label}: the file is not UTF-8 text; re-save it as UTF-8 "
                                  "(e.g. from a spreadsheet: CSV UTF-8)") from None
        except (OSError, EOFError, zlib.error) as exc:
            if gz:
                raise TableInputError(f"{label}: not a readable gzip file") from None
            if isinstance(exc, OSError):
                raise TableInputError(f"{label}: cannot read the file ({exc.strerror})"
                                      ) from None
            raise


def _prescan(source: str | Path | bytes, label: str) -> None:
    """The file-level checks, in one streaming pass: readable (and gunzippable), UTF-8 from
    start to end, not blank.  Run before parsing, so these refusals do not depend on where
    in the file the problem is."""
    blank = True
    with _text_stream(source, label) as fh:
        while block := fh.read(_BLOCK):
            if blank and block.strip():
                blank = False
    if blank:
        raise TableInputError(f"{label}: the file is empty (expected a header line and rows)")


def _parse_error(label: str, sep: str, exc: Exception) -> TableInputError:
    first = str(exc).splitlines()[0] if str(exc) else "parse error"
    return TableInputError(f"{label}: cannot parse as CSV with delimiter {sep!r} "
                           f"({first.split(':')[0]})")


def _check_header(columns: list[str], schema: TableSchema | None, with_target: bool,
                  sep: str, label: str) -> None:
    """A header that parsed into one column where the schema expects more: wrong delimiter."""
    if schema is None:
        return
    expected = len(schema.columns) + (1 if with_target else 0)
    if len(columns) == 1 and expected > 1:
        guess = next((d for d in (";", "\t", "|", ",") if d != sep and d in columns[0]), None)
        hint = f" (the header contains {guess!r}: try --sep {guess!r})" if guess else ""
        raise TableInputError(
            f"{label}: the file parsed into a single column with delimiter {sep!r}, but the "
            f"schema expects {expected} columns; is the delimiter right?{hint}")


def _no_rows(label: str) -> TableInputError:
    return TableInputError(f"{label}: the file has a header but no rows")


def read_csv(source: str | Path | bytes, schema: TableSchema | None = None, *,
             sep: str = ",", with_target: bool = False, ignore_extra: bool = True,
             check: bool = True) -> pd.DataFrame:
    """Read a CSV as strings; with ``schema``, check it and raise ONE error listing every problem.

    File-level problems (unreadable, empty, non-UTF-8, wrong delimiter) raise
    :class:`TableInputError`; values outside the schema raise BoundsViolation (``check=False``
    leaves the values to the caller, e.g. the prediction policy); with
    ``ignore_extra=False`` columns the schema does not mention are refused.  The file is
    streamed into the table (its bytes and text are never held whole besides it); for a
    table too large for memory see :func:`read_csv_aggregated`.
    """
    check_sep(sep)
    label = _source_label(source)
    _prescan(source, label)
    with _text_stream(source, label) as fh:
        try:
            df = pd.read_csv(fh, sep=sep, **_PARSE)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _parse_error(label, sep, exc) from None
    df.columns = [str(c).strip() for c in df.columns]
    _check_header(list(df.columns), schema, with_target, sep, label)
    if len(df) == 0:
        raise _no_rows(label)
    if schema is not None and check:
        schema.check(df, with_target=with_target, ignore_extra=ignore_extra)
    return df
