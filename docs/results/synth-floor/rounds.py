"""T of the default (its ``rounds_``) on the tables of this record, and what floor_rounds and the
budget would give (run from the repository root with PYTHONPATH=src; seed 0, eps as given)."""

import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, "benchmarks")
warnings.simplefilter("ignore")
import synth_health_panel as panel  # noqa: E402
from oracledp.datasets import table_csv, table_schema  # noqa: E402
from oracledp.synth import TableSynthesizer  # noqa: E402
from oracledp.synth._oracle_query_pgm import default_rounds, floor_rounds  # noqa: E402
from oracledp.tabular import TableSchema  # noqa: E402

cases = [("health_insurance", 0.5), ("doctor_visits", 0.5), ("biopsy", 1.0), ("biopsy", 2.0),
         ("nhefs", 1.0), ("health-panel stand-in", 1.0)]
for name, eps in cases:
    if name.startswith("health-panel"):
        path = Path(tempfile.mkdtemp()) / "panel.csv"
        panel.table(seed=0).to_csv(path, index=False)
        schema = TableSchema.from_dict(panel.SCHEMA)
    else:
        path = table_csv(name, Path(tempfile.mkdtemp()) / f"{name}.csv", split="all")
        schema = TableSchema.from_dict(table_schema(name))
    syn = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=0).fit(path, schema)
    inner = syn.synthesizer_
    d = len(inner.domain_.shape)
    n = inner.n_
    T0 = default_rounds(n, inner.epsilon, inner.delta, d, divisor=50.0)
    print(f"{name} eps={eps}: d={d} n={n} T={inner.rounds_} default_rounds={T0} "
          f"floor_rounds={floor_rounds(n, inner.epsilon, inner.delta, d)} "
          f"eps_sel={inner.eps_selection_:.4f} one_clique={inner.max_model_cells_ is None}")
