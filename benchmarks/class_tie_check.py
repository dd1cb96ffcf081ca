"""Cost of the class MIP oracle's exact tie check.

Times ``HighsClassOracle.solve`` on RSPM-like weighted instances (+-1 data weights plus
Laplace noise on the separator) three ways in the same run: the default (exact by
enumeration where ``class size x points <= 2^24``, else by the solver tie check), the
tie check forced (``enumerate_limit=0``), and no exactness step at all (the previous
behaviour, for the ratios only).  Prints date, versions, load.

    python benchmarks/class_tie_check.py [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from oracledp._provenance import environment_line
from oracledp.query_classes import IntegerHalfspaces, MonotoneConjunctions, Parities
from oracledp.query_classes._mip import HighsClassOracle


def _instance(cls, rng, n):
    data = cls.encode(rng.integers(0, 2, size=(n, cls.d)).astype(float))
    U = cls.separator()
    Z = np.vstack([data, U])
    w = np.concatenate([rng.choice([-1.0, 1.0], size=n), rng.laplace(0.0, 2.0, size=len(U))])
    return Z, w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print(environment_line())
    rng = np.random.default_rng(0)
    cases = [("conjunctions d=10 n=300", MonotoneConjunctions(10), 300),
             ("parities d=8 n=200", Parities(8), 200),
             ("halfspaces d=4 B=2 n=300", IntegerHalfspaces(4, B=2), 300),
             ("conjunctions d=24 n=60", MonotoneConjunctions(24), 60)]
    print(f"{'class':26s} {'default s':>9s} {'tie check s':>11s} {'none s':>7s} "
          f"{'default/none':>12s} {'tie/none':>8s}  certificate")
    original = HighsClassOracle._tie_check, HighsClassOracle._enumeration

    def timed(orc, inst):
        out, certs = [], []
        for Z, w in inst:
            t0 = time.perf_counter()
            r = orc.solve(Z, w)
            out.append(time.perf_counter() - t0)
            certs.append(r.info.get("certificate", "-") if r.certified else "REFUSED")
        return statistics.median(out), certs

    for name, cls, n in cases:
        inst = [_instance(cls, rng, n) for _ in range(args.reps)]
        a, certs = timed(HighsClassOracle(cls), inst)
        b, _ = timed(HighsClassOracle(cls, enumerate_limit=0), inst)
        HighsClassOracle._tie_check = (  # type: ignore[method-assign]
            lambda self, h, run, q, cols, Z, w, Z0, w0, params, t0: (params, True, {}))
        HighsClassOracle._enumeration = (  # type: ignore[method-assign]
            lambda self, Z, w, Z0, w0, params: (params, True, {}))
        try:
            c, _ = timed(HighsClassOracle(cls), inst)
        finally:
            HighsClassOracle._tie_check, HighsClassOracle._enumeration = original
        print(f"{name:26s} {a:9.3f} {b:11.3f} {c:7.3f} {a / c:12.2f} {b / c:8.2f}  "
              f"{','.join(sorted(set(certs)))}")


if __name__ == "__main__":
    main()
