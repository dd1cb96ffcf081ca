"""Names a package loads on first access (PEP 562), so importing it stays light."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from typing import Any


def lazy_attributes(package: str, namespace: dict[str, Any], lazy: Mapping[str, str]
                    ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``lazy`` maps a name to the module that
    defines it; the first access imports that module and stores the value in ``namespace``
    (later accesses skip the hook)."""

    def __getattr__(name: str) -> object:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(lazy))

    return __getattr__, __dir__


def by_module(groups: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{name: module}`` for :func:`lazy_attributes` from ``{module: the names it defines}``."""
    return {name: module for module, names in groups.items() for name in names}
