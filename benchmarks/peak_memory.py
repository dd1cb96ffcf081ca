"""Where a command's peak memory goes: RSS sampled with the main thread's stack.

Runs ``oracledp`` (the CLI, in this process) with the given arguments while a thread samples
the process's resident set (``/proc/self/statm``) every ``--every`` seconds.  Each time the
RSS passes its previous maximum by more than ``--step`` MB, the working thread's (the
deepest stack running this package's code that is not waiting: the CLI fits in a worker
thread while the main thread waits; else the main thread) innermost frames of this package (file:line function) are recorded, so the log shows which code was
running as memory grew (a sampler, not an allocator trace: a short spike between two samples
can be missed; ``ru_maxrss`` at the end is the exact peak).  Also prints a timeline (RSS at
every ``--timeline`` seconds with the innermost frame).

Usage: python benchmarks/peak_memory.py [--every 0.02] [--step 25] -- fit DATA --schema S ...
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
import traceback

MB = 2**20
_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * _PAGE / MB


def _where(frame: object, depth: int) -> str:
    stack = traceback.extract_stack(frame)  # type: ignore[arg-type]
    ours = [f for f in stack if "oracledp" in f.filename or "benchmarks" in f.filename]
    pick = (ours or stack)[-depth:]
    return " < ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                      for f in reversed(pick))


def _ours(frame: object) -> bool:
    while frame is not None:
        if "oracledp" in frame.f_code.co_filename:  # type: ignore[attr-defined]
            return True
        frame = frame.f_back  # type: ignore[attr-defined]
    return False


#: Functions of this package that only wait (a heartbeat, the wait for a worker thread).
_WAITING = ("beat", "_run_interruptibly")


def _idle(frame: object) -> bool:
    """A thread that waits: its innermost frame is in ``threading`` or one of _WAITING."""
    code = frame.f_code  # type: ignore[attr-defined]
    return code.co_filename.endswith("threading.py") or code.co_name in _WAITING


def _depth(frame: object) -> int:
    n = 0
    while frame is not None:
        n, frame = n + 1, frame.f_back  # type: ignore[attr-defined]
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=float, default=0.02, help="seconds between samples")
    ap.add_argument("--step", type=float, default=25.0, help="MB above the last record")
    ap.add_argument("--depth", type=int, default=4, help="frames shown per record")
    ap.add_argument("--timeline", type=float, default=2.0, help="seconds between lines")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the oracledp arguments")
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    main_id = threading.get_ident()
    stop = threading.Event()
    records: list[tuple[float, float, str]] = []
    timeline: list[tuple[float, float, str]] = []
    t0 = time.perf_counter()

    def sample() -> None:
        me = threading.get_ident()
        best, last_line = 0.0, -1e9
        while not stop.is_set():
            now = rss_mb()
            t = time.perf_counter() - t0
            frames = sys._current_frames()
            # the thread doing the work: a worker running this package's code (the CLI fits
            # in a worker thread while the main thread waits), else the main thread
            busy = [f for k, f in frames.items() if k != me and _ours(f) and not _idle(f)]
            frame = max(busy, key=_depth) if busy else frames.get(main_id)
            if now > best + a.step and frame is not None:
                records.append((t, now, _where(frame, a.depth)))
                best = now
            if t - last_line >= a.timeline and frame is not None:
                timeline.append((t, now, _where(frame, 1)))
                last_line = t
            time.sleep(a.every)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    from oracledp.__main__ import main as cli

    code = 0
    try:
        sys.argv = ["oracledp", *args]
        cli()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        stop.set()
        thread.join()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = sys.stderr
    print(f"\n# exit {code}; {time.perf_counter() - t0:.1f}s; peak RSS (ru_maxrss) "
          f"{peak:.0f} MB", file=out)
    print("# timeline (s, RSS MB, innermost frame)", file=out)
    for t, m, w in timeline:
        print(f"{t:8.2f} {m:8.0f}  {w}", file=out)
    print("# new maxima (s, RSS MB, frames innermost first)", file=out)
    for t, m, w in records:
        print(f"{t:8.2f} {m:8.0f}  {w}", file=out)


if __name__ == "__main__":
    main()
