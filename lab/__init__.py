"""The lab: reproductions of the papers behind oracledp, kept beside the library.

Run from a clone, at the repository root: ``python -m lab --help``.  One sub-package per
experiment (``lab.icml2020``, ``lab.accuracy_first``, ``lab.ftpl``, ``lab.synth_adult``,
``lab.prsma_adult``), each with a ``Config`` dataclass (PRSMA on Adult: one function) and
functions returning plain records (JSON-ready dicts), its README (tables and verdicts) and
its committed records in ``results/``.  The lab imports only oracledp's public names
(``tests/test_lab_imports.py`` checks it) and is not part of the installed package.
"""
