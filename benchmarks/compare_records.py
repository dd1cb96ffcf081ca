"""Compare a reproduction's records with the committed ones, field by field (timings excluded).

    python benchmarks/compare_records.py NEW_DIR lab/icml2020/results/icml2020-adult runs.jsonl
    python benchmarks/compare_records.py NEW_DIR lab/accuracy_first/results/accuracy-first-logistic trials.jsonl

Uses the rules of ``tests/test_bit_identity.py`` (every field of the committed record equal,
exactly where exact by construction, within its relative tolerance for the evaluation floats
computed through BLAS that it lists; wall-clock fields skipped).  Prints one line per differing record and a summary; exit status 1 if any
record differs or is missing.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rules():  # the comparison of tests/test_bit_identity.py, not a copy of it
    spec = importlib.util.spec_from_file_location("bit_identity",
                                                  ROOT / "tests" / "test_bit_identity.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def _key(rec: dict) -> str:
    if "key" in rec:
        return rec["key"]
    return json.dumps({k: rec.get(k) for k in ("method", "eps", "run", "d", "trial")})


def _load(directory: str, name: str) -> dict[str, dict]:
    lines = (Path(directory) / name).read_text().splitlines()
    return {_key(r): r for r in map(json.loads, filter(None, lines))}


def main(new_dir: str, old_dir: str, name: str) -> int:
    rules = _rules()
    new, old = _load(new_dir, name), _load(old_dir, name)
    bad = 0
    for key, want in old.items():
        if key not in new:
            print(f"missing: {key}")
            bad += 1
            continue
        diff = rules._diff(json.loads(json.dumps(new[key])), want, "")
        if diff:
            print(f"{key}: {diff[:3]}")
            bad += 1
    print(f"compared {len(old)} committed records with {len(new)} new ones: "
          f"{len(old) - bad} identical, {bad} differing or missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
