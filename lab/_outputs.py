"""What the reproductions share: their JSON-lines records and their output files.

A reproduction writes one JSON line per finished run (so an interrupted run keeps what
finished), a CSV of the records, ``summary.json`` and figures (matplotlib's Agg canvas,
imported on first use).  Nothing here computes a release: it only stores and shows records.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

Record = dict[str, Any]
Progress = Callable[[int, int, str], None]


def read_jsonl(path: Path) -> list[Record]:
    """The records of a JSON-lines file (none if it does not exist).

    A line cut by an interruption is skipped, so its run is redone on resume.
    """
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by an interruption: redo that run
                continue
    return records


def run_and_append(path: Path, task: Callable[..., Record], todo: Sequence[tuple[Any, ...]],
                   n_jobs: int, done: dict[str, Record], progress: Progress | None,
                   describe: Callable[[Record], str]) -> None:
    """Run ``task(*args)`` for every ``args`` of ``todo`` on ``n_jobs`` joblib workers.

    Each record is appended to ``path`` as soon as it arrives (in any order, flushed) and
    stored as ``done[record["key"]]``; ``progress(i, len(todo), describe(record))`` follows.
    """
    from joblib import Parallel, delayed

    jobs: Iterable[Record] = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
        delayed(task)(*args) for args in todo)
    with path.open("a") as fh:
        for i, rec in enumerate(jobs, 1):
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            done[rec["key"]] = rec
            if progress:
                progress(i, len(todo), describe(rec))


def new_figure(**options: Any) -> Any:
    """A matplotlib Figure on the Agg canvas (no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**options)
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Any, path: Path, dpi: int) -> Path:
    """Write ``fig`` to ``path`` (tight bounding box); returns ``path``."""
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path


def write_summary_json(rows: Any, out_dir: Path) -> None:
    """``out_dir/summary.json``: the summary rows (or object), indented."""
    (out_dir / "summary.json").write_text(json.dumps(rows, indent=2))


def std_bars(stds: Iterable[float]) -> list[float]:
    """Error-bar half-widths: a std of nan (a single run) draws no bar."""
    return [0.0 if math.isnan(s) else s for s in stds]


def finish_axes(ax: Any, xlabel: str, ylabel: str, title: str, *, xscale: str | None = None,
                yscale: str | None = None, legend_size: float | None = None) -> None:
    """The reproductions' axis style: scales, labels, title, a light grid and the legend."""
    if xscale:
        ax.set_xscale(xscale)
    if yscale:
        ax.set_yscale(yscale)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(**({} if legend_size is None else {"fontsize": legend_size}))
