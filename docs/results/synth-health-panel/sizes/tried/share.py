import sys, os
sys.path.insert(0, "benchmarks")
import oracledp.synth._table_synthesizer as TS
v = float(os.environ["NF"]); orig = TS.auto_fraction
TS.auto_fraction = lambda n, rho, columns, attributes: v * min(1.0, 6 * columns / attributes)
import synth_health_panel as P
P.main(sys.argv[1:])
