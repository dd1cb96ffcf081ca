"""oracledp._docstrings: shared paragraphs are filled in at import, and a bad placeholder raises."""

from __future__ import annotations

import inspect

import pytest

from oracledp import _docstrings
from oracledp._docstrings import DOCDICT, fill_doc


def test_a_placeholder_line_becomes_the_paragraph_at_its_indentation() -> None:
    @fill_doc
    def f() -> None:
        """Summary.

        Parameters
        ----------
        %(af_random_state)s
        """

    assert inspect.getdoc(f) == ("Summary.\n\nParameters\n----------\n"
                                 + DOCDICT["af_random_state"])


def test_an_unknown_name_or_an_embedded_placeholder_raises() -> None:
    def f() -> None:
        """%(no_such_fragment)s"""

    with pytest.raises(KeyError, match="no_such_fragment"):
        fill_doc(f)

    def g() -> None:
        """Text and %(af_alpha)s on one line."""

    with pytest.raises(ValueError, match="stand alone"):
        fill_doc(g)


def test_no_docstring_is_left_alone() -> None:
    def f() -> None:
        pass

    assert fill_doc(f) is f and f.__doc__ is None


def test_no_placeholder_survives_in_the_package() -> None:
    import importlib
    import pkgutil

    import oracledp

    for info in pkgutil.walk_packages(oracledp.__path__, "oracledp."):
        if info.name == "oracledp._docstrings":  # it describes the placeholders
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue  # an optional extra
        for obj in vars(module).values():
            doc = getattr(obj, "__doc__", None)
            if getattr(obj, "__module__", None) == info.name and isinstance(doc, str):
                assert _docstrings._PLACEHOLDER.search(doc) is None, info.name
