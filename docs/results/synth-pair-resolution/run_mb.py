import runpy, sys
import oracledp.synth._table_synthesizer as t
t.MODEL_BINS = int(sys.argv.pop(1))
sys.argv[0] = "benchmarks/synth_native.py"
runpy.run_path("benchmarks/synth_native.py", run_name="__main__")
