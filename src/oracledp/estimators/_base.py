"""Pieces shared by the binary private classifiers."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import Tags
from sklearn.utils.multiclass import type_of_target

from oracledp.errors import BoundsViolation


def map_binary_labels(y: NDArray[Any], declared: Any, name: str,
                      ) -> tuple[NDArray[Any], NDArray[np.int8]]:
    """The explicit label mapping of every binary estimator: (classes_, y in {-1, +1}).

    ``declared`` is the public label set (two labels; sorted, the first maps to -1),
    or None to read it from ``y`` (which treats the label set of the training data as
    public and refuses a y with one class).  Labels outside a declared set raise
    BoundsViolation; more than two classes, or one class without a declaration, ValueError.
    """
    if declared is not None:
        classes = np.asarray(declared)
        if classes.ndim != 1 or len(classes) != 2 or classes[0] == classes[1]:
            raise ValueError(f"classes must list exactly two distinct labels, got {declared!r}")
        classes = np.sort(classes)
        inside = np.isin(y, classes)
        if not inside.all():
            extra = np.unique(y[~inside])[:5].tolist()
            raise BoundsViolation(
                f"y holds labels {extra} outside the declared classes {classes.tolist()}"
            )
        y_idx = np.searchsorted(classes, y)
    else:
        classes, y_idx = np.unique(y, return_inverse=True)
    if len(classes) > 2:
        y_type = type_of_target(y, input_name="y")
        shown = ", ".join(repr(c) for c in classes[:5].tolist())
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type} "
            f"({len(classes)} classes: {shown}{', ...' if len(classes) > 5 else ''}). "
            f"{name} learns one linear classifier; reduce y to two classes first."
        )
    if len(classes) < 2:
        raise ValueError(
            f"{name} needs exactly 2 classes in y, but y has 1 class ({classes[0]!r}); "
            "a classifier cannot be trained on one class (or pass classes=... to declare "
            "the label set)."
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
