"""Private solver worker process of the monolithic MIP oracle.

Private helper of :mod:`oracledp.oracles._monolithic` (see its module docstring for why:
highspy and OR-Tools may not share a process).  :class:`_WorkerClient` starts a child
interpreter running :func:`_worker_main`, which keeps up to ``_WORKER_PROBLEMS``
problems (with their built models) and answers solve requests; problems are sent once
(by token), then only ``eta``; requests and replies are pickles over stdin/stdout, and
anything the solvers print goes to stderr.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import pickle
import subprocess
import sys
import traceback
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._base import OracleStatus
from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.oracles._mono_structure import _Raw

_WORKER_PROBLEMS = 8  # problems (with their models) a worker keeps


# --------------------------------------------------------------------------------------------
# Worker subprocess (isolates OR-Tools from highspy, or highspy from an OR-Tools process)
# --------------------------------------------------------------------------------------------
def _stop_worker(proc: subprocess.Popen) -> None:
    with contextlib.suppress(Exception):
        assert proc.stdin is not None
        proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    with contextlib.suppress(Exception):
        assert proc.stdout is not None
        proc.stdout.close()


class _WorkerClient:
    """A private solver process: problems are sent once (by token), then only eta."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        root = str(Path(__file__).resolve().parents[2])  # the directory holding `oracledp`
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from oracledp.oracles._mono_worker import _worker_main; _worker_main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._finalizer = weakref.finalize(self, _stop_worker, self.proc)
        self._tokens: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._count = itertools.count()

    def close(self) -> None:
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self._finalizer.alive and self.proc.poll() is None

    def _request(self, msg: tuple) -> tuple:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        pickle.dump(msg, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.flush()
        return pickle.load(self.proc.stdout)

    def solve(self, problem: HalfspaceProblem, eta: NDArray[np.float64]) -> _Raw:
        try:
            token = self._tokens.get(problem)
        except TypeError:
            token = None
        send = token is None
        if send:
            token = next(self._count)
            with contextlib.suppress(TypeError):
                self._tokens[problem] = token
        try:
            reply = self._request(("solve", token, problem if send else None, eta, self.options))
            if reply[0] == "missing":  # the worker evicted it: send it again
                reply = self._request(("solve", token, problem, eta, self.options))
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            code = self.proc.poll()
            self.close()
            return _Raw(None, -math.inf, OracleStatus.ERROR,
                        {"reason": f"solver worker died ({type(exc).__name__}, exit code {code})"})
        if reply[0] == "ok":
            raw: _Raw = reply[1]
            raw.info["isolated"] = True
            return raw
        _, kind, message, tb = reply
        if kind in ("ImportError", "ModuleNotFoundError"):
            raise ImportError(f"{message} (in the solver worker process)")
        raise RuntimeError(f"solver worker raised {kind}: {message}\n{tb}")


def _worker_main() -> None:
    """Serve solve requests on stdin/stdout (pickles); anything printed goes to stderr."""
    from oracledp.oracles._monolithic import MonolithicMIPOracle  # imports this module

    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # solver logs written to fd 1 must not corrupt the protocol
    sys.stdout = sys.stderr
    problems: OrderedDict[int, HalfspaceProblem] = OrderedDict()
    oracles: dict[tuple, MonolithicMIPOracle] = {}
    while True:
        try:
            msg = pickle.load(inp)
        except EOFError:
            break
        _, token, problem, eta, options = msg
        if problem is not None:
            problems[token] = problem
            while len(problems) > _WORKER_PROBLEMS:
                problems.popitem(last=False)
        if token not in problems:
            reply: tuple = ("missing",)
        else:
            problems.move_to_end(token)
            try:
                key = tuple(sorted(options.items()))
                if key not in oracles:
                    oracles[key] = MonolithicMIPOracle(**options, isolate=False)
                reply = ("ok", oracles[key]._solve_raw(problems[token], eta))
            except Exception as exc:
                reply = ("error", type(exc).__name__, str(exc), traceback.format_exc())
        pickle.dump(reply, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
