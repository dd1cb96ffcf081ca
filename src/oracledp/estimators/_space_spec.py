"""The parameter space W of the OPDisc and RSPM estimators: a declared public parameter.

``space=`` of :class:`~oracledp.estimators.OPDiscClassifier` and
:class:`~oracledp.estimators.RSPMClassifier` (and of ``make_estimator`` and
``oracledp fit --space``) takes

* ``"auto"`` (the default): the rule :func:`auto_norm2`, a function of the number of encoded
  features d, of how many of them the schema does not declare 0/1 and, for OPDisc, of n,
  epsilon and delta (public; never the data): ``||k||^2 <= min(d, 4)`` for OPDisc, lowered on
  tables with many numeric columns, then moved by its noise; for RSPM the whole box
  ``{-1, 0, 1}^d`` while it has at most 10^6 points (d <= 12), else ``||k||^2 <= 4``, lowered
  the same way with many numeric columns.  ``oracledp models`` sizes W by the same call
  (:func:`oracledp.advise_model` asks the estimator);
* ``"paper"``: the space of the ICML 2020 experiment (OPDisc: ``|k_j| <= floor(sqrt d)``,
  ``||k||_2 <= sqrt d``; RSPM: ``{-1, 0, 1}^d``), which the reproductions use;
* ``"norm2=R"`` or ``"norm2=R,bound=B"`` (or the dict ``{"norm2": R, "bound": B}``): the
  integer points with ``||w||_2^2 <= R`` (and ``|w_j| <= B``), R at most :data:`MAX_NORM2`
  (1000).  RSPM's W is always a subset
  of ``{-1, 0, 1}^d``, so its ``bound`` can only be 1.

Why the rule is small (measured on the bundled wide tables health_insurance and
doctor_visits, eps 1, 60 s limit; docs/choosing-a-model.md): OPDisc's sigma grows with
D^2 (on health_insurance 894 for the paper's W, 295 for ``||k||^2 <= 9``, 114 for
``||k||^2 <= 4``), and the exact oracle certifies the compact spaces in seconds where the
paper's W times out.  RSPM's noise (scale 2m/eps, m = 2d) does not depend on W, so a
smaller W only makes its search easier and can cost accuracy (on the bundled biopsy table,
d = 11, eps 1: 0.955 with the box, 0.862 with ``||k||^2 <= 4``): its rule keeps the box while
the box is small.  For ``d <= 4`` the rule gives exactly the paper's W for both models.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from functools import lru_cache
from typing import Any, NamedTuple

from oracledp.oracles._space import IntegerBall
from oracledp.oracles._structured_tables import count_ball

__all__ = ["AUTO_GROW_MAX", "AUTO_GROW_NOISE", "AUTO_NORM2", "AUTO_SHRINK_NOISE", "BRANCH_W_MAX",
           "MAX_NORM2", "RSPM_BOX_MAX_SIZE", "SPACE_MODELS", "auto_norm2", "check_space", "describe_space",
           "noise_share", "parameter_space", "records_space", "space_label", "space_spec",
           "with_space_note"]

#: The cap R of the ``"auto"`` rule ``||k||^2 <= min(d, R)``, per model.
AUTO_NORM2: dict[str, int] = {"opdisc": 4, "rspm": 4}

#: The largest R a ``"norm2=R"`` space may ask for: the exact computations over W (its largest
#: norm, its size, OPDisc's calibration) grow with R, so R = 10**4 ran past two minutes on a
#: two-column table and 10**12 exhausted memory.  ``"auto"`` asks for at most 12.
MAX_NORM2 = 1000

#: RSPM's ``"auto"`` keeps the whole box {-1, 0, 1}^d while it has at most this many points.
RSPM_BOX_MAX_SIZE = 10**6

#: OPDisc's ``"auto"`` W where the exact search runs over W itself (the branch-and-bound,
#: chosen when the numeric columns give more outer candidates than the structured
#: decomposition takes): the largest ``R <= min(d, 4)`` whose W has at most this many points
#: (counted exactly; docs/choosing-a-model.md, "The parameter space W").
BRANCH_W_MAX = 100_000

#: OPDisc's ``"auto"`` with n, epsilon and delta known (:func:`auto_norm2`): R is lowered
#: while OPDisc's noise scale over W is above this share of n (:func:`noise_share`).  On the
#: bundled titanic and biopsy tables (benchmarks/w_rule.py, docs/choosing-a-model.md) W with
#: ``||k||^2 <= 4`` at shares near 1 (eps 0.1) released classifiers below the majority rate,
#: ``||k||^2 <= 1`` (shares 0.18-0.33) the majority rate; at shares up to 0.25 the larger W
#: was the better one, at 0.35 on biopsy ``||k||^2 <= 3`` (share 0.25) was.
AUTO_SHRINK_NOISE = 0.3

#: ... and R is raised beyond ``min(d, 4)``, up to :data:`AUTO_GROW_MAX`, while the share stays
#: at most this (a larger W raises W's own accuracy ceiling on some tables and lowers it on
#: others: on the bundled 23- and 25-feature tables at shares near 0.01 (R = 9, eps 2) it
#: gained 0.005 on Adult and lost 0.005 on health_insurance, so the rule grows only where the
#: noise is half of that).
AUTO_GROW_NOISE = 0.005

#: The largest R the ``"auto"`` rule grows to: R = 5 at eps 2 released 9 of 9 fits on Adult,
#: health_insurance and doctor_visits (within 0.001 of R = 4); on doctor_visits (23 features,
#: 14,130 records) the default work limit certified W with ``||k||^2 <= 9`` in 1 of 6 fits at
#: eps 1 and 2, and no private release between was measured (benchmarks/w_rule.py).
AUTO_GROW_MAX = 5

#: The models whose parameter space is declared with ``space=``.
SPACE_MODELS = ("opdisc", "rspm")

_SPACE_HELP = ("space must be 'auto', 'paper', 'norm2=R' or 'norm2=R,bound=B' (R the largest "
               "squared l2 norm of w, B the largest |w_j|, both at least tau = 1 by default), "
               "or a dict {'norm2': R, 'bound': B}")


class SpaceSpec(NamedTuple):
    """A checked ``space=`` value: its kind and, for ``"norm2"``, R and B (None: not given)."""

    kind: str  # "auto", "paper" or "norm2"
    norm2: float | None = None
    bound: float | None = None


def _number(value: object, name: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"{_SPACE_HELP}; {name} must be a number, got "
                             f"{value!r}") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{_SPACE_HELP}; {name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{_SPACE_HELP}; {name} must be a finite number > 0, got {value!r}")
    return v


_ITEM = re.compile(r"^\s*(norm2|bound)\s*=\s*(\S+)\s*$")


def check_space(space: object, model: str = "opdisc") -> SpaceSpec:
    """``space`` checked (no data read, nothing drawn); one ValueError/TypeError otherwise.

    Examples
    --------
    >>> from oracledp.estimators._space_spec import check_space
    >>> check_space("norm2=9")
    SpaceSpec(kind='norm2', norm2=9.0, bound=None)
    >>> check_space({"norm2": 4, "bound": 2}).bound
    2.0
    >>> check_space("norm2=4,bound=2", model="rspm")
    Traceback (most recent call last):
    ...
    ValueError: rspm's parameter space is a subset of {-1, 0, 1}^d: its bound can only be 1, got 2
    """
    if model not in SPACE_MODELS:
        raise ValueError(f"model must be one of {', '.join(SPACE_MODELS)}, got {model!r}")
    if isinstance(space, SpaceSpec):  # already checked: its values, for this model
        space = (space.kind if space.kind != "norm2" else
                 {"norm2": space.norm2, "bound": space.bound})
    if isinstance(space, str) and space.strip() in ("auto", "paper"):
        return SpaceSpec(space.strip())
    if isinstance(space, str):
        items: dict[str, object] = {}
        for part in space.split(","):
            m = _ITEM.match(part)
            if m is None or m.group(1) in items:
                raise ValueError(f"{_SPACE_HELP}, got {space!r}")
            items[m.group(1)] = m.group(2)
    elif isinstance(space, dict):
        items = dict(space)
        if not set(items) <= {"norm2", "bound"} or not all(isinstance(k, str) for k in items):
            raise ValueError(f"{_SPACE_HELP}; the dict has unknown keys "
                             f"{sorted(map(str, set(items) - {'norm2', 'bound'}))}")
    else:
        raise TypeError(f"{_SPACE_HELP}, got {type(space).__name__}")
    if "norm2" not in items:
        raise ValueError(f"{_SPACE_HELP}: norm2 is required, got {space!r}")
    norm2 = _number(items["norm2"], "norm2")
    if norm2 > MAX_NORM2:
        raise ValueError(f"space: norm2 must be at most {MAX_NORM2} (the exact computations "
                         f"over W grow with it; 'auto' uses at most 12), got {norm2:g}")
    bound = None if items.get("bound") is None else _number(items["bound"], "bound")
    if model == "rspm" and bound is not None and bound != 1:
        raise ValueError(f"rspm's parameter space is a subset of {{-1, 0, 1}}^d: its bound can "
                         f"only be 1, got {bound:g}")
    return SpaceSpec("norm2", norm2, bound)


def auto_norm2(d: int, model: str = "opdisc", n_numeric: int | None = None, *,
               n: int | None = None, epsilon: float | None = None,
               delta: float | None = None, tau: float = 1.0) -> int:
    """The ``"auto"`` rule: the cap on ``||k||^2``, from d, the model, ``n_numeric`` and, for
    OPDisc, n, epsilon and delta.

    d is the number of encoded features and ``n_numeric`` how many of them are not declared
    0/1 columns (both public: the schema declares them; None: not known, as if the
    structured decomposition applied).  OPDisc: ``min(d, 4)`` (:data:`AUTO_NORM2`), except
    where the numeric columns give the structured decomposition more outer candidates than
    it takes (:data:`~oracledp.oracles._structured.MAX_CANDIDATES`): the exact search then
    runs over W itself, and R is lowered from ``min(d, 4)`` until W has at most
    :data:`BRANCH_W_MAX` points or the decomposition applies (d >= 60 numeric columns:
    R = 2), so that the default
    deterministic work limit certifies it (a 135-feature table: R = 4 was not certified
    within a minute at eps 2, R = 2 in about 33,000 nodes; docs/choosing-a-model.md).
    With n (the number of records, public here), epsilon and delta all given and tau = 1 (the
    default; the shares are computed for it, so with another tau the noise rule does not
    apply), OPDisc's R then
    follows its noise (:func:`noise_share`, sigma over n, a function of d, R, epsilon and
    delta): lowered, down to 1, while the share is above :data:`AUTO_SHRINK_NOISE`, and
    raised beyond ``min(d, 4)``, up to ``min(d, AUTO_GROW_MAX)``, while the share of the larger
    W stays at most :data:`AUTO_GROW_NOISE` (and the structured decomposition still applies).
    RSPM: d (the whole box {-1, 0, 1}^d) while ``3^d <= 10^6``
    (:data:`RSPM_BOX_MAX_SIZE`, d <= 12), else ``min(d, 4)``, lowered by the numeric columns as
    OPDisc's, over its W (``|k_j| <= 1``: the 135-feature stand-in with 83 numeric columns gets
    R = 2, where R = 4 was refused in 2 of 3 fits at eps 2); RSPM's noise does not grow with W,
    so n, epsilon and delta do not enter.  Nothing about the data enters.

    >>> from oracledp.estimators._space_spec import auto_norm2
    >>> [auto_norm2(d) for d in (1, 2, 3, 4, 12, 13, 100)]
    [1, 2, 3, 4, 4, 4, 4]
    >>> [auto_norm2(d, "rspm") for d in (1, 4, 9, 12, 13, 100)]
    [1, 4, 9, 12, 4, 4]
    >>> [auto_norm2(d, n_numeric=d) for d in (11, 20, 25, 40, 60, 135)]  # all numeric
    [4, 4, 3, 3, 2, 2]
    >>> auto_norm2(135, n_numeric=3)  # three numeric columns: the structured decomposition
    4
    >>> auto_norm2(135, "rspm", n_numeric=83), auto_norm2(13, "rspm", n_numeric=13)
    (2, 4)
    >>> [auto_norm2(9, n=921, epsilon=e, delta=921**-2) for e in (0.1, 0.5, 1, 2)]  # titanic
    [1, 4, 4, 4]
    >>> [auto_norm2(23, n=n, epsilon=2, delta=n**-2) for n in (4_000, 15_682, 10**6)]
    [4, 5, 5]
    """
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if model not in SPACE_MODELS:
        raise ValueError(f"model must be one of {', '.join(SPACE_MODELS)}, got {model!r}")
    if model == "rspm" and 3 ** int(d) <= RSPM_BOX_MAX_SIZE:
        return int(d)
    r = min(int(d), AUTO_NORM2[model])
    if n_numeric is not None:
        while (r > 1 and _searched_over_w(int(n_numeric), r, model)
               and count_ball(int(d), _bound(r, model), r) > BRANCH_W_MAX):
            r -= 1
    if model != "opdisc" or n is None or epsilon is None or delta is None or tau != 1.0:
        return r
    if r == min(int(d), AUTO_NORM2[model]):
        top = min(int(d), AUTO_GROW_MAX)
        while (r < top and noise_share(int(d), r + 1, n, epsilon, delta) <= AUTO_GROW_NOISE
               and (n_numeric is None or not _searched_over_w(int(n_numeric), r + 1, model))):
            r += 1
    while r > 1 and noise_share(int(d), r, n, epsilon, delta) > AUTO_SHRINK_NOISE:
        r -= 1
    return r


@lru_cache(maxsize=4096)
def noise_share(d: int, norm2: int, n: int, epsilon: float, delta: float) -> float:
    """OPDisc's noise scale sigma over W = {k in Z^d : ``||k||^2 <= norm2``, ``|k_j| <=
    isqrt(norm2)``} with tau = 1, divided by n: public quantities only (d, R, n, epsilon,
    delta; sigma as the release calibrates it with ``calibration="proven"``,
    :func:`oracledp.learners._opdisc_calibration.calibrate`).  The ``"auto"`` rule uses it only
    with tau = 1.  The objective is the count of misclassified records, so this is the
    noise against the whole table's loss.

    >>> from oracledp.estimators._space_spec import noise_share
    >>> round(noise_share(9, 4, 921, 1.0, 921**-2), 3)  # titanic, eps 1
    0.098
    """
    from oracledp.learners._opdisc_calibration import calibrate

    n = int(n)
    if n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return calibrate(epsilon, delta, _auto_ball(int(d), int(norm2)), lipschitz=1.0).sigma / n


def _auto_ball(d: int, norm2: float, tau: float = 1.0) -> IntegerBall:
    """OPDisc's ``"auto"`` W for the cap R = ``norm2``: ``||k||^2 <= R``, ``|k_j| <= isqrt(R)``."""
    return IntegerBall(d, bound=math.floor(math.sqrt(norm2)), radius=math.sqrt(norm2), tau=tau)


def _bound(r: int, model: str) -> int:
    """The largest |k_j| of the ``"auto"`` W with ``||k||^2 <= r`` (RSPM's: 1)."""
    return 1 if model == "rspm" else math.isqrt(r)


def _searched_over_w(n_numeric: int, r: int, model: str = "opdisc") -> bool:
    """Whether the default oracle searches W itself (branch-and-bound): more outer candidates
    of the structured decomposition than it takes (public: counts, nothing enumerated)."""
    from oracledp.oracles._structured import MAX_CANDIDATES

    return count_ball(n_numeric, _bound(r, model), r) > MAX_CANDIDATES


def parameter_space(space: object, d: int, *, model: str = "opdisc",
                    tau: float = 1.0, n_numeric: int | None = None, n: int | None = None,
                    epsilon: float | None = None, delta: float | None = None) -> IntegerBall:
    """W for ``space`` (see the module docstring) in d dimensions, as an ``IntegerBall``.

    A function of ``space``, d, the model, tau, the number of columns not declared 0/1
    (``n_numeric``) and, for OPDisc's ``"auto"``, n, epsilon and delta (all read by the rule
    :func:`auto_norm2`) only: public parameters.  RSPM's spaces have tau = 1 and
    ``|k_j| <= 1``.

    Examples
    --------
    >>> from oracledp.estimators._space_spec import parameter_space
    >>> w = parameter_space("auto", 12)
    >>> w.k_max, w.k_norm2_max, w.size(), w.max_norm
    (2, 4, 9993, 2.0)
    >>> p = parameter_space("paper", 12)
    >>> p.k_max, p.k_norm2_max, p.max_k_norm2  # D^2 = 12
    (3, 12, 12)
    >>> r = parameter_space("auto", 25, model="rspm")
    >>> r.k_max, r.k_norm2_max, r.size()  # {-1,0,1}^25 with at most 4 nonzero entries
    (1, 4, 222051)
    >>> parameter_space("auto", 12, model="rspm").size()  # the box: 3^12 <= 10^6
    531441
    """
    spec = check_space(space, model)
    if model == "rspm":
        if tau != 1.0:
            raise ValueError(f"rspm's parameter space has tau = 1, got {tau!r}")
        if spec.kind == "paper":
            return IntegerBall(d, bound=1, radius=math.sqrt(d))
        norm2 = auto_norm2(d, model, n_numeric) if spec.kind == "auto" else spec.norm2
        return IntegerBall(d, bound=1, radius=math.sqrt(norm2))
    if spec.kind == "paper":
        return IntegerBall(d, tau=tau)
    if spec.kind == "auto":
        return _auto_ball(d, auto_norm2(d, model, n_numeric, n=n, epsilon=epsilon, delta=delta,
                                        tau=tau), tau)
    radius = math.sqrt(spec.norm2)
    return IntegerBall(d, bound=radius if spec.bound is None else spec.bound, radius=radius,
                       tau=tau)


def space_spec(space: IntegerBall) -> str:
    """The ``"norm2=R,bound=B"`` string of W (R = tau^2 max ||k||^2, B = tau max |k_j|).

    :func:`parameter_space` of this string (with the same d and tau) is W again; the saved
    model file records it.

    >>> from oracledp.estimators._space_spec import parameter_space, space_spec
    >>> space_spec(parameter_space("auto", 12)), space_spec(parameter_space("paper", 23))
    ('norm2=4,bound=2', 'norm2=23,bound=4')
    """
    t = space.tau
    return f"norm2={t * t * space.k_norm2_max:.17g},bound={t * space.k_max:.17g}"


def describe_space(space: IntegerBall, how: str = "") -> str:
    """One line for the guarantee, the saved model and the fit summary: W, |W| and D.

    >>> from oracledp.estimators._space_spec import describe_space, parameter_space
    >>> print(describe_space(parameter_space("auto", 12), "space='auto'"))
    parameter space W = {k in Z^12 : |k_j| <= 2, ||k||^2 <= 4} (space='auto'), |W| = 9,993, D = max ||w||_2 = 2
    """
    label = f" ({how})" if how else ""
    return f"{_space_set(space)}{label}, {_space_size(space)}"


def _space_set(space: IntegerBall) -> str:
    """The first part of :func:`describe_space`: W as a set (cheap: no counting)."""
    t = "" if space.tau == 1.0 else f"{space.tau:g} "
    return (f"parameter space W = {{{t}k in Z^{space.d} : |k_j| <= {space.k_max}, ||k||^2 <= "
            f"{space.k_norm2_max}}}")


def _space_size(space: IntegerBall) -> str:
    """The last part of :func:`describe_space`: |W| and D."""
    from oracledp.learners._opdisc_calibration import space_size_bound

    size, size_how = space_size_bound(space)
    if size is None:  # pragma: no cover - IntegerBall always counts or bounds
        card = "|W| not counted"
    elif size_how == "exact":
        card = f"|W| = {size:,}" if size < 10**12 else f"|W| = {size:.4g}"
    else:
        card = f"|W| <= {size:.4g}"
    return f"{card}, D = max ||w||_2 = {space.max_norm:.6g}"


def records_space(notes: str, space: IntegerBall) -> bool:
    """Whether guarantee ``notes`` name exactly one parameter space, and it is ``space``:
    one ``"; "``-separated note that is :func:`describe_space` of ``space`` (with any ``how``).

    The set is compared first, so a note about another W is told apart without counting
    ``space``.

    >>> from oracledp.estimators._space_spec import describe_space, parameter_space
    >>> w = parameter_space("auto", 12)
    >>> records_space("certified; " + describe_space(w, "space='auto'"), w)
    True
    >>> records_space(describe_space(w), parameter_space("norm2=9", 12))
    False
    """
    found = [part for part in notes.split("; ") if part.startswith("parameter space W")]
    if len(found) != 1 or not found[0].startswith(_space_set(space)):
        return False
    rest, tail = found[0][len(_space_set(space)):], f", {_space_size(space)}"
    if not rest.endswith(tail):
        return False
    label = rest[: len(rest) - len(tail)]
    return label == "" or (label.startswith(" (") and label.endswith(")"))


def space_label(spec: SpaceSpec, d: int, model: str, n_numeric: int | None = None, *,
                n: int | None = None, epsilon: float | None = None,
                delta: float | None = None, tau: float = 1.0) -> str:
    """How W was declared, in words (for the guarantee's note)."""
    if spec.kind == "auto":
        rule = (f"||k||^2 <= min(d, {AUTO_NORM2[model]})" if model == "opdisc" else
                f"the box while 3^d <= {RSPM_BOX_MAX_SIZE:,}, else ||k||^2 <= "
                f"{AUTO_NORM2[model]}")
        r0 = auto_norm2(d, model, n_numeric)
        if r0 < min(d, AUTO_NORM2[model]) and (model == "opdisc" or 3**d > RSPM_BOX_MAX_SIZE):
            rule += (f", lowered to {r0}: with {n_numeric} numeric columns a larger W is "
                     f"searched point by point and has more than {BRANCH_W_MAX:,} points")
        r = auto_norm2(d, model, n_numeric, n=n, epsilon=epsilon, delta=delta, tau=tau)
        if r != r0:
            share = noise_share(d, r0, int(n), float(epsilon), float(delta))  # type: ignore[arg-type]
            rule += (f", {'raised' if r > r0 else 'lowered'} to {r}: OPDisc's proven sigma "
                     f"over n records is {share:.3g} of n with {r0} (lowered above "
                     f"{AUTO_SHRINK_NOISE:g}, raised while at most {AUTO_GROW_NOISE:g})")
        return f"space='auto': {rule}, d = {d}"
    if spec.kind == "paper":
        return "space='paper': the ICML 2020 experiment's W"
    return f"space={space_spec_text(spec)!r}"


def space_spec_text(spec: SpaceSpec) -> str:
    bound = "" if spec.bound is None else f",bound={spec.bound:g}"
    return f"norm2={spec.norm2:g}{bound}"


def with_space_note(guarantee: Any, description: str) -> Any:
    """The guarantee with the parameter space W (public) appended to its notes."""
    notes = f"{guarantee.notes}; {description}" if guarantee.notes else description
    return dataclasses.replace(guarantee, notes=notes)
