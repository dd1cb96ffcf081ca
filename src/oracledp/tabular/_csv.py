"""Reading a CSV against a schema: :func:`read_csv` and the file-level checks.

The CSV is streamed as UTF-8 text (gunzipped if gzip, a byte-order mark dropped); unreadable,
empty, non-UTF-8 or wrongly delimited files raise :class:`TableInputError`.  The helpers
here are shared with :func:`~oracledp.tabular.read_aggregated`.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import itertools
import os
import re
import stat
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
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


#: The refusal of a CSV with a row that has fewer or more fields than its header line (after
#: the label), the same from every reader (pandas, chunked, DuckDB, Dask).  It names the rule,
#: never the row: no value, no line number, no count.
ROW_WIDTH = ("a row has fewer or more fields than the header line; every row must have one "
             "field per column (empty lines are skipped, but in a one-column table, where an "
             "empty line is a row with an empty cell; a line of spaces alone is a row of one "
             "field)")


def row_width_error(label: str) -> TableInputError:
    """The one refusal of a row whose field count is not the header's (:data:`ROW_WIDTH`)."""
    return TableInputError(f"{label}: {ROW_WIDTH}")


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


class SpacedLines:
    """Whether a CSV's text has a line of spaces and tabs alone after its first line (outside
    or inside quoted fields: :func:`fewer_fields` tells), :meth:`feed` block by block, a
    regular expression at C speed.  pandas skips such a line as an empty one; DuckDB reads
    it as a row of one field, so the pandas readers look at the rows again when there is
    one (:func:`check_widths`).  The delimiter itself, a space or a tab, is not a space."""

    def __init__(self, sep: str) -> None:
        self._spaces = "".join(c for c in " \t" if c != sep)
        self._line = re.compile(rf"[\r\n][{self._spaces}]+(?=[\r\n])")
        self._tail = ""  # the last line break and the spaces after it, if only spaces follow
        self.found = False

    def feed(self, block: str) -> None:
        if self.found:
            return
        text = self._tail + block
        # the expression runs only where a line break is followed by a space: substring
        # searches, many times faster (a file's lines all end alike, or it is refused)
        brk = "\n" if "\n" in text else "\r"
        if any(c in text and brk + c in text for c in self._spaces) and self._line.search(text):
            self.found = True
            return
        i = max(text.rfind("\n"), text.rfind("\r"))
        self._tail = text[i:] if i >= 0 and not text[i + 1:].strip(self._spaces) else ""

    def done(self) -> bool:
        """After the last block: whether a line of spaces alone was seen (the last line
        too, without a line break after it)."""
        return self.found or len(self._tail) > 1


def _prescan(source: str | Path | bytes, label: str, report: Progress | None = None,
             sep: str = ",") -> tuple[bool, dict[str, Any]]:
    """The file-level checks, in one streaming pass: readable (and gunzippable), UTF-8 from
    start to end, not blank, lines that all end alike (CRLF, LF or CR outside quoted fields:
    the engine refuses a file that mixes them, so pandas must too; the rare file that holds
    more than one kind anywhere is read a second time to look at its quotes).  Run before
    parsing, so these refusals do not depend on where in the file the problem is.  Returns
    whether the text has a line of spaces alone (:class:`SpacedLines`) and pandas' parse
    options for its line ends (``lineterminator="\\r"`` where a CR alone ends every line,
    :attr:`~oracledp.tabular._sources.LineEnds.cr_only`)."""
    from oracledp.tabular._sources import MIXED_LINE_ENDS, LineEnds

    blank = True
    ends = LineEnds()
    spaced = SpacedLines(sep)
    with _text_stream(source, label, report, "checking") as fh:
        while block := fh.read(_BLOCK):
            ends.feed(block)
            spaced.feed(block)
            if blank and block.strip():
                blank = False
    if blank:
        raise TableInputError(f"{label}: the file is empty (expected a header line and rows)")
    if ends.mixed(lambda: _text_stream(source, label), sep):
        raise TableInputError(f"{label}: {MIXED_LINE_ENDS}")
    return spaced.done(), ({"lineterminator": "\r"} if ends.cr_only else {})


def cr_line_ends_in(fh: IO[str], sep: str) -> bool:
    """Whether a CR alone ends the lines of the text stream ``fh`` (opened with
    ``newline=""``) of a file the file-level checks passed (its lines all end alike): the
    first line end outside quoted fields, as :func:`_prescan` tells it from the whole file
    (for a reader that does not run it: Dask's)."""
    from oracledp.tabular._sources import LineEnds

    while True:
        head = fh.read(_BLOCK)
        if head.endswith("\r"):  # its LF may open the next block
            head += fh.read(1)
        kinds = LineEnds.walk(iter([head]), sep)
        if kinds or not head:
            return kinds == {"\r"}


def leading_blank_lines(fh: IO[str]) -> int:
    """The lines before the header that are empty or hold spaces alone, as every reader
    skips them (review 18)."""
    lead = 0
    for line in fh:
        if line.strip():
            break
        lead += 1
    return lead


#: The csv module's largest field while it counts the fields (pandas has no such limit).
_FIELD_LIMIT = 2**31 - 1


def _blank_row(row: list[str]) -> bool:
    return not row or (len(row) == 1 and not row[0].strip())


def fewer_fields(fh: IO[str], sep: str, width: int) -> bool:
    """Whether a row of the CSV text ``fh`` (read with ``newline=""``) after its header line
    has fewer than ``width`` fields, as pandas' parser splits the rows.  Empty lines, and
    lines of spaces alone before the header, are skipped as every reader skips them; after
    it, a line of spaces alone is a row of one field.  Only the fields are counted, never a
    Python step per row: up to the first quote, the lines of each block by ``str.count`` of
    the delimiter (a line holds its fields' delimiters, nothing else); from it on, the rows
    as the csv module parses them (a quoted field may hold the delimiter or a line break)."""
    seps: Counter[int] = Counter()  # delimiters per line, lines before the header apart
    empty = 0  # empty lines among them
    carry = ""  # the start of a line that goes on in the next block
    header = False
    while block := fh.read(_BLOCK):
        text, carry = carry + block, ""
        if '"' in text:  # from here on, the csv module, given whole lines
            text += fh.readline()
            rest = itertools.chain(io.StringIO(text, newline=""), fh)
            return _few(seps, empty, width) or _fewer_rows(rest, sep, width, header)
        brk = "\n" if "\n" in text else "\r"  # one kind of line end (CRLF: "\r" ends a line)
        head, found, carry = text.rpartition(brk)
        if not found:
            carry = head + carry
            continue
        lines = head.split(brk)
        if not header:
            lines = list(itertools.dropwhile(lambda line: not line.strip(), lines))
            header = bool(lines)
            lines = lines[1:]
        seps.update(map(str.count, lines, itertools.repeat(sep)))
        empty += lines.count("") + lines.count("\r")
    if carry and header:  # the last line, without a line break after it
        seps[carry.count(sep)] += 1
        empty += carry == "\r"
    return _few(seps, empty, width)


def _few(seps: Counter[int], empty: int, width: int) -> bool:
    """Whether lines with ``seps`` delimiters, ``empty`` of them empty, hold a row of fewer
    than ``width`` fields."""
    return width > 1 and (seps[0] > empty or any(0 < n < width - 1 for n in seps))


@contextlib.contextmanager
def _csv_rows(lines: Iterable[str], sep: str) -> Iterator[Iterator[list[str]]]:
    """The records the csv module parses from ``lines`` (a quoted field may hold a line
    break), its field size limit raised to :data:`_FIELD_LIMIT` meanwhile."""
    limit = csv.field_size_limit()
    csv.field_size_limit(_FIELD_LIMIT)
    try:
        yield csv.reader(lines, delimiter=sep, quotechar='"', doublequote=True, strict=False)
    finally:
        csv.field_size_limit(limit)


def _fewer_rows(lines: Iterable[str], sep: str, width: int, header: bool) -> bool:
    """:func:`fewer_fields` of the rows the csv module parses from ``lines`` (``header``:
    the header line was read before them)."""
    with _csv_rows(lines, sep) as parsed:
        rows: Iterator[list[str]] = parsed
        if not header:
            rows = itertools.dropwhile(_blank_row, rows)
            next(rows, None)  # the header line
        lengths = Counter(map(len, rows))
    return any(0 < n < width for n in lengths)


def check_widths(df: pd.DataFrame, spaced: bool, fewer: Callable[[int], bool],
                 label: str) -> None:
    """Refuse (:func:`row_width_error`) a table that pandas parsed from a CSV with a row that
    has fewer fields than the header line: pandas fills the missing fields with empty cells,
    as if they were written empty.  Such a row has an empty last cell, so the text is looked
    at again (``fewer(width)``: :func:`fewer_fields`) only when the last column holds an
    empty cell or the text has a line of spaces alone (``spaced``, which pandas skips):
    never for most files.  (A row with more fields is pandas' parse error, or
    :func:`_extra_fields`'.)"""
    width = df.shape[1]
    if width < 2:
        return
    last = df.iloc[:, -1]
    if (spaced or bool((last == "").any()) or bool(last.isna().any())) and fewer(width):
        raise row_width_error(label)


def _fewer_fields_in(source: str | Path | bytes, label: str, sep: str, width: int) -> bool:
    """:func:`fewer_fields` of the CSV ``source``, read once more."""
    with _text_stream(source, label) as fh:
        return fewer_fields(fh, sep, width)


def _every_row_closed(source: str | Path | bytes, label: str, sep: str) -> bool:
    """Whether every row of the CSV (its header apart) ends with one delimiter (a closing
    field left empty, as some exports write): one more streaming pass, made only when pandas
    saw rows with more fields than the header."""
    last = [""]  # the physical line that ends the record the csv module just parsed

    def lines(fh: IO[str]) -> Iterator[str]:
        for line in fh:
            last[0] = line
            yield line

    # records, not lines: a quoted field may hold a line break (review 17); a quote inside
    # an unquoted field is text, as every reader takes it (review 18)
    with _text_stream(source, label) as fh, _csv_rows(lines(fh), sep) as parsed:
        rows = itertools.dropwhile(_blank_row, parsed)
        next(rows, None)  # the header
        for row in rows:
            if _blank_row(row):
                continue
            text = last[0].rstrip("\r\n")
            if not text.endswith(sep) or text.endswith(sep + sep):
                return False
    return True


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
        raise row_width_error(label)
    lead = np.asarray(df.index, dtype=object)
    body = df.iloc[:, :-1].to_numpy(dtype=object)
    return pd.DataFrame(np.column_stack([lead, body]), columns=df.columns).astype(str)


#: pandas' parse error of a row with more fields than the header ("Error tokenizing data. C
#: error: Expected 3 fields in line 9, saw 4"): the row-width refusal, in the readers' words.
_MORE_FIELDS = re.compile(r"Expected \d+ fields in line \d+, saw \d+")


def _parse_error(label: str, sep: str, exc: Exception) -> TableInputError:
    if _MORE_FIELDS.search(str(exc)):
        return row_width_error(label)
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


def _blank_rows(source: str | Path | bytes, sep: str, label: str) -> dict[str, Any]:
    """For a one-column CSV, the parse options that read an empty line after the header as a
    row with an empty cell, as the default engine reads it (there, an empty line is a record
    whose one field is empty: a one-column table's missing cell); ``{}`` otherwise (an empty
    line is skipped, by every reader).  Empty lines before the header are skipped."""
    if len(_header(source, sep, label)) != 1:
        return {}
    with _text_stream(source, label) as fh:
        return one_column_rows(leading_blank_lines(fh))


def one_column_rows(lead: int) -> dict[str, Any]:
    """:func:`_blank_rows`' options for a one-column CSV with ``lead`` blank lines before
    its header."""
    return {"skip_blank_lines": False, "skiprows": lead}


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
    spaced, lines = _prescan(source, label, report, sep)
    with _text_stream(source, label, report) as fh:
        try:
            df = pd.read_csv(fh, sep=sep, **_PARSE, **lines, **_blank_rows(source, sep, label))
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _parse_error(label, sep, exc) from None
    df = _extra_fields(df, label, sep, lambda: _every_row_closed(source, label, sep))
    check_widths(df, spaced, lambda w: _fewer_fields_in(source, label, sep, w), label)
    df.columns = _named(list(df.columns), _header(source, sep, label))
    _check_unique(list(df.columns), label)
    _check_header(list(df.columns), schema, with_target, sep, label)
    if len(df) == 0:
        raise _no_rows(label)
    if schema is not None and check:
        schema.check(df, with_target=with_target, ignore_extra=ignore_extra)
    return df
