"""Pieces shared by the binary private classifiers."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import Tags
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from oracledp.errors import BoundsViolation

#: What replaces a record value that a third-party message would have shown.
_HIDDEN = "<value not shown: it is data>"


def scrub_message(message: str) -> str:
    """A third-party (numpy, scikit-learn) error message without the record values it quotes.

    numpy says ``could not convert string to float: '<value>'``; scikit-learn appends
    ``array=<the data>`` to its shape errors and the whole array to ``Complex data not
    supported``.  Those parts are replaced by a placeholder; the rest (the rule) is kept.
    """
    text = str(message)
    if "could not convert" in text:
        head = text.split("could not convert", 1)[0]
        return (f"{head}could not convert a value to a number ({_HIDDEN}); the features (and "
                "a regressor's target) must be numeric: encode text columns first (e.g. "
                "oracledp.SchemaTransformer)")
    if text.startswith("Complex data not supported"):
        return f"Complex data not supported ({_HIDDEN})"
    if "array=" in text:
        head, rest = text.split("array=", 1)
        hint = rest[rest.index("Reshape"):] if "Reshape" in rest else ""
        return " ".join(f"{head.strip()} ({_HIDDEN}) {hint}".split())
    return text


def validate_private_data(estimator: Any, *args: Any, **kwargs: Any) -> Any:
    """scikit-learn's ``validate_data``, whose refusals never quote a record value.

    Same arguments and result; a ``ValueError``/``TypeError`` whose message would show
    data (see :func:`scrub_message`) is raised again, same type, with the values removed
    and without the original exception attached.
    """
    try:
        return validate_data(estimator, *args, **kwargs)
    except (TypeError, ValueError) as exc:
        clean = scrub_message(str(exc))
        if clean == str(exc):
            raise
        raise type(exc)(clean) from None


def map_binary_labels(y: NDArray[Any], declared: Any, name: str,
                      ) -> tuple[NDArray[Any], NDArray[np.int8]]:
    """The explicit label mapping of every binary estimator: (classes_, y in {-1, +1}).

    ``declared`` is the public label set (two labels; sorted, the first maps to -1),
    or None to read it from ``y`` (which treats the label set of the training data as
    public and refuses a y with one class).  Labels outside a declared set raise
    BoundsViolation; more than two classes, or one class without a declaration, ValueError.
    The messages state the rule and the declared (public) labels only: never a label read
    from ``y``, how many there are, or where they are (those are data).
    """
    if declared is not None:
        classes = np.asarray(declared)
        if classes.ndim != 1 or len(classes) != 2 or classes[0] == classes[1]:
            raise ValueError(f"classes must list exactly two distinct labels, got {declared!r}")
        classes = np.sort(classes)
        inside = np.isin(y, classes)
        if not inside.all():
            raise BoundsViolation(
                f"y holds labels outside the declared classes {classes.tolist()} (the labels "
                "are not shown: they are data); map or remove them with a public rule first"
            )
        y_idx = np.searchsorted(classes, y)
    else:
        classes, y_idx = np.unique(y, return_inverse=True)
    if len(classes) > 2:
        y_type = type_of_target(y, input_name="y")
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type}: "
            f"y holds more than two classes (not shown: they are data). {name} learns one "
            "linear classifier; reduce y to two classes first (or pass classes=... to "
            "declare the two labels)."
        )
    if len(classes) < 2:
        raise ValueError(
            f"{name} needs exactly 2 classes in y, but y has 1 class (not shown: it is "
            "data); a classifier cannot be trained on one class (or pass classes=... to "
            "declare the label set)."
        )
    return classes, np.where(np.ravel(y_idx) == 1, 1, -1).astype(np.int8)


class BinaryClassifierTags:
    """scikit-learn tags of the private linear classifiers: binary, dense, no NaN."""

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        return tags
