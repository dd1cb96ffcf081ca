"""Run the release checks (``pytest -m "release and not slow"``) under two OpenBLAS CPU kernels.

OpenBLAS chooses a kernel for the CPU at run time; ``OPENBLAS_CORETYPE`` overrides the choice.
Kernels sum in different orders, so values that pass through BLAS/LAPACK differ in their last
bits from one machine to another.  The release checks (``tests/test_bit_identity.py``) compare
those values within a stated tolerance and the exact-by-construction ones bit for bit; running
them under the machine's own kernel *and* under a second one that this CPU also supports shows
that they pass on other machines too, not only on the one that wrote the records.

    python scripts/release_checks.py            # both kernels, side by side (``make test``)
    python scripts/release_checks.py --which    # print the two kernels and exit

The second kernel is the first of a fixed list that this CPU can run and that differs from
the default one; the check fails if OpenBLAS does not report a different kernel under it.
On a CPU family without an alternative here the second run is skipped, with a note.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (OPENBLAS_CORETYPE value, /proc/cpuinfo flag the kernel needs), most to least capable.
ALTERNATIVES = {
    "x86_64": [("Haswell", "avx2"), ("Sandybridge", "avx"), ("Nehalem", "sse4_2"),
               ("Prescott", "sse3")],
    "aarch64": [("NEOVERSEN1", "asimd"), ("ARMV8", "")],
}

_PROBE = ("import numpy, scipy.linalg, threadpoolctl; "
          "print(sorted({i.get('architecture') or '?' for i in threadpoolctl.threadpool_info() "
          "if i.get('internal_api') == 'openblas'}))")


def _kernels(env: dict[str, str]) -> str:
    """The OpenBLAS kernels numpy and scipy use under ``env`` (a fresh process)."""
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:  # e.g. a kernel this CPU cannot run (illegal instruction)
        return ""
    return out.stdout.strip()


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    flags: set[str] = set()
    for line in text.splitlines():
        if line.split(":")[0].strip() in ("flags", "Features"):
            flags.update(line.split(":", 1)[1].split())
    return flags


def choose() -> tuple[dict[str, str], str, dict[str, str] | None, str]:
    """(default env, its kernels, second env or None, its kernels)."""
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    default = _kernels(base)
    flags = _cpu_flags()
    for name, flag in ALTERNATIVES.get(platform.machine(), []):
        if flag and flag not in flags:
            continue
        env = {**base, "OPENBLAS_CORETYPE": name}
        got = _kernels(env)
        if got and got != default:
            return base, default, env, got
    return base, default, None, ""


def main() -> int:
    base, default, alt, alt_kernels = choose()
    print(f"release checks: default OpenBLAS kernel {default}; second kernel "
          f"{alt['OPENBLAS_CORETYPE'] + ' ' + alt_kernels if alt else 'none available'}",
          flush=True)
    if sys.argv[1:] == ["--which"]:
        return 0
    pytest = [sys.executable, "-m", "pytest", "-q", "-m", "release and not slow", "-p", "no:cacheprovider"]
    if alt is None:
        rc = subprocess.run(pytest, env=base, cwd=ROOT, check=False).returncode
        print("note: no second OpenBLAS kernel for this CPU here; ran the default one only")
        return rc
    # The two runs are independent and mostly single-threaded: run them side by side (the
    # machines here have 2 cores) and print each one's output whole, in order.
    runs = [(f"default kernel {default}", base),
            (f"OPENBLAS_CORETYPE={alt['OPENBLAS_CORETYPE']} ({alt_kernels})", alt)]
    procs = [subprocess.Popen(pytest, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _, env in runs]
    rcs = []
    for (label, _), proc in zip(runs, procs, strict=True):
        out, _ = proc.communicate()
        print(f"release checks under the {label}:\n{out.rstrip()}", flush=True)
        rcs.append(proc.returncode)
    return next((rc for rc in rcs if rc != 0), 0)

if __name__ == "__main__":
    sys.exit(main())
