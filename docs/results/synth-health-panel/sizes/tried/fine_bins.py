import sys, os
sys.path.insert(0, "benchmarks")
import oracledp.synth._numeric as nm
F = int(os.environ["FB"])
nm.FINE_BINS = F
import synth_health_panel as P
P.main(sys.argv[1:])
