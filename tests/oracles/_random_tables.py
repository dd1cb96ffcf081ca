"""Random mixed tables (numeric columns, one-hot blocks) for the structured-oracle tests."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from oracledp.oracles import HalfspaceProblem, IntegerBall


def random_table(rng: np.random.Generator, n: int, n_num: int, blocks: list[int]) -> np.ndarray:
    """``n`` rows: ``n_num`` numeric columns on a quarter grid, then one-hot blocks of sizes."""
    cols = [rng.integers(-3, 5, size=n) / 4 for _ in range(n_num)]
    for k in blocks:
        c = rng.integers(0, k, size=n)
        cols += [(c == j).astype(float) for j in range(k)]
    return np.column_stack(cols)


def random_instances(seed: int, count: int
                     ) -> Iterator[tuple[np.random.Generator, HalfspaceProblem]]:
    """``count`` small halfspace problems (d <= 5) over random tables and integer balls."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(5, 60))
        n_num = int(rng.integers(0, 3))
        blocks = [int(rng.integers(2, 4)) for _ in range(int(rng.integers(1, 3)))]
        if n_num + sum(blocks) > 5:
            blocks = blocks[:1]
        X = random_table(rng, n, n_num, blocks)
        y = np.where(rng.random(n) < 0.5, 1, -1)
        d = X.shape[1]
        space = IntegerBall(d, bound=int(rng.integers(1, 3)),
                            radius=float(rng.choice([np.sqrt(d), 1.5, 2.0])))
        yield rng, HalfspaceProblem.from_data(X, y, space)
