"""The line-ending walk of a suspect CSV (a CRLF file with a line break inside a quoted field,
as spreadsheets export) against pandas parsing the same text, measured in the same run.

    PYTHONPATH=src python benchmarks/line_ends_walk.py [--rows 1200000]

Prints the seconds of :meth:`oracledp.tabular._sources.LineEnds.walk` over the text read in
1 MB blocks and of ``pandas.read_csv`` over it, and their ratio (machines differ; the ratio
is the figure).  2026-11-29, the commit that added this script: 30 MB, walk 0.55 s, pandas
0.88 s, ratio 0.63 (the walk that visited every delimiter, commit 1f5f08b: 3.0 s).
"""

from __future__ import annotations

import argparse
import io
import time

import pandas as pd

from oracledp.tabular._sources import LineEnds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_200_000)
    args = ap.parse_args(argv)
    text = '"a\nb",1,2,3,4,5,6,7\r\n' + "12,abc,3.5,xyz,7,8,9,10\r\n" * args.rows
    f = io.StringIO(text)
    t = time.perf_counter()
    mixed = LineEnds.walk(iter(lambda: f.read(1 << 20), ""), ",")
    walk = time.perf_counter() - t
    t = time.perf_counter()
    pd.read_csv(io.StringIO(text), header=None, dtype=str)
    parse = time.perf_counter() - t
    print(f"{len(text) / 1e6:.0f} MB: walk {walk:.2f} s (mixed={mixed}), pandas read_csv "
          f"{parse:.2f} s, ratio {walk / parse:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
