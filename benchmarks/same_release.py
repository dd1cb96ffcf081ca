"""Same release before and after a change: the CLI's outputs of two source trees compared.

For each table (the bundled tables with schemas, and any ``--data DATA SCHEMA`` pairs) runs,
with ``PYTHONPATH`` set to each tree in turn (``--old``, e.g. ``git archive HEAD src | tar -x
-C /tmp/old`` then ``/tmp/old/src``, and ``--new``, default ``src``):

* ``oracledp fit DATA --schema S --model M --epsilon 1 --seed 0`` for each ``--models``
  (default rspm and dpsgd: DP-SGD's draws follow the order of the weighted rows), comparing
  ``coef_`` and ``intercept_`` of model.json bit for bit;
* ``oracledp predict MODEL DATA --scores``: stdout byte for byte;
* ``oracledp synth fit DATA --schema S --epsilon 1 --seed 0`` then ``synth sample --rows
  2000 --seed 1``: every array of release.npz and the sampled CSV byte for byte.

Prints one line per comparison and exits 1 if anything differs.

Usage: python benchmarks/same_release.py --old /tmp/old/src [--new src]
       [--data DATA SCHEMA ...] [--models rspm dpsgd] [--no-bundled] [--skip synth predict]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BUNDLED = ("biopsy", "doctor_visits", "health_insurance", "titanic")


def run(tree: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": tree, "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "oracledp", *args], env=env,
                          capture_output=True, check=False)


def bundled(tmp: Path) -> list[tuple[str, Path, Path]]:
    root = Path(__file__).resolve().parents[1] / "src/oracledp/datasets/_data"
    out = []
    for name in BUNDLED:
        schema = root / f"{name}.schema.json"
        if not schema.exists():
            continue
        data = tmp / f"{name}.csv"
        with gzip.open(root / f"{name}.csv.gz", "rb") as src, open(data, "wb") as dst:
            shutil.copyfileobj(src, dst)
        out.append((name, data, schema))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the old tree's src directory")
    ap.add_argument("--new", default="src", help="the new tree's src directory")
    ap.add_argument("--data", nargs=2, action="append", default=[], metavar=("DATA", "SCHEMA"))
    ap.add_argument("--models", nargs="+", default=["rspm", "dpsgd"])
    ap.add_argument("--no-bundled", action="store_true")
    ap.add_argument("--skip", nargs="*", default=[], choices=["fit", "predict", "synth"])
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="oracledp-same-"))
    bad = 0

    def same(what: str, ok: bool, why: str = "") -> None:
        nonlocal bad
        bad += not ok
        print(f"{'same' if ok else 'DIFFERENT':9} {what}{'  ' + why if why else ''}", flush=True)

    try:
        tables = [] if a.no_bundled else bundled(tmp)
        tables += [(Path(d).name, Path(d), Path(s)) for d, s in a.data]
        for name, data, schema in tables:
            for model in ([] if "fit" in a.skip else a.models):
                outs = {}
                for side, tree in (("old", a.old), ("new", a.new)):
                    out = tmp / f"{name}-{model}-{side}"
                    r = run(tree, "fit", str(data), "--schema", str(schema), "--model", model,
                            "--epsilon", "1", "--seed", "0", "--force", "--out", str(out))
                    outs[side] = (r, out)
                (ro, oo), (rn, on) = outs["old"], outs["new"]
                if ro.returncode or rn.returncode:
                    same(f"{name} fit {model}: exit codes", ro.returncode == rn.returncode,
                         f"old {ro.returncode}, new {rn.returncode}: "
                         + rn.stderr.decode()[-300:])
                    continue
                mo = json.loads((oo / "model.json").read_text())
                mn = json.loads((on / "model.json").read_text())
                keys = [k for k in mo if "coef" in k or "intercept" in k] or list(mo)
                same(f"{name} fit {model}: model.json {', '.join(keys)}",
                     all(mo.get(k) == mn.get(k) for k in keys))
                if "predict" in a.skip:
                    continue
                po = run(a.old, "predict", str(oo), str(data), "--scores")
                pn = run(a.new, "predict", str(on), str(data), "--scores")
                same(f"{name} predict {model} --scores: stdout ({len(po.stdout):,} bytes)",
                     po.returncode == pn.returncode and po.stdout == pn.stdout,
                     "" if po.returncode == pn.returncode else
                     f"exit old {po.returncode}, new {pn.returncode}")
            if "synth" in a.skip:
                continue
            res = {}
            for side, tree in (("old", a.old), ("new", a.new)):
                out = tmp / f"{name}-synth-{side}"
                r = run(tree, "synth", "fit", str(data), "--schema", str(schema), "--epsilon",
                        "1", "--seed", "0", "--force", "--out", str(out))
                s = run(tree, "synth", "sample", str(out), "--rows", "2000", "--seed", "1") \
                    if r.returncode == 0 else r
                res[side] = (r, s, out)
            (ro, so, oo), (rn, sn, on) = res["old"], res["new"]
            if ro.returncode or rn.returncode:
                same(f"{name} synth fit: exit codes", ro.returncode == rn.returncode,
                     rn.stderr.decode()[-300:])
                continue
            zo, zn = np.load(oo / "release.npz"), np.load(on / "release.npz")
            same(f"{name} synth fit: release.npz ({len(zo.files)} arrays)",
                 sorted(zo.files) == sorted(zn.files)
                 and all(np.array_equal(zo[k], zn[k]) and zo[k].dtype == zn[k].dtype
                         for k in zo.files))
            same(f"{name} synth sample: CSV ({len(so.stdout):,} bytes)",
                 so.returncode == sn.returncode and so.stdout == sn.stdout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("all the same" if not bad else f"{bad} difference(s)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
