import runpy, sys
import oracledp.synth._table_synthesizer as t
t.TableSynthesizer._pair_bins = int(sys.argv.pop(1))
sys.argv[0] = "benchmarks/synth_native.py"
runpy.run_path("benchmarks/synth_native.py", run_name="__main__")
