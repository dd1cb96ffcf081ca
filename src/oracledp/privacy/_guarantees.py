"""Privacy guarantees as data.

Every mechanism result and every fitted estimator carries a frozen
:class:`PrivacyGuarantee` saying exactly what was proven about the released
output: the loss ``(epsilon, delta)``, whether it is pure, approximate or
ex-post, whether the proof assumes the optimization oracle returned an exact
optimum, which theorem it comes from, and whether it actually holds for this
release (it does not when a caller opted into releasing an uncertified oracle
answer).  A release carries nothing else that reads the data: the caller who asks for
the non-private diagnostics of a run (:mod:`oracledp._diagnostics`) gets a guarantee
flagged ``diagnostics_released=True``.

Sampling uses numpy's PCG64 with floating-point arithmetic: like every float DP
library, the guarantees are stated under *idealized numerics* (exact real
arithmetic for the noise).  oracledp makes no claim of resistance to
floating-point precision attacks.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

#: The neighbouring relation of a group statement (:func:`~oracledp.privacy.group_privacy`).
GROUP_NEIGHBOURING = "groups of {k} records ({base})"
_GROUP_RE = re.compile(r"^groups of (\d+) records \(")
#: The two neighbouring relations of the statements here: replace one record (every learner's),
#: or add or remove one (MST and AIM with ``neighbouring="add-remove"``, DP-SGD's RDP curve).
REPLACE_ONE = "replace-one"
ADD_REMOVE = "add-remove"


def group_size(neighbouring: str) -> int:
    """How many records a statement with this neighbouring relation protects together: 1,
    or the product of the nested ``groups of k records (...)`` sizes.

    >>> group_size("groups of 3 records (groups of 2 records (replace-one))")
    6
    """
    size = 1
    while (m := _GROUP_RE.match(neighbouring)) is not None:
        size *= int(m.group(1))
        neighbouring = neighbouring[m.end():-1]
    return size


class GuaranteeKind(StrEnum):
    """What sort of privacy statement a guarantee is.

    >>> from oracledp import GuaranteeKind
    >>> GuaranteeKind("ex-post") is GuaranteeKind.EX_POST
    True
    """

    PURE = "pure"
    """epsilon-DP (delta = 0)."""
    APPROXIMATE = "approximate"
    """(epsilon, delta)-DP."""
    EX_POST = "ex-post"
    """Ex-post privacy loss (Ligett et al. 2017, Definition 2.3): the loss depends on the realised output."""


@dataclass(frozen=True)
class PrivacyGuarantee:
    """A privacy statement about one released output.

    Attributes
    ----------
    epsilon, delta:
        The privacy loss.  ``delta == 0`` for pure guarantees.
    kind:
        Pure, approximate or ex-post.
    requires_exact_oracle:
        True when the proof assumes the oracle returned an exact optimum
        (OPDisc, RSPM).  Such mechanisms refuse uncertified oracle answers.
    source:
        The paper and theorem the guarantee comes from.
    neighbouring:
        The neighbouring relation of the proof ("replace-one" for the oracle
        papers: datasets of equal size differing in one record).
    holds:
        False when the output was released although the proof's assumptions
        failed (only with an explicit ``allow_uncertified=True``); the numbers
        are then what *would* hold with an exact oracle, not a guarantee.
    notes:
        Free-text caveats.
    calibration:
        How the noise was calibrated, when the mechanism computes it numerically
        (OPDisc: the multiplier, the proven delta bound and which bound was used).
    diagnostics_released:
        True when the caller opted into non-private diagnostics
        (``return_diagnostics=True`` / ``keep_diagnostics=True``): the output keeps
        this guarantee, but the :class:`~oracledp._diagnostics.NonPrivateDiagnostics`
        released with it (training loss, objective, timings...) are not covered.

    Examples
    --------
    >>> from oracledp import PrivacyGuarantee
    >>> g = PrivacyGuarantee.approximate(1.0, 1e-6, source="a theorem",
    ...                                  requires_exact_oracle=True)
    >>> print(g.describe())
    (1, 1e-06)-DP, replace-one neighbours; assumes an exact oracle; a theorem
    >>> g.not_holding("the oracle did not certify").holds
    False
    """

    epsilon: float
    delta: float
    kind: GuaranteeKind
    requires_exact_oracle: bool
    source: str
    neighbouring: str = REPLACE_ONE
    holds: bool = True
    notes: str = ""
    numerics: str = field(default="idealized")
    diagnostics_released: bool = False
    calibration: str = ""

    def __post_init__(self) -> None:
        if not (self.epsilon > 0):  # also rejects NaN
            raise ValueError(f"epsilon must be > 0, got {self.epsilon!r}")
        if not (0 <= self.delta < 1):
            raise ValueError(f"delta must be in [0, 1), got {self.delta!r}")
        kind = GuaranteeKind(self.kind)
        object.__setattr__(self, "kind", kind)
        if kind is GuaranteeKind.PURE and self.delta != 0:
            raise ValueError("a pure guarantee has delta = 0")
        if kind is GuaranteeKind.APPROXIMATE and self.delta == 0:
            raise ValueError("an approximate guarantee has delta > 0; use kind='pure'")

    @classmethod
    def pure(cls, epsilon: float, *, source: str, requires_exact_oracle: bool = False,
             **fields: Any) -> PrivacyGuarantee:
        """A pure ``epsilon``-DP statement (``delta = 0``) proven in ``source``.

        >>> PrivacyGuarantee.pure(0.5, source="Laplace mechanism").describe()
        '0.5-DP (pure), replace-one neighbours; Laplace mechanism'
        """
        return cls(epsilon=epsilon, delta=0.0, kind=GuaranteeKind.PURE,
                   requires_exact_oracle=requires_exact_oracle, source=source, **fields)

    @classmethod
    def approximate(cls, epsilon: float, delta: float, *, source: str,
                    requires_exact_oracle: bool = False, **fields: Any) -> PrivacyGuarantee:
        """An ``(epsilon, delta)``-DP statement (``0 < delta < 1``) proven in ``source``.

        >>> PrivacyGuarantee.approximate(1.0, 1e-6, source="Gaussian mechanism").describe()
        '(1, 1e-06)-DP, replace-one neighbours; Gaussian mechanism'
        """
        return cls(epsilon=epsilon, delta=delta, kind=GuaranteeKind.APPROXIMATE,
                   requires_exact_oracle=requires_exact_oracle, source=source, **fields)

    @classmethod
    def ex_post(cls, epsilon: float, *, source: str, delta: float = 0.0,
                requires_exact_oracle: bool = False, **fields: Any) -> PrivacyGuarantee:
        """An ex-post loss ``epsilon`` of the realised output (``inf`` when unbounded).

        >>> PrivacyGuarantee.ex_post(0.3, source="AboveThreshold").describe()
        'ex-post loss 0.3, replace-one neighbours; AboveThreshold'
        """
        return cls(epsilon=epsilon, delta=delta, kind=GuaranteeKind.EX_POST,
                   requires_exact_oracle=requires_exact_oracle, source=source, **fields)

    @property
    def is_pure(self) -> bool:
        return self.kind is GuaranteeKind.PURE

    def not_holding(self, reason: str) -> PrivacyGuarantee:
        """The same statement, marked as *not* holding for this release."""
        note = f"{self.notes}; " if self.notes else ""
        return replace(self, holds=False, notes=f"{note}GUARANTEE DOES NOT HOLD: {reason}")

    def with_diagnostics_released(self) -> PrivacyGuarantee:
        """The same statement, flagged: non-private diagnostics were released alongside."""
        return replace(self, diagnostics_released=True)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = str(self.kind)
        return d

    @classmethod
    def from_dict(cls, d: Any, what: str = "guarantee") -> PrivacyGuarantee:
        """The guarantee :meth:`to_dict` wrote, read strictly: exactly its fields, each with
        its JSON type (numbers finite, never a bool), ``epsilon > 0``, ``delta`` in [0, 1),
        a known kind, a non-empty source and neighbouring relation.  ValueError naming
        ``what`` and the field otherwise (a saved file is never repaired or guessed).

        >>> g = PrivacyGuarantee.pure(0.5, source="Laplace mechanism")
        >>> PrivacyGuarantee.from_dict(g.to_dict()) == g
        True
        """
        if not isinstance(d, dict):
            raise ValueError(f"{what} must be a JSON object")
        missing, extra = sorted(set(_FIELD_TYPES) - set(d)), sorted(set(d) - set(_FIELD_TYPES))
        if missing or extra:
            raise ValueError(f"{what} must have exactly the fields {sorted(_FIELD_TYPES)} "
                             f"(missing {missing}, unknown {extra})")
        for key, typ in _FIELD_TYPES.items():
            v = d[key]
            if typ is float:
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise ValueError(f"{what} '{key}' must be a number, got {type(v).__name__}")
                if not math.isfinite(v):
                    raise ValueError(f"{what} '{key}' must be finite")
            elif not isinstance(v, typ):
                raise ValueError(f"{what} '{key}' must be "
                                 f"{'true or false' if typ is bool else 'a string'}, got "
                                 f"{type(v).__name__}")
        if d["kind"] not in {str(k) for k in GuaranteeKind}:
            raise ValueError(f"{what} 'kind' must be one of {[str(k) for k in GuaranteeKind]}")
        if not d["epsilon"] > 0:
            raise ValueError(f"{what} 'epsilon' must be > 0")
        if not 0 <= d["delta"] < 1:
            raise ValueError(f"{what} 'delta' must be in [0, 1)")
        if not d["source"].strip() or not d["neighbouring"].strip():
            raise ValueError(f"{what} 'source' and 'neighbouring' must not be empty")
        fields: dict[str, Any] = {k: (float(v) if _FIELD_TYPES[k] is float else v)
                                  for k, v in d.items()}
        return cls(**fields)

    def describe(self) -> str:
        """One line for humans."""
        if self.kind is GuaranteeKind.PURE:
            loss = f"{self.epsilon:g}-DP (pure)"
        elif self.kind is GuaranteeKind.APPROXIMATE:
            loss = f"({self.epsilon:g}, {self.delta:.3g})-DP"
        else:
            loss = f"ex-post loss {self.epsilon:g}" + (
                f", delta {self.delta:.3g}" if self.delta else ""
            )
        oracle = "; assumes an exact oracle" if self.requires_exact_oracle else ""
        status = "" if self.holds else " [DOES NOT HOLD]"
        if self.diagnostics_released:
            status += " [+ non-private diagnostics released, not covered]"
        return f"{loss}, {self.neighbouring} neighbours{oracle}; {self.source}{status}"

    def in_plain_words(self) -> str:
        """One sentence for a reader who does not know differential privacy."""
        if not self.holds:
            return ("No privacy promise holds for this output (see the guarantee's notes): do "
                    "not publish it.")
        if math.isinf(self.epsilon):
            return "No privacy promise: the privacy loss of this output is unbounded."
        if self.epsilon < 700:
            factor = math.exp(self.epsilon)
            shown = (f"{factor:,.0f}" if 100 <= factor < 1e9 else f"{factor:.3g}")
            shown += f" (e^epsilon, epsilon = {self.epsilon:.3g})"
        else:  # e^epsilon beyond (or near) what a float holds: its power of ten instead
            shown = (f"e^epsilon (epsilon = {self.epsilon:.3g}), about "
                     f"10^{self.epsilon / math.log(10):,.0f}: astronomically large, so in "
                     "practice no protection at all")
        k = group_size(self.neighbouring)
        who = ("whether any one person's record was in the training data (or replaced by "
               "another)" if k == 1 else
               f"whether any one person's records (up to {k} of them) were in the training "
               "data (or replaced by others)")
        core = (f"Whatever anyone does with this output, it changes the odds of any "
                f"conclusion about {who} by at most a factor of {shown}")
        if self.kind is GuaranteeKind.APPROXIMATE or self.delta:
            core += f", except with probability at most delta = {self.delta:.2g}"
        if self.kind is GuaranteeKind.EX_POST:
            core += (" -- an ex-post loss: this epsilon was measured for this output after "
                     "checking its accuracy, not fixed in advance")
        if self.requires_exact_oracle:
            core += ("; this relies on the solver's answer being the exact optimum, which was "
                     "certified")
        return core + "."

    def __str__(self) -> str:
        return self.describe()


#: The fields of :meth:`PrivacyGuarantee.to_dict` and their JSON types.
_FIELD_TYPES: dict[str, type] = {
    "epsilon": float, "delta": float, "kind": str, "requires_exact_oracle": bool,
    "source": str, "neighbouring": str, "holds": bool, "notes": str, "numerics": str,
    "diagnostics_released": bool, "calibration": str,
}
