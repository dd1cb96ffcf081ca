"""`oracledp predict` of two source trees on the same files: time, peak memory, same bytes.

For each DATA file, runs ``oracledp predict MODEL DATA --scores`` with ``PYTHONPATH`` set to
the ``--old`` tree and then to the ``--new`` one (e.g. ``git archive`` of two commits), each in
its own subprocess (``large_tables.run_measured``: wall seconds and the child's peak RSS from
``os.wait4``), stdout written to a file; then compares the two outputs byte for byte (and
gives their MD5).  Prints the date, versions and load (``environment_line``) at the start and
the end and one line per run, and writes ``results.json`` to ``--out``.

Usage: python benchmarks/predict_stream.py --old OLD/src --new NEW/src --model MODEL_DIR
       --out DIR DATA [DATA ...]
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from large_tables import MB, cli, run_measured
from oracledp._provenance import environment, environment_line


def _md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 24), b""):
            h.update(block)
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the old tree's src directory")
    ap.add_argument("--new", required=True, help="the new tree's src directory")
    ap.add_argument("--model", required=True, type=Path, help="a directory written by fit")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--label", default="")
    ap.add_argument("data", nargs="+", type=Path)
    a = ap.parse_args()
    start = environment_line()
    print(start, flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="oracledp-predict-") as tmp:
        for data in a.data:
            outs = {}
            for name, tree in (("old", a.old), ("new", a.new)):
                out = Path(tmp) / f"{name}.csv"
                run = run_measured(cli("predict", str(a.model), str(data), "--scores"),
                                   env={"PYTHONPATH": tree}, stdout_to=out)
                outs[name] = out
                row = {"data": str(data), "file_mb": round(data.stat().st_size / MB, 1),
                       "tree": name, "exit": run.returncode, "seconds": round(run.seconds, 2),
                       "peak_mb": round(run.peak_mb, 1), "output_mb": round(out.stat().st_size
                                                                            / MB, 1),
                       "md5": _md5(out)}
                rows.append(row)
                print(f"  {data.name:28} {name:4} exit {run.returncode} {run.seconds:8.1f}s "
                      f"{run.peak_mb:8.0f} MB  out {row['output_mb']} MB md5 {row['md5']}",
                      flush=True)
            same = filecmp.cmp(outs["old"], outs["new"], shallow=False)
            rows[-1]["same_as_old"] = same
            print(f"  {data.name:28} same bytes: {'yes' if same else 'NO'}", flush=True)
    end = environment_line()
    print(end, flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "results.json").write_text(json.dumps(
        {"label": a.label, "start": start, "end": end, "environment": environment(),
         "old": a.old, "new": a.new, "model": str(a.model), "runs": rows}, indent=1) + "\n")
    print(f"results: {a.out / 'results.json'}")


if __name__ == "__main__":
    main()
