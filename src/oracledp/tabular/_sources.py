"""The data engine's sources: any table opened in DuckDB, and read whole or in chunks.

:func:`connect` opens a connection with the engine's settings (both cores, :data:`MEMORY_LIMIT`,
spilling to disk); :func:`_open` gives the :class:`_Source` of a CSV file (plain, gzip or zstd,
told by its first bytes), a Parquet file, a directory or glob of Parquet files, or a Polars
DataFrame / Arrow table, with its header as written; :func:`read_frame` and
:func:`read_frames` read such a table as texts (whole, or in chunks in the source's order) for
the commands that need every record.  A source that cannot be read raises one
:class:`~oracledp._errors.TableInputError` (:func:`_fail`) that never passes on DuckDB's own
message (it may quote a line of the file).  The pass that checks and counts the rows is
:mod:`oracledp.tabular._engine`.
"""

from __future__ import annotations

import contextlib
import glob as globlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pandas as pd

from oracledp._errors import TableInputError
from oracledp.tabular._csv import row_width_error

#: DuckDB's memory limit for one pass: what it needs beyond goes to temporary files.
MEMORY_LIMIT = "1GB"

_GZIP, _ZSTD, _PARQUET = b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"PAR1"
_ZSTD_SKIPPABLE = range(0x184D2A50, 0x184D2A60)  # magic numbers of skippable frames
_ZSTD_BLOCK_MAX = 128 * 1024  # the largest raw or compressed block (RFC 8878, 3.1.1.2)
_HEAD_LINES = 1000  # lines read to find the header (blank lines before it are skipped)
_FLOAT_TYPES = ("FLOAT", "DOUBLE")


# --- sources ---------------------------------------------------------------------------------


@dataclass
class _Source:
    """Where the rows come from: ``relation`` (a SQL table expression over columns named
    ``c0 .. c{m-1}``), the header as written, each column's DuckDB type, the size in bytes
    (for progress; None if unknown) and the label used in messages."""

    relation: str
    header: list[str]
    types: list[str]
    size: int | None
    label: str
    kind: str


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@contextlib.contextmanager
def bytes_as_file(data: bytes) -> Iterator[str]:
    """A CSV's bytes as a private temporary file (deleted after); a refusal names it "the
    input", never the temporary path."""
    with tempfile.TemporaryDirectory(prefix="oracledp-") as tmp:
        path = os.path.join(tmp, "input")
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            yield path
        except TableInputError as exc:
            raise TableInputError(str(exc).replace(path, "the input")) from None


def connect(threads: int | None = None) -> Any:
    """A DuckDB connection for one pass: both cores (or ``threads``), :data:`MEMORY_LIMIT`,
    spilling to the system's temporary directory, insertion order not kept."""
    import duckdb

    spill = os.path.join(tempfile.gettempdir(), f"oracledp-duckdb-{os.getpid()}")
    con = duckdb.connect(config={
        "threads": threads or os.cpu_count() or 1, "memory_limit": MEMORY_LIMIT,
        "temp_directory": spill, "preserve_insertion_order": False})
    con.execute("SET enable_progress_bar_print = false")  # progress is ours (verbose), never its bar
    return con


def refuse_pipes(path: str | Path, label: str) -> None:
    """Refuse a pipe or a device (``/dev/stdin``, a shell's ``<(...)``) given as the table,
    before it is opened (opening a FIFO blocks): every reader reads a table more than once
    (the checks, then the rows).  A path that does not exist is left to the reader."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise TableInputError(f"{label}: not a regular file (a pipe or a device, such as "
                              "/dev/stdin): a table is read more than once, so write it to a "
                              "file and give that file's path")


def _files(path: str, label: str) -> list[str]:
    """The files a path, a directory or a glob names (sorted), refused if none."""
    if any(ch in path for ch in "*?["):
        found = sorted(p for p in globlib.glob(path, recursive=True) if os.path.isfile(p))
        if not found:
            raise TableInputError(f"{label}: no file matches this pattern")
        return found
    if os.path.isdir(path):
        found = sorted(str(p) for p in Path(path).rglob("*.parquet") if p.is_file())
        if not found:
            raise TableInputError(f"{label}: the directory holds no .parquet file")
        return found
    refuse_pipes(path, label)
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
    return [path]


def _same_columns(con: Any, files: list[str], label: str) -> None:
    """Refuse Parquet files whose column names differ (in name or order) from the first
    file's: DuckDB reads every file by the first one's columns, by position, so a later
    file's extra column was dropped unseen and a renamed one (``Cost`` for ``cost``) read as
    the first file's.  Reads the files' footers only (names, never a value)."""
    if len(files) < 2:
        return
    import duckdb

    def names(f: str) -> list[str]:
        try:
            return [str(r[0]) for r in
                    con.execute(f"DESCRIBE SELECT * FROM read_parquet({_quote(f)})").fetchall()]
        except duckdb.Error:
            raise TableInputError(f"{label}: {f} is not a readable Parquet file") from None

    first = names(files[0])
    for f in files[1:]:
        these = names(f)
        if these == first:
            continue
        extra = [n for n in these if n not in first]
        lacks = [n for n in first if n not in these]
        what = "; ".join(
            [*([f"has the column(s) {', '.join(map(repr, extra))} that the first does not"]
               if extra else []),
             *([f"lacks {', '.join(map(repr, lacks))}"] if lacks else [])]
        ) or "has the same columns in another order"
        raise TableInputError(
            f"{label}: the Parquet files do not all have the first file's columns ({files[0]}):"
            f" {f} {what}. Every file is read by the first one's columns, so write the parts "
            "with the same columns, in the same order")


def _magic(path: str, label: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(4)
    except OSError as exc:
        raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None


def _format_of(files: list[str], label: str) -> str:
    """"parquet" or "csv:<compression>" from the first bytes of the files (all alike)."""
    kinds = set()
    for f in files:
        head = _magic(f, label)
        if head == _PARQUET:
            kinds.add("parquet")
        elif head[:2] == _GZIP:
            kinds.add("csv:gzip")
        elif head == _ZSTD:
            kinds.add("csv:zstd")
        elif not head and f.endswith((".parquet", ".pq")):
            kinds.add("parquet")
        else:
            kinds.add("csv:none")
    if len(kinds) > 1:
        raise TableInputError(f"{label}: the files are not all of one format (CSV, gzip, zstd "
                              "or Parquet)")
    return kinds.pop()


def _zstd_damage(path: str) -> str | None:
    """Why the zstd file at ``path`` is not whole zstd frames (RFC 8878): ``"truncated"`` (it
    ends inside a frame) or ``"damaged"`` (a frame or block header that is not zstd's); None
    if every frame is whole.  Only the headers are read, a seek past each block (a few bytes
    per 128 KiB).  DuckDB reads a zstd file cut short as if it ended there (the rows before
    the cut, or none), so this runs before it; damage inside a block is the decoder's to find
    (an IO error, :func:`_fail`)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        pos = 0

        def at(n: int) -> bytes:
            fh.seek(pos)
            return fh.read(n)

        while pos < size:
            head = at(18)  # magic, descriptor, window, dictionary id, content size: <= 18
            if len(head) < 5:
                return "truncated"
            magic = int.from_bytes(head[:4], "little")
            if magic in _ZSTD_SKIPPABLE:  # its size, then that many bytes of user data
                if len(head) < 8:
                    return "truncated"
                pos += 8 + int.from_bytes(head[4:8], "little")
                continue
            if head[:4] != _ZSTD:
                return "damaged"
            desc = head[4]
            if desc & 0x08:  # the reserved bit
                return "damaged"
            single = bool(desc & 0x20)
            pos += (5 + (not single) + (0, 1, 2, 4)[desc & 0x03]
                    + (int(single), 2, 4, 8)[desc >> 6])
            last = False
            while not last:
                block = at(3)
                if len(block) < 3:
                    return "truncated"
                header = int.from_bytes(block, "little")
                last, kind, n = bool(header & 1), (header >> 1) & 3, header >> 3
                if kind == 3 or (kind != 1 and n > _ZSTD_BLOCK_MAX):
                    return "damaged"
                pos += 3 + (1 if kind == 1 else n)  # an RLE block holds one byte
            pos += 4 if desc & 0x04 else 0  # the content checksum
        return "truncated" if pos > size else None


def _check_zstd(files: list[str]) -> None:
    """Refuse, naming it, a zstd file that is truncated or has a damaged header
    (:func:`_zstd_damage`): "not a readable zstd file", as a damaged block is (:func:`_fail`),
    with "(truncated)" when it is cut short."""
    for f in files:
        try:
            damage = _zstd_damage(f)
        except OSError as exc:
            raise TableInputError(f"{f}: cannot read the file ({exc.strerror})") from None
        if damage is not None:
            cut = " (truncated)" if damage == "truncated" else ""
            raise TableInputError(f"{f}: not a readable zstd file{cut}")


#: DuckDB's words for bytes that are not UTF-8 ("Invalid unicode (byte sequence mismatch)
#: detected. This file is not utf-8 encoded.", "Invalid UTF8 found in string", ...).  Not a
#: bare "utf-8", which a row quoted in the message may hold.
_NOT_UTF8 = re.compile(r"invalid unicode|invalid utf|not (?:valid )?utf-?8|"
                       r"utf-?8 (?:sequence|string is|data)|invalid (?:lead byte|code point)")


def _fail(label: str, kind: str, sep: str, exc: Exception,
          widths: bool = False) -> TableInputError:
    """A DuckDB error as one line that quotes nothing of the file.  ``widths``: the error is
    known to come from rows of different widths (:func:`_open`)."""
    text = str(exc).lower()
    if kind == "parquet":
        return TableInputError(f"{label}: not a readable Parquet file (or the files' columns "
                               "differ)")
    # No dialect fits the rows (delimiter and quote are set: an unclosed quote): the sniffer's
    # message lists its search space ("Encoding: utf-8") and hints at the encoding and the
    # compression, which are not the fault.
    sniffed = "error when sniffing file" in text
    if not sniffed and _NOT_UTF8.search(text):
        return TableInputError(f"{label}: the file is not UTF-8 text; re-save it as UTF-8 "
                               "(e.g. from a spreadsheet: CSV UTF-8)")
    # The machine, not the file: a full disk (DuckDB spills to a temporary directory) or no
    # memory left.  Said as such, whatever the file's format.
    if "no space left" in text or "could not write" in text or "out of memory" in text:
        return TableInputError(f"{label}: the reading stopped because this machine ran out of "
                               "disk space or memory (not a fault of the file); free some and "
                               "run again")
    # An IO error while DuckDB decompresses ("Data corruption detected", "Restored data
    # doesn't match checksum", "Unexpected end of GZIP stream"): the archive is damaged.
    if kind != "csv:none" and not sniffed and (text.startswith("io error") or "gzip" in text
                                               or "zstd" in text or "compress" in text):
        return TableInputError(f"{label}: not a readable {kind[4:]} file")
    if _mixed(label, kind, sep):
        return TableInputError(f"{label}: {MIXED_LINE_ENDS}")
    # a row of another width than the header ("Expected Number of Columns: 3 Found: 2"),
    # refused as the pandas readers refuse it
    if widths or "expected number of columns" in text:
        return row_width_error(label)
    # DuckDB's limit on one line; it says the same of a quote never closed (the rest of the
    # file is then one line), so only a physical line that long is said to be one
    if "maximum line size" in text and _long_line(label, kind):
        return TableInputError(f"{label}: a line is longer than the reader's limit of "
                               f"{LINE_LIMIT:,} bytes; no table cell should be that long")
    return TableInputError(f"{label}: cannot parse as CSV with delimiter {sep!r} (a row with "
                           "more fields than the header, or a quote that is not closed)")


def _reread(label: str, kind: str, test: Any) -> bool:
    """Whether ``test(f, blocks)`` holds for one of the plain or gzip CSV files ``label``
    names (``blocks``: the file's text, block by block): the files read once more, only after
    DuckDB refused them.  False for what cannot be read here (a zstd file, a file gone)."""
    from oracledp.tabular._csv import _BLOCK, _text_stream

    if kind not in ("csv:none", "csv:gzip"):
        return False
    try:
        for f in _files(label, label):
            with _text_stream(f, label) as fh:
                if test(f, iter(lambda fh=fh: fh.read(_BLOCK), "")):
                    return True
    except (TableInputError, OSError, UnicodeDecodeError):
        return False
    return False


def _mixed(label: str, kind: str, sep: str) -> bool:
    """Whether the plain or gzip CSV file(s) ``label`` names have lines that end in more
    than one way (:class:`LineEnds`; :func:`_reread`)."""
    from oracledp.tabular._csv import _text_stream

    def test(f: str, blocks: Any) -> bool:
        ends = LineEnds()
        for block in blocks:
            ends.feed(block)
        return ends.mixed(lambda: _text_stream(f, label), sep)

    return _reread(label, kind, test)


#: DuckDB's largest line (its default ``max_line_size``), in bytes.
LINE_LIMIT = 2_000_000


def _long_line(label: str, kind: str) -> bool:
    """Whether a plain or gzip CSV file ``label`` names has a physical line (between line
    breaks, quotes ignored) of more than :data:`LINE_LIMIT` characters (:func:`_reread`)."""

    def test(f: str, blocks: Any) -> bool:
        run = 0
        for block in blocks:
            parts = re.split(r"[\r\n]", block)
            if len(parts) > 1:
                if run + len(parts[0]) > LINE_LIMIT or any(
                        len(x) > LINE_LIMIT for x in parts[1:-1]):
                    return True
                run = 0
            run += len(parts[-1])
            if run > LINE_LIMIT:
                return True
        return False

    return _reread(label, kind, test)


#: The refusal of a CSV whose lines do not all end alike (after the label).
MIXED_LINE_ENDS = ("the lines do not all end alike (some with CRLF, some with LF or CR "
                   "alone); re-save the file with one kind of line ending")


def _kinds(block: str) -> set[str]:
    crlf, cr, lf = block.count("\r\n"), block.count("\r"), block.count("\n")
    return {k for k, n in (("\r\n", crlf), ("\r", cr - crlf), ("\n", lf - crlf)) if n}


class LineEnds:
    """Whether a CSV's lines end in more than one way (CRLF, LF, CR alone) outside quoted
    fields, for the readers to refuse it alike: DuckDB's reader refuses such a file (it
    reads it only with ``strict_mode = false``, which also drops the rows after a quote that
    is not closed).  :meth:`feed` the text (read with ``newline=""``) block by block: the
    kinds are counted at C speed, which settles the usual file; if the file holds more than
    one kind anywhere (a CRLF file with LF inside quoted fields, say), :attr:`suspect` is
    set and :meth:`walk` decides over the text read again from its start, token by token,
    a quote opening a field only at its start, as DuckDB and pandas read it."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._carry = ""  # a block's last CR, whose LF may open the next block
        #: After :meth:`mixed`: the kinds of line end outside quoted fields.
        self.outside: set[str] = set()

    def feed(self, block: str) -> None:
        block, self._carry = self._carry + block, ""
        if block.endswith("\r"):
            block, self._carry = block[:-1], "\r"
        self._seen |= _kinds(block)

    @property
    def suspect(self) -> bool:
        return len(self._seen | _kinds(self._carry)) > 1

    def mixed(self, reopen: Callable[[], AbstractContextManager[IO[str]]], sep: str) -> bool:
        """After every block was fed: whether the lines end in more than one way, the text
        read again from ``reopen()`` and walked (:meth:`walk`) only if :attr:`suspect`."""
        from oracledp.tabular._csv import _BLOCK

        if not self.suspect:
            self.outside = self._seen | _kinds(self._carry)
            return False
        with reopen() as fh:
            self.outside = self.walk(iter(lambda: fh.read(_BLOCK), ""), sep)
        return len(self.outside) > 1

    @property
    def cr_only(self) -> bool:
        """After :meth:`mixed`: whether the lines end in a CR alone (old Mac files).  pandas
        reads such a file's empty line followed by a row that starts with an empty cell as
        one row shifted by a field, unless told that CR ends a line."""
        return self.outside == {"\r"}

    @staticmethod
    def walk(blocks: Iterator[str], sep: str) -> set[str]:
        """The kinds of line end outside quoted fields (the walk stops at a second kind: the
        lines end in more than one way).  Only quotes and
        line breaks are visited (a regex at C speed skips everything else): a quote opens a
        quoted stretch where a field starts (at the start of the text, after ``sep`` or a line
        break) or right where a quoted stretch closed (a doubled quote); elsewhere it is
        text, as DuckDB and pandas read it."""
        tokens = re.compile('"|\r\n|\r|\n')
        k = len(sep)
        kinds: set[str] = set()
        quoted, carry, tail = False, "", ""  # tail: the last k characters before this block
        closed = -1  # where the last quoted stretch closed (in this block)
        for raw in (*blocks, None):
            if raw is None:
                block, carry = carry, ""
            else:
                block, carry = carry + raw, ""
                if block.endswith("\r"):
                    block, carry = block[:-1], "\r"
            for m in tokens.finditer(block):
                tok, i = m.group(), m.start()
                if quoted:
                    if tok == '"':
                        quoted, closed = False, m.end()
                elif tok == '"':
                    head = block[i - k:i] if i >= k else (tail + block[:i])[-k:]
                    quoted = i == closed or head in ("", sep) or head[-1] in "\r\n"
                else:
                    kinds.add(tok)
            closed = 0 if closed == len(block) else -1  # a quote closed at the block's end
            tail = (tail + block)[-k:]
            if len(kinds) > 1:
                break
        return kinds


def _csv_options(files: list[str], sep: str, compression: str, header: bool,
                 names: Sequence[str] | None = None, skip: int = 0, pad: bool = False) -> str:
    """DuckDB's ``read_csv`` of the files with every dialect option fixed, as the pandas
    reader reads them: the sniffer only checks the rows (and their width), it chooses
    nothing.  ``comment = ''``: no comment character; left to the sniffer, a line starting
    with ``#`` (a record whose first cell is ``#1``, or a note such as ``# exported``) made it
    choose ``#`` and drop every such line without a word.  Without ``pad`` (``null_padding``)
    a row with fewer fields than the header is refused ("Expected Number of Columns"), as
    the pandas readers refuse it, and the parallel reader reads quoted line breaks; with it
    (only to tell why the sniffer failed, :func:`_open`) its missing fields are NULL."""
    opts = [f"[{', '.join(_quote(f) for f in files)}]", f"header = {str(header).lower()}",
            "all_varchar = true", f"delim = {_quote(sep)}", "quote = '\"'", "escape = '\"'",
            "comment = ''", f"compression = {_quote(compression)}",
            f"null_padding = {str(pad).lower()}", "auto_detect = true"]
    if names is not None:
        opts.append(f"names = [{', '.join(_quote(n) for n in names)}]")
    if skip:
        opts.append(f"skip = {int(skip)}")
    return f"read_csv({', '.join(opts)})"


def _csv_header(con: Any, path: str, sep: str, compression: str, label: str,
                kind: str) -> tuple[list[str], int, bool]:
    """The column names exactly as the first non-blank line writes them (in file order: a
    parallel read may return any row first), parsed as pandas parses a header line, the
    number of blank lines before it (skipped, as pandas skips them), and whether its first
    name is quoted."""
    import io

    import duckdb

    from oracledp.tabular._csv import _PARSE, _parse_error

    sql = (f"SELECT line FROM read_csv({_quote(path)}, header = false, "
           "columns = {'line': 'VARCHAR'}, delim = chr(1), quote = '', escape = '', "
           f"auto_detect = false, strict_mode = false, compression = {_quote(compression)}) "
           f"LIMIT {_HEAD_LINES}")
    try:  # in file order; then the caller's setting again (read_frame keeps the order)
        kept = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0]
        con.execute("SET preserve_insertion_order = true")
        lines = [r[0] for r in con.execute(sql).fetchall()]
        con.execute(f"SET preserve_insertion_order = {str(bool(kept)).lower()}")
    except duckdb.Error as exc:
        raise _fail(label, kind, sep, exc) from None
    blank = [v is None or not str(v).strip() for v in lines]
    if False not in blank:
        raise TableInputError(f"{label}: the file is empty (expected a header line and rows)"
                              if len(lines) < _HEAD_LINES else f"{label}: more than "
                              f"{_HEAD_LINES:,} blank lines before the header")
    line = str(lines[blank.index(False)]).removeprefix("\ufeff")
    try:
        head = pd.read_csv(io.StringIO(line), sep=sep, header=None, nrows=1, **_PARSE)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise _parse_error(label, sep, exc) from None
    return (([str(v) for v in head.iloc[0]] if len(head) else []), blank.index(False),
            line.startswith('"'))


def _open(con: Any, data: Any, sep: str) -> _Source:
    """The source of ``data``: a path (CSV or Parquet, see the module docstring) or a Polars
    DataFrame / Arrow table."""
    import duckdb

    if isinstance(data, (str, Path)):
        label = str(data)
        files = _files(str(data), label)
        kind = _format_of(files, label)
        size = sum(os.path.getsize(f) for f in files)
        if kind == "parquet":
            _same_columns(con, files, label)
            # the files' columns agree (above); where a column's types differ between files
            # (an integer in one, text in another) DuckDB unifies them by name, to text if
            # need be, so that the schema's rules name the column and the rule
            raw = (f"read_parquet([{', '.join(_quote(f) for f in files)}]"
                   + (", union_by_name = true)" if len(files) > 1 else ")"))
            try:
                desc = con.execute(f"DESCRIBE SELECT * FROM {raw}").fetchall()
            except duckdb.Error as exc:
                raise _fail(label, kind, sep, exc) from None
            names = [str(r[0]) for r in desc]
            types = [str(r[1]) for r in desc]
            cols = ", ".join(f"{_ident(h)} AS c{j}" for j, h in enumerate(names))
            return _Source(f"(SELECT {cols} FROM {raw})", _written(names, files[0]), types,
                           size, label, kind)
        compression = kind[4:]
        if size == 0:
            raise TableInputError(f"{label}: the file is empty (expected a header line and "
                                  "rows)")
        if compression == "zstd":
            _check_zstd(files)
        header, skip, quoted = _csv_header(con, files[0], sep, compression, label, kind)
        names = [f"c{j}" for j in range(len(header))]
        # DuckDB's sniffer misreads a header line whose first name is quoted behind a UTF-8
        # byte-order mark (as spreadsheets export): the names are read above, so a header
        # line that starts with a quote is skipped as a line rather than parsed
        has_header = not quoted
        skip += quoted
        rel = _csv_options(files, sep, compression, has_header, names, skip)
        try:
            width = len(con.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall())
        except duckdb.Error as exc:
            # the sniffer refused the rows it samples; if it reads them with short rows
            # padded, some row there has fewer (or more) fields than the header
            padded = _csv_options(files, sep, compression, has_header, names, skip, pad=True)
            raise _fail(label, kind, sep, exc, widths=_describes(con, padded)) from None
        if width != len(header):  # the sniffer saw rows with more fields than the header
            raise row_width_error(label)
        return _Source(rel, header, ["VARCHAR"] * len(header), size, label, kind)
    # an Arrow table or a Polars DataFrame (anything DuckDB scans through Arrow)
    module = type(data).__module__.split(".")[0]
    if module not in ("pyarrow", "polars"):
        raise TypeError("data must be a pandas, Polars or Arrow table, or the path of a CSV "
                        f"or Parquet file, got {type(data).__name__}")
    label = "the input"
    try:
        rel = con.from_arrow(data.to_arrow() if module == "polars" else data)
    except Exception as exc:
        raise TableInputError(f"{label}: cannot read the table ({type(exc).__name__})") from None
    name = f"oracledp_input_{id(rel)}"
    rel.create_view(name)
    names = [str(c) for c in rel.columns]
    types = [str(t) for t in rel.types]
    cols = ", ".join(f"{_ident(h)} AS c{j}" for j, h in enumerate(names))
    return _Source(f"(SELECT {cols} FROM {name})", _written(names, data), types, None, label,
                   "arrow")


def _written(names: list[str], data: Any) -> list[str]:
    """The column names as the Arrow, Polars or Parquet (a path) ``data`` writes them, where
    DuckDB's ``names`` made them unique (a name written twice read as ``sex`` and ``sex_1``:
    sweep 14 found one of the two silently fitted); the header's rules then refuse them as
    a CSV's.  ``names`` where they cannot be read."""
    try:
        if isinstance(data, str):
            import pyarrow.parquet as pq

            written = [str(c) for c in pq.read_schema(data).names]
        elif hasattr(data, "schema") and hasattr(data.schema, "names"):
            written = [str(c) for c in data.schema.names]
        else:
            written = [str(c) for c in data.columns]
    except Exception:  # DuckDB read it: its names stand
        return names
    repeated = len(set(written)) < len(written)  # else DuckDB's names are the written ones
    return written if repeated and len(written) == len(names) else names


def _describes(con: Any, relation: str) -> bool:
    """Whether DuckDB's sniffer reads ``relation`` (its columns described, nothing read)."""
    import duckdb

    try:
        con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    except duckdb.Error:
        return False
    return True


def engine_reads(data: Any) -> bool:
    """Whether :func:`read_frame` (the engine) reads ``data`` rather than the pandas CSV
    reader: a Parquet file, a directory or glob, a zstd CSV, an Arrow or Polars table."""
    if isinstance(data, (str, Path)):
        text = str(data)
        if any(ch in text for ch in "*?[") or os.path.isdir(text):
            return True
        with contextlib.suppress(OSError):
            if not stat.S_ISREG(os.stat(text).st_mode):
                return False  # a pipe or a device: the CSV reader refuses it, unopened
        try:
            with open(text, "rb") as fh:
                head = fh.read(4)
        except OSError:
            return False  # the CSV reader refuses it
        return head in (_PARQUET, _ZSTD)
    return type(data).__module__.split(".")[0] in ("pyarrow", "polars")


def read_frame(data: Any, sep: str = ",") -> pd.DataFrame:
    """The whole table as a pandas DataFrame of texts, the cells as the schema's rules read
    them (see :func:`_text_of`: a NULL or a float NaN is the empty cell), columns named as
    written: for the commands that need every record (the models fitted on the whole
    encoded matrix, prediction, evaluation), in the source's row order.  Raises
    :class:`TableInputError` as :func:`scan_table` does."""
    import duckdb

    con = connect()
    con.execute("SET preserve_insertion_order = true")  # the file's rows, in its order
    src: _Source | None = None
    try:
        src = _open(con, data, sep)
        cols = ", ".join(f"{_text_of(f'c{j}', t)} AS {_ident(f'c{j}')}"
                         for j, t in enumerate(src.types))
        frame = con.execute(f"SELECT {cols} FROM {src.relation}").df()
    except duckdb.Error as exc:
        label, kind = (src.label, src.kind) if src is not None else (str(data), "csv:none")
        raise _fail(label, kind, sep, exc) from None
    finally:
        con.close()
    frame = frame.astype(object)
    frame.columns = src.header
    if len(frame) == 0:
        raise TableInputError(f"{src.label}: the table has no rows")
    return frame


def read_frames(data: Any, sep: str = ",", vectors: int = 32) -> Iterator[pd.DataFrame]:
    """:func:`read_frame`'s table in consecutive chunks of ``vectors`` DuckDB vectors (2,048
    rows each), in the order of the source (insertion order kept: a streaming result, never
    the whole table); the same texts and names as :func:`read_frame`.  A source that cannot
    be read raises :class:`TableInputError` (possibly after earlier chunks), and so does one
    without rows, at the end."""
    import duckdb

    con = connect()
    con.execute("SET preserve_insertion_order = true")  # rows out in the source's order
    src: _Source | None = None
    try:
        rows = 0
        try:
            src = _open(con, data, sep)
            cols = ", ".join(f"{_text_of(f'c{j}', t)} AS {_ident(f'c{j}')}"
                             for j, t in enumerate(src.types))
            for frame in _chunks_of(con, f"SELECT {cols} FROM {src.relation}", vectors):
                frame.columns = src.header
                rows += len(frame)
                yield frame
        except duckdb.Error as exc:
            label, kind = (src.label, src.kind) if src is not None else (str(data), "csv:none")
            raise _fail(label, kind, sep, exc) from None
        if rows == 0:
            assert src is not None
            raise TableInputError(f"{src.label}: the table has no rows")
    finally:
        con.close()


def _chunks_of(con: Any, sql: str, vectors: int) -> Iterator[pd.DataFrame]:
    result = con.execute(sql)
    while len(frame := result.fetch_df_chunk(vectors)):
        yield frame.astype(object)


def _text_of(col: str, dtype: str) -> str:
    """A cell as the text the schema's rules read: NULL (and a float NaN) are the empty cell;
    booleans as Python writes them."""
    if dtype == "VARCHAR":
        return f"coalesce({col}, '')"
    if dtype == "BOOLEAN":
        return f"CASE WHEN {col} IS NULL THEN '' WHEN {col} THEN 'True' ELSE 'False' END"
    if dtype in _FLOAT_TYPES:
        return f"CASE WHEN {col} IS NULL OR isnan({col}) THEN '' ELSE CAST({col} AS VARCHAR) END"
    return f"coalesce(CAST({col} AS VARCHAR), '')"

