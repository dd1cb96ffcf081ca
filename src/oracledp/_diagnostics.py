"""Non-private diagnostics: what a run computed that its privacy guarantee does NOT cover.

A released model or result carries only what its :class:`~oracledp.privacy._guarantees.PrivacyGuarantee`
covers: the released parameters, the public configuration (epsilon, delta, noise scales
computed from public parameters, space sizes, public sizes such as n) and the guarantee.
Everything else a run computes from the data -- the training loss of the released
point, the oracle's objective, bound, gap and status, wall-clock timings, inner solve
counts, excess risk, regret, PRSMA's per-part outcomes... -- is a
:class:`NonPrivateDiagnostics` object, which is

* absent by default (``result.diagnostics is None``; no ``diagnostics_`` attribute);
* attached only on request, for research: ``return_diagnostics=True`` on the learner
  functions, ``keep_diagnostics=True`` on the estimators and the synthesizer.  Opting in
  issues a :class:`~oracledp._errors.DiagnosticsWarning` (a
  :class:`~oracledp._errors.PrivacyWarning`) and sets ``guarantee.diagnostics_released``;
* never pickled with an estimator (``__getstate__`` drops ``diagnostics_``).

Example: a single training-error count tells whether one target record is misclassified
by the released weights, so publishing it next to the model makes the pair eps = infinity.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from oracledp._errors import DiagnosticsWarning
from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = [
    "NonPrivateDiagnostics",
    "PicklesWithoutDiagnostics",
    "check_diagnostics_flag",
    "release_diagnostics",
    "research_diagnostics",
    "split_diagnostics",
]

NOT_PRIVATE = "NOT differentially private"


@dataclass(frozen=True, repr=False, eq=False)
class NonPrivateDiagnostics:
    """Data-dependent by-products of one run.  NOT differentially private.

    Nothing here is covered by the run's privacy guarantee: these values read the
    private data exactly (for instance the number of training records the released
    weights misclassify).  They exist for research (timings, certification, training
    loss in experiment reports) and must never be published with the model.

    ``mechanism`` names the run; the values are read as attributes or items
    (``diag.loss`` or ``diag["loss"]``); :meth:`to_dict` copies them.

    >>> from oracledp import NonPrivateDiagnostics
    >>> d = NonPrivateDiagnostics("opdisc", {"train_loss": 12})
    >>> d.train_loss, d.private
    (12, False)
    """

    mechanism: str
    values: dict[str, Any]

    private = False
    """Always False: these values are not differentially private."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", dict(self.values))

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails; __dict__ access avoids recursion while unpickling
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(f"NonPrivateDiagnostics of {self.__dict__.get('mechanism')!r} "
                             f"has no entry {name!r}")

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __contains__(self, key: object) -> bool:
        return key in self.values

    def keys(self) -> list[str]:
        return list(self.values)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        """A shallow copy of the values (still NOT differentially private)."""
        return dict(self.values)

    def __repr__(self) -> str:
        def short(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"array(shape={v.shape})"
            text = repr(v)
            return text if len(text) <= 60 else text[:57] + "..."

        body = ", ".join(f"{k}={short(v)}" for k, v in self.values.items())
        return f"NonPrivateDiagnostics[{NOT_PRIVATE}]({self.mechanism!r}; {body})"

    __str__ = __repr__


def check_diagnostics_flag(value: object, name: str = "return_diagnostics") -> bool:
    """``value`` as a bool (a ``TypeError`` otherwise): the opt-in flag is never guessed."""
    from oracledp._validation import check_bool

    return check_bool(value, name)


def release_diagnostics(guarantee: PrivacyGuarantee, mechanism: str, *,
                        stacklevel: int = 2) -> PrivacyGuarantee:
    """Warn that ``mechanism`` releases non-private diagnostics; the flagged guarantee.

    Called by a mechanism after its output is decided and only when the caller opted
    in; ``stacklevel`` counts from the caller of this function.
    """
    warnings.warn(
        f"{mechanism}: non-private diagnostics were requested (return_diagnostics / "
        "keep_diagnostics). They read the training data exactly (loss, objective, timings...), "
        "are NOT covered by the privacy guarantee and must not be published with the output; "
        "the guarantee is marked diagnostics_released=True.",
        DiagnosticsWarning,
        stacklevel=stacklevel + 1,
    )
    return guarantee.with_diagnostics_released()


@contextmanager
def research_diagnostics() -> Iterator[None]:
    """Silence :class:`~oracledp._errors.DiagnosticsWarning` inside (other warnings still show).

    For experiment drivers (the demo, the reproductions in the repository's ``lab/``, your
    own), which opt into diagnostics on purpose to report timings, certification and
    training loss.  The guarantees are still flagged ``diagnostics_released=True``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticsWarning)
        yield


class PicklesWithoutDiagnostics:
    """Mixin: a fitted object's pickle (and deep copy) carries only the release.

    Dropped from the state: ``diagnostics_`` (non-private), and, once fitted,
    the seed or generator behind the noise (``random_state`` becomes None and a
    kept generator ``_rng`` is dropped).  A seed is a key to the noise: with it,
    the released parameters and the noise together constrain the data far more
    than the guarantee allows (eps = infinity in the worst case).  An unfitted
    estimator keeps its seed, so clones sent to parallel workers stay
    reproducible.
    """

    def __getstate__(self) -> dict[str, Any]:
        parent = getattr(super(), "__getstate__", None)
        state = parent() if parent is not None else None
        state = dict(self.__dict__ if state is None else state)  # object's is __dict__ itself
        state.pop("diagnostics_", None)
        fitted = any(k.endswith("_") and not k.startswith("_") for k in state)
        if fitted:
            if state.get("random_state") is not None:
                state["random_state"] = None
            state.pop("_rng", None)
        return state


def split_diagnostics(result: Any) -> tuple[Any, NonPrivateDiagnostics | None]:
    """``(result without diagnostics, its diagnostics)`` for a result dataclass.

    Estimators keep the first as ``result_`` and the second, if any, as the
    never-pickled ``diagnostics_``.
    """
    diagnostics = getattr(result, "diagnostics", None)
    if diagnostics is None:
        return result, None
    return replace(result, diagnostics=None), diagnostics
