"""The benchmark's verdict with AIM's runs re-done where they were stale (docs/results/synth-aim-fresh).

Reads ../synth-heap/bench/runs.json (the default at ec7e889, every other method copied from
earlier records) and ./runs.json (AIM re-run at ec7e889 on doctor_visits and
health_insurance at epsilon 0.1, 0.5 and 1), replaces those AIM runs, and writes
./verdict/runs.json; then `python benchmarks/synth_tables.py --rewrite --out
docs/results/synth-aim-fresh/verdict` writes the verdict, tables and plot from it.

    PYTHONPATH=src python docs/results/synth-aim-fresh/merge.py
"""

import json
from pathlib import Path

here = Path(__file__).parent
bench = json.loads((here.parent / "synth-heap" / "bench" / "runs.json").read_text())
fresh = json.loads((here / "runs.json").read_text())
commit = str(fresh["meta"].get("versions", {}).get("oracledp_commit", "?"))[:7]
key = lambda r: (r["table"], r["method"], r["eps"], r["seed"])  # noqa: E731
new = {key(r): {**r, "source": f"{here / 'runs.json'} (commit {commit}; re-run for this "
                "record)"} for r in fresh["runs"] if r["method"] == "aim"}
runs = [new.pop(key(r), r) for r in bench["runs"]]
assert not new, f"fresh runs without a place in the grid: {sorted(new)}"
meta = {**bench["meta"], "note": " ".join(x for x in (bench["meta"].get("note"), (
    f"AIM's runs on doctor_visits and health_insurance at epsilon 0.1, 0.5 and 1 re-run at "
    f"{commit} (docs/results/synth-aim-fresh); its other runs copied from earlier records "
    "(each run's source).")) if x)}
out = here / "verdict"
out.mkdir(exist_ok=True)
(out / "runs.json").write_text(json.dumps({"meta": meta, "runs": runs,
                                           "references": bench["references"]}, indent=1)
                               + "\n")
print(f"wrote {out / 'runs.json'}: {len(runs)} runs")
