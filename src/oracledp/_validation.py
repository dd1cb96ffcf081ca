"""Input validation shared by every mechanism.

All checks run before any randomness is consumed.  Messages name the bound or
contract that failed and how to fix it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._errors import BoundsViolation

RandomLike = None | int | np.integer | np.random.SeedSequence | np.random.Generator


def check_rng(random_state: RandomLike) -> np.random.Generator:
    """Turn ``None``, an int, a SeedSequence or a Generator into a Generator.

    A Generator is returned as is (shared state, so successive calls draw new
    noise); the same int seed always gives the same stream.  The legacy
    ``np.random.RandomState`` and the global ``np.random`` state are refused:
    oracledp never touches global randomness.

    >>> import numpy as np
    >>> check_rng(0).random() == np.random.default_rng(0).random()
    True
    >>> g = np.random.default_rng(1)
    >>> check_rng(g) is g
    True
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, bool):
        raise TypeError("random_state must be None, an int, a SeedSequence or a Generator, not bool")
    if isinstance(random_state, numbers.Integral):
        if int(random_state) < 0:
            raise ValueError(f"random_state seed must be >= 0, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(random_state).__name__}"
    )


def check_bool(value: object, name: str) -> bool:
    """``value`` as a bool (a ``TypeError`` otherwise): a flag is never guessed from a truthy value."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_sample_size(m: object, default: int) -> int:
    """The number of synthetic records to sample: ``default`` for None, else an integer >= 1."""
    if m is None:
        return default
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or int(m) < 1:
        raise ValueError(f"the number of records to sample must be an integer >= 1, got {m!r}")
    return int(m)


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """A finite privacy parameter epsilon > 0."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    eps = float(epsilon)
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {epsilon!r}")
    return eps


def check_integer(value: object, name: str) -> int:
    """``value`` as an int: a Python or numpy integer (a bool is not one), else TypeError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    return int(value)


def check_delta(delta: object, name: str = "delta") -> float:
    """delta strictly inside (0, 1) for approximate-DP mechanisms."""
    return check_open_unit(delta, name, interval="the open interval (0, 1)")


def check_open_unit(value: object, name: str, *, label: str | None = None,
                    number: str = "a real number", interval: str = "(0, 1)") -> float:
    """A real number strictly inside (0, 1): delta, or a failure probability (gamma, beta).

    Bools and non-reals raise TypeError (``{name} must be {number}``); values outside, NaN
    included, raise ValueError (``{label} must be in {interval}``, label defaulting to name).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {number}, got {type(value).__name__}")
    v = float(value)
    if not (0.0 < v < 1.0):  # NaN fails too
        raise ValueError(f"{name if label is None else label} must be in {interval}, got {value!r}")
    return v


def check_positive(value: object, name: str, *, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    if integer and v != int(v):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return v


def as_dense_float64(values: object, name: str, *, must_be: str,
                     sparse: str = "sparse matrices are") -> NDArray[np.float64]:
    """``np.asarray(values, dtype=float64)``; sparse input and entries that are not numbers refused.

    The messages never quote the input (numpy's would: the values are data):
    ``{name}: {sparse} not supported; pass a dense array`` and ``{name} must be {must_be} (an
    entry is not a number; ...)``.  No check of shape or finiteness.
    """
    if hasattr(values, "toarray") or hasattr(values, "tocsr"):
        raise TypeError(f"{name}: {sparse} not supported; pass a dense array")
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):  # numpy's message quotes the value: data, never shown
        raise TypeError(f"{name} must be {must_be} (an entry is not a number; "
                        "values are not shown: they are data)") from None


def as_real_float64(values: object, name: str, *, must_be: str,
                    dtype_must: str = "contain real numbers") -> NDArray[np.float64]:
    """A float64 copy of ``values`` if its dtype is integer or float (bools, strings... refused).

    TypeError ``{name} must be {must_be}: ...`` if numpy cannot make an array of it, and
    ``{name} must {dtype_must}, got dtype ...`` for another dtype.  No check of shape or
    finiteness.
    """
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be {must_be}: {exc}") from exc
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must {dtype_must}, got dtype {raw.dtype}")
    return raw.astype(np.float64)


def check_finite_matrix(X: ArrayLike, name: str = "X") -> NDArray[np.float64]:
    """A non-empty 2-D float array with only finite entries."""
    arr = as_dense_float64(X, name, must_be="a numeric 2-D array")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: need at least 1 sample")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 features")
    if not np.isfinite(arr).all():
        cols = np.flatnonzero(~np.isfinite(arr).all(axis=0))[:5].tolist()
        raise ValueError(f"{name} contains NaN or infinite values (in columns {cols}); "
                         "impute or drop them before fitting")
    return arr


def check_real_vector(values: object, name: str, *, nonempty: bool = False
                      ) -> NDArray[np.float64]:
    """A finite 1-D float64 array of real numbers (bools, strings and objects refused)."""
    arr = as_real_float64(values, name, must_be="a 1-D array of real numbers")
    if arr.ndim != 1 or (nonempty and arr.size == 0):
        raise ValueError(f"{name} must be a {'non-empty ' if nonempty else ''}1-D sequence, "
                         f"got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_signed_labels(y: ArrayLike, n: int | None = None, name: str = "y") -> NDArray[np.int8]:
    """Labels that are exactly -1 or +1 (no implicit mapping from {0,1})."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} labels but X has {n} rows")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if arr.dtype.kind not in "biuf":
        raise BoundsViolation(
            f"{name} must contain labels in {{-1, +1}}; got dtype {arr.dtype}. "
            "Map your classes explicitly (the estimators do this through classes_)."
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    bad = ~np.isin(arr, (-1, 1))
    if bad.any():
        raise BoundsViolation(
            f"{name} must contain only -1 and +1 (the label set the proof assumes); it holds "
            "other values. "
            "Labels in {0, 1} are not mapped silently: use the estimator's classes_ mapping "
            "or convert with 2*y - 1."
        )
    return arr.astype(np.int8)


def check_choice(value: object, name: str, choices: Iterable[str]) -> str:
    opts = sorted(choices)
    if not isinstance(value, str) or value not in opts:
        raise ValueError(f"unknown {name} {value!r}; valid names are: {', '.join(opts)}")
    return value


def check_sep(sep: object, name: str = "sep") -> str:
    """A CSV field delimiter: one character, not a quote or a line break (a longer ``sep``
    would be read by pandas as a regular expression, an empty one not at all)."""
    if not isinstance(sep, str):
        raise TypeError(f"{name} must be a string, got {type(sep).__name__}")
    if len(sep) != 1 or sep in "\"\r\n":
        raise ValueError(f"{name} must be one character other than a quote or a line break "
                         f"(e.g. ',' ';' or a tab), got {sep!r}")
    return sep
