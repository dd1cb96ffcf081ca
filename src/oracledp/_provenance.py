"""One line saying when, with what and on how loaded a machine a measurement was taken.

Benchmarks, the demo and the reproductions print it, so every timing in the
documentation (``docs/benchmarks.md``, the ``lab/`` READMEs) can be traced to a date, the package versions and the machine's load.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as _md
import os
import platform

_PACKAGES = ("oracledp", "numpy", "scipy", "highspy", "ortools", "scikit-learn", "dp-accounting",
             "mbi", "jax")


def environment() -> dict[str, object]:
    """Date (UTC), Python and package versions, CPU count and the 1/5/15-minute load."""
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = _md.version(name)
        except _md.PackageNotFoundError:
            continue
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not available on this platform
        load = []
    return {
        "date_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_avg_1_5_15": load,
        "versions": versions,
    }


def environment_line(env: dict[str, object] | None = None) -> str:
    """:func:`environment` (or a recorded ``env``) as one human-readable line."""
    env = environment() if env is None else env
    vers = " ".join(f"{k}={v}" for k, v in env["versions"].items())  # type: ignore[union-attr]
    return (f"# {env['date_utc']} UTC, Python {env['python']} on {env['machine']}, "
            f"{env['cpus']} CPUs, load {env['load_avg_1_5_15']}; {vers}")
