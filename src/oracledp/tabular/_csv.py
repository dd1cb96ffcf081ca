"""Reading a CSV against a schema: :func:`read_csv` and the file-level checks.

The CSV is streamed as UTF-8 text (gunzipped if gzip, a byte-order mark dropped); unreadable,
empty, non-UTF-8 or wrongly delimited files raise :class:`TableInputError`.  The helpers
here are shared with :func:`~oracledp.tabular.read_aggregated`.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import stat
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from oracledp._errors import TableInputError
from oracledp._validation import check_sep
from oracledp.tabular._cells import duplicate_names

if TYPE_CHECKING:
    from oracledp.tabular._schema import TableSchema


# --- CSV reading ---------------------------------------------------------------------------


_BLOCK = 1 << 16  # characters per read of the file-level pre-scan
#: Every cell and header name as written: no NA guessing, and no space skipped or stripped
#: (spaces around a value or a name are refused by the schema's checks, by column).
_PARSE: dict[str, Any] = {"dtype": str, "keep_default_na": False, "skipinitialspace": False}


def _source_label(source: str | Path | bytes) -> str:
    return "the input" if isinstance(source, bytes) else str(source)


#: The readers' progress report ``report(phase, done, total)``: ``phase`` is "checking" (the
#: file-level pre-scan) or "reading" (parsing), ``done`` the bytes of the file read so far
#: and ``total`` its size (None when unknown, e.g. a pipe); gzip files count their
#: compressed bytes.
Progress = Callable[[str, int, "int | None"], None]


def _reporter(verbose: bool | Progress, label: str) -> Progress | None:
    """The readers' ``verbose=``: False (quiet), True (plain lines on stderr: the start and
    end of each pass and at most one line a second between), or a ``Progress`` callable.

    The bytes read and the file size are not a row count, but they depend on the data too:
    they go to the user's own terminal (stderr) only, never into a model or a release."""
    if callable(verbose):
        return verbose
    if not isinstance(verbose, bool):
        raise TypeError(f"verbose must be a bool or a callable, got {type(verbose).__name__}")
    if not verbose:
        return None
    shown: dict[str, Any] = {"at": -1.0, "line": None}

    def report(phase: str, done: int, total: int | None) -> None:
        end = total is not None and done >= total
        now = time.monotonic()
        if done and not end and now - shown["at"] < 1.0:
            return
        of = f" of {total / 1e6:,.1f} MB ({100 * done // total}%)" if total else " MB"
        line = f"oracledp: {phase} {label}: {done / 1e6:,.1f}{of}"
        if line != shown["line"]:
            shown.update(at=now, line=line)
            print(line, file=sys.stderr, flush=True)

    return report


class _Reporting:
    """A text stream that reports the bytes of the file read so far after each ``read``."""

    def __init__(self, text: io.TextIOWrapper, file: IO[bytes], total: int | None,
                 phase: str, report: Progress) -> None:
        self._text, self._file, self._total = text, file, total
        self._phase, self._report = phase, report
        report(phase, 0, total)

    def read(self, size: int = -1) -> str:
        out = self._text.read(size)
        self._report(self._phase, self._file.tell(), self._total)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._text, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._text)


def _size(file: IO[bytes]) -> int | None:
    """The size of a regular file in bytes (None for a pipe or a device)."""
    if isinstance(file, io.BytesIO):
        return len(file.getbuffer())
    info = os.fstat(file.fileno())
    return info.st_size if stat.S_ISREG(info.st_mode) else None


@contextlib.contextmanager
def _text_stream(source: str | Path | bytes, label: str, report: Progress | None = None,
                 phase: str = "reading") -> Iterator[io.TextIOWrapper]:
    """The CSV as UTF-8 text, read lazily (never held whole): gunzipped if it starts with the
    gzip magic bytes, a leading byte-order mark dropped.  Decoding and gzip errors met while
    reading raise :class:`TableInputError`.  With ``report``, each read reports progress."""
    with contextlib.ExitStack() as stack:
        raw: IO[bytes]
        if isinstance(source, bytes):
            raw = io.BytesIO(source)
        else:
            from oracledp.tabular._sources import refuse_pipes

            refuse_pipes(source, label)
            try:
                raw = stack.enter_context(open(source, "rb"))
            except OSError as exc:
                raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
        file = raw
        try:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
        except OSError as exc:
            raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
        if gz:
            raw = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="")
        try:
            if report is None:
                yield text
            else:
                yield _Reporting(text, file, _size(file), phase, report)  # type: ignore[misc]
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


def _prescan(source: str | Path | bytes, label: str, report: Progress | None = None,
             sep: str = ",") -> None:
    """The file-level checks, in one streaming pass: readable (and gunzippable), UTF-8 from
    start to end, not blank, lines that all end alike (CRLF, LF or CR outside quoted fields:
    the engine refuses a file that mixes them, so pandas must too; the rare file that holds
    more than one kind anywhere is read a second time to look at its quotes).  Run before
    parsing, so these refusals do not depend on where in the file the problem is."""
    from oracledp.tabular._sources import MIXED_LINE_ENDS, LineEnds

    blank = True
    ends = LineEnds()
    with _text_stream(source, label, report, "checking") as fh:
        while block := fh.read(_BLOCK):
            ends.feed(block)
            if blank and block.strip():
                blank = False
    if blank:
        raise TableInputError(f"{label}: the file is empty (expected a header line and rows)")
    if ends.mixed(lambda: _text_stream(source, label), sep):
        raise TableInputError(f"{label}: {MIXED_LINE_ENDS}")


def _every_row_closed(source: str | Path | bytes, label: str, sep: str) -> bool:
    """Whether every row of the CSV (its header apart) ends with one delimiter (a closing
    field left empty, as some exports write): one more streaming pass, made only when pandas
    saw rows with more fields than the header."""
    with _text_stream(source, label) as fh:
        next(fh, None)  # the header
        return all(line.rstrip("\r\n").endswith(sep)
                   and not line.rstrip("\r\n").endswith(sep + sep)
                   for line in fh if line.strip())


def _extra_fields(df: pd.DataFrame, label: str, sep: str,
                  closed: Callable[[], bool]) -> pd.DataFrame:
    """``df`` as parsed by pandas, where rows held more fields than the header: pandas then
    makes the first fields an index and shifts the columns.  The default engine reads a file
    whose every row ends with one delimiter (an empty closing field) and refuses every other
    extra field; so do the pandas readers: the rows are unshifted and the empty field dropped
    where ``closed()`` (:func:`_every_row_closed`) holds and pandas saw one extra field, empty
    in every row, else the file is refused naming that cause (never a table read shifted,
    nor one the default engine refuses)."""
    if isinstance(df.index, pd.RangeIndex):
        return df
    k = df.index.nlevels
    if k != 1 or df.shape[1] < 1 or not (df.iloc[:, -1] == "").all() or not closed():
        raise TableInputError(f"{label}: cannot parse as CSV with delimiter {sep!r} (a row "
                              "with more fields than the header, or a quote that is not "
                              "closed)")
    lead = np.asarray(df.index, dtype=object)
    body = df.iloc[:, :-1].to_numpy(dtype=object)
    return pd.DataFrame(np.column_stack([lead, body]), columns=df.columns).astype(str)


def _parse_error(label: str, sep: str, exc: Exception) -> TableInputError:
    first = str(exc).splitlines()[0] if str(exc) else "parse error"
    return TableInputError(f"{label}: cannot parse as CSV with delimiter {sep!r} "
                           f"({first.split(':')[0]})")


def delimiter_hint(columns: list[str], sep: str) -> str:
    """For a header that parsed into one column: ``" (the header contains ';': try sep=';')"``
    when it holds another usual delimiter, else ``""`` (the CLI names its option: ``--sep``)."""
    if len(columns) != 1:
        return ""
    guess = next((d for d in (";", "\t", "|", ",") if d != sep and d in columns[0]), None)
    return f" (the header contains {guess!r}: try sep={guess!r})" if guess else ""


def _check_header(columns: list[str], schema: TableSchema | None, with_target: bool,
                  sep: str, label: str) -> None:
    """A header that parsed into one column where the schema expects more: wrong delimiter."""
    if schema is None:
        return
    expected = len(schema.columns) + (1 if with_target and schema.has_target else 0)
    if len(columns) == 1 and expected > 1:
        hint = delimiter_hint(columns, sep)
        raise TableInputError(
            f"{label}: the file parsed into a single column with delimiter {sep!r}, but the "
            f"schema expects {expected} columns; is the delimiter right?{hint}")


def _header(source: str | Path | bytes, sep: str, label: str) -> list[str]:
    """The column names exactly as written in the header line (spaces too: they are refused
    by the schema's checks), read apart from the rows: pandas renames a repeated name ('age',
    'age.1'), which would hide the repetition."""
    with _text_stream(source, label) as fh:
        try:
            head = pd.read_csv(fh, sep=sep, header=None, nrows=1, **_PARSE)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _parse_error(label, sep, exc) from None
    return [str(v) for v in head.iloc[0]] if len(head) else []


def _named(parsed: list[str], header: list[str]) -> list[str]:
    """The names of the parsed columns: as written in the header (an empty name keeps pandas'
    'Unnamed: i'); pandas' own names if the two do not line up."""
    parsed = [str(c) for c in parsed]
    if len(parsed) != len(header):
        return parsed
    return [h if h else p for p, h in zip(parsed, header, strict=True)]


def _check_unique(names: list[str], label: str) -> None:
    """Refuse a header that names a column twice (TableInputError naming it)."""
    problem = duplicate_names(names)
    if problem:
        raise TableInputError(f"{label}: {problem}")


def _no_rows(label: str) -> TableInputError:
    return TableInputError(f"{label}: the file has a header but no rows")


def read_csv(source: str | Path | bytes, schema: TableSchema | None = None, *,
             sep: str = ",", with_target: bool = False, ignore_extra: bool = True,
             check: bool = True, verbose: bool | Progress = False) -> pd.DataFrame:
    """Read a CSV as strings; with ``schema``, check it and raise ONE error listing every problem.

    File-level problems (unreadable, empty, non-UTF-8, wrong delimiter, a column name written
    twice in the header) raise
    :class:`TableInputError`; values outside the schema raise BoundsViolation (``check=False``
    leaves the values to the caller, e.g. the prediction policy); with
    ``ignore_extra=False`` columns the schema does not mention are refused.  The file is
    streamed into the table (its bytes and text are never held whole besides it); for a
    table too large for memory see :func:`read_aggregated`.

    ``verbose=True`` prints the progress of the two passes over the file (bytes read out of
    its size) to stderr; a callable ``report(phase, done, total)`` receives it instead.  Only
    you see it (it depends on the file, which is data): nothing of it is released.
    """
    check_sep(sep)
    from oracledp.tabular._sources import engine_reads, read_frame

    if engine_reads(source):  # Parquet, a directory or glob, zstd, an Arrow or Polars table
        df = read_frame(source, sep)
        _check_unique(list(df.columns), _source_label(source))
        if schema is not None and check:
            schema.check(df, with_target=with_target, ignore_extra=ignore_extra)
        return df
    label = _source_label(source)
    report = _reporter(verbose, label)
    _prescan(source, label, report, sep)
    with _text_stream(source, label, report) as fh:
        try:
            df = pd.read_csv(fh, sep=sep, **_PARSE)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _parse_error(label, sep, exc) from None
    df = _extra_fields(df, label, sep, lambda: _every_row_closed(source, label, sep))
    df.columns = _named(list(df.columns), _header(source, sep, label))
    _check_unique(list(df.columns), label)
    _check_header(list(df.columns), schema, with_target, sep, label)
    if len(df) == 0:
        raise _no_rows(label)
    if schema is not None and check:
        schema.check(df, with_target=with_target, ignore_extra=ignore_extra)
    return df
