"""Docstring paragraphs shared by families of public callables, filled in at import.

A family of functions or estimators that documents a parameter (or a fitted attribute, or a
raised error) in the same words keeps that paragraph once, here, in :data:`DOCDICT`.  Each
docstring names it by a line that holds only the placeholder ``%(name)s``; the decorator
:func:`fill_doc` replaces that line, when the module is imported, by the paragraph indented
as the placeholder is.  The rendered docstring (``help()``, ``inspect.getdoc``, Sphinx) is
the full text, as if written out in place.

An unknown name, or a placeholder that does not stand alone on its line, raises at import, so
no placeholder can reach a rendered docstring.  (The idea is MNE-Python's ``fill_doc`` and
SciPy's ``doccer``; this is a smaller and stricter version.)

A fragment is written without indentation (its first line at column 0, as the numpydoc entry
starts) and without a trailing blank line.  Only paragraphs that read the same for every
member of the family belong here; a parameter that means something different in one member
is written out in that member's docstring.
"""

from __future__ import annotations

import re
import textwrap
from typing import TypeVar

__all__ = ["DOCDICT", "fill_doc"]

_T = TypeVar("_T")

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_ALONE = re.compile(r"^(?P<indent>[ ]*)%\((?P<name>\w+)\)s$")


def _fragments(**texts: str) -> dict[str, str]:
    return {name: textwrap.dedent(text).strip("\n") for name, text in texts.items()}


#: The shared paragraphs, by name (families: Accuracy-First ERM ``af_``, the exact
#: oracle learners ``exact_``, the scikit-learn estimators ``est_``, the synthesizers of
#: the PGM family ``pgm_``).
DOCDICT: dict[str, str] = _fragments(
    # --- Accuracy-First ERM: covnr, outputnr, doubling (oracledp.erm) ----------------------
    af_alpha="""
        alpha:
            Target excess empirical risk, ``L(theta) - L(theta*) <= alpha``.
        """,
    af_gamma="""
        gamma:
            Failure probability of the accuracy guarantee, in (0, 1).
        """,
    af_random_state="""
        random_state:
            Seed or numpy Generator, the only source of randomness.
        """,
    af_calibration="""
        calibration:
            ``"paper"`` (default: ``eps_0 = 16 Delta ln(2T/gamma)/alpha``) or
            ``"one-sided"`` (``eps_0 = Delta (12 ln(1/gamma) + 8 ln(T/2))/alpha``, same
            accuracy guarantee, derivation in
            :func:`oracledp.erm._sensitivity.iat_epsilon`).
        """,
    af_return_diagnostics="""
        return_diagnostics:
            Attach :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (``excess_risk``
            on the training data, ``timings``).  For research only: issues a
            :class:`~oracledp._errors.DiagnosticsWarning` and sets
            ``guarantee.diagnostics_released``.
        """,
    # the end of max_epsilon's entry, after the sentence on the cap's own loss
    af_max_epsilon_reachable="""
        (``eps_list=None``) and ``allow_no_halt=False``, a cap that leaves only levels more
        than ``THEORY_MARGIN`` (10,000) times below the theory epsilon E of ``alpha`` is
        refused with ValueError before any noise
        (:func:`~oracledp.erm._theory.check_theory_reachable`).
        """,
    af_raises_no_halt="""
        NoHaltError
            No level passed and ``allow_no_halt`` is False.
        """,
    # --- exact oracle learners: opdisc, gaussian_rspm, rspm (oracledp.learners) ------------
    exact_epsilon_delta="""
        epsilon, delta:
            Target (eps, delta); eps > 0 and 0 < delta < 1.
        """,
    exact_random_state="""
        random_state:
            Seed or Generator; the only source of randomness.
        """,
    exact_allow_uncertified="""
        allow_uncertified:
            Release an uncertified oracle answer anyway, with ``guarantee.holds = False``.
        """,
    exact_eta_separators="""
        eta:
            Test hook: the 2d separator weights instead of sampling them.  The result's
            guarantee then does not hold (the noise was not drawn by the mechanism).
        """,
    # --- scikit-learn estimators on a declared schema: OPSamp, DP-SGD ----------------------
    est_n_features="""
        n_features : int or None, default=None
            The number of features the public schema declares (``make_estimator`` passes the
            schema's); ``fit`` refuses an X of another width, before any noise.  ``None``
            accepts any width (read from X and treated as public).
        """,
    # --- synthesizers of the PGM family: aim, mst (oracledp.synth) -------------------------
    pgm_tail="""
        return_diagnostics:
            Attach wall-clock times (non-private diagnostics; flags the guarantee).
        sample_weight:
            Record counts of the rows (distinct rows): the release equals that of the
            expanded records, each counting once in the privacy analysis.
        backend:
            ``"numpy"`` (default): the junction-tree estimator of :mod:`oracledp.synth._graphical`
            (no extra needed); ``"mbi"``: Private-PGM's ``mbi`` (the ``peers`` extra, JAX).
            Estimation is post-processing: the guarantee is the same.
        """,
)


def _fill(doc: str, where: str) -> str:
    lines = []
    for line in doc.split("\n"):
        alone = _ALONE.match(line.rstrip())
        if alone is None:
            if _PLACEHOLDER.search(line):
                raise ValueError(f"docstring of {where}: a placeholder must stand alone on its "
                                 f"line: {line.strip()!r}")
            lines.append(line)
            continue
        name, indent = alone["name"], alone["indent"]
        if name not in DOCDICT:
            raise KeyError(f"docstring of {where}: no shared paragraph named {name!r} "
                           "in oracledp._docstrings.DOCDICT")
        lines.extend(indent + text if text else "" for text in DOCDICT[name].split("\n"))
    return "\n".join(lines)


def fill_doc(obj: _T) -> _T:
    """Replace each ``%(name)s`` line of ``obj``'s docstring by ``DOCDICT[name]``; return ``obj``.

    For functions and classes (a class's methods are not visited: decorate them too).  A
    docstring without placeholders is left as it is; under ``python -OO`` (no docstrings)
    nothing is done.
    """
    doc = getattr(obj, "__doc__", None)
    if doc:
        obj.__doc__ = _fill(doc, getattr(obj, "__qualname__", repr(obj)))
    return obj
