"""Strict JSON for the files a user hands the command line (budgets, schemas, models).

A file may be hostile or damaged; reading it must end in one clear ``ValueError``, never in a
traceback from deep inside the parser:

* not UTF-8, not JSON, or larger than :data:`MAX_BYTES` (no budget, schema or model is);
* ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON numbers);
* a key listed twice in one object (which of the two would count is a guess);
* nesting deeper than :data:`MAX_DEPTH` (Python's parser would hit its recursion limit);
* an integer of more than :data:`MAX_DIGITS` digits (no float holds it: ``float()`` would
  raise ``OverflowError``).

Floats outside the double range parse to ``inf``; every caller checks its numbers are finite.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_DIGITS", "loads", "read_text"]

#: The largest file accepted (16 MiB; a model of 10,000 features is well under 1 MiB).
MAX_BYTES = 16 * 2**20
#: The deepest nesting of arrays and objects accepted.
MAX_DEPTH = 64
#: The longest integer accepted (a double's largest finite value has 309 digits).
MAX_DIGITS = 300


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        dup = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"keys listed twice: {dup}")
    return dict(pairs)


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer of more than {MAX_DIGITS} digits")
    return int(text)


def _depth(doc: Any) -> int:
    """The deepest nesting of arrays and objects in a parsed document (an explicit stack: no
    recursion, no copy of the text)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break
            stack.extend((child, depth) for child in
                         (node.values() if isinstance(node, dict) else node))
    return deepest


def loads(text: str) -> Any:
    """Parse ``text`` strictly (see the module docstring); ValueError with the reason."""
    try:
        doc = json.loads(text, parse_constant=_no_constant, parse_int=_int,
                         object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    except RecursionError:  # deeper than Python's parser goes
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    if _depth(doc) > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    return doc


def read_text(path: str | Path) -> str:
    """The UTF-8 text of the regular file ``path``; OSError for a missing or unreadable file,
    ValueError for a file that is not one (a directory, a pipe, a device), too large, or not
    UTF-8.  A pipe is refused rather than read: reading it could block for ever."""
    p = Path(path)
    st = os.stat(p)  # FileNotFoundError / PermissionError: the caller words them
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("not a regular file")
    if st.st_size > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES // 2**20} MiB")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
