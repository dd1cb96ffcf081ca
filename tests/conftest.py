"""Fixtures shared by the test folders (tests/ mirrors the package: tests/<subpackage>/)."""

from __future__ import annotations

import numpy as np
import pytest
import typer.testing
from typer.testing import CliRunner

from oracledp.oracles import OracleStatus
from oracledp.oracles._base import make_result

# typer's CliRunner.invoke rebuilds the whole click command tree from the app's function
# signatures on every call (about 30 ms for `oracledp`'s app; some 700 invocations in the
# default run).  The tree depends only on the app's registered commands, which no test
# changes, and click commands are reusable across invocations (each gets a fresh Context):
# build it once per app.  Apps are kept alive with their command, so ids are never reused.
_build_command = typer.testing._get_command
_commands: dict[int, tuple[object, object]] = {}


def _cached_command(app: typer.Typer) -> object:
    hit = _commands.get(id(app))
    if hit is None:
        hit = _commands[id(app)] = (app, _build_command(app))
    return hit[1]


typer.testing._get_command = _cached_command


class UncertifiedOracle:
    """An oracle that stops at its time limit without a certificate (k = e_1)."""

    name = "uncertified"

    def solve(self, problem, eta):
        k = np.zeros(problem.d, dtype=np.int64)
        k[0] = 1
        obj = float(problem.objective_k(k, eta)[0])
        return make_result(problem, eta, k, obj - 1.0, OracleStatus.TIME_LIMIT, 0.5, self.name)


@pytest.fixture
def uncertified_oracle() -> UncertifiedOracle:
    return UncertifiedOracle()


@pytest.fixture
def runner() -> CliRunner:
    """A typer test runner for the ``oracledp`` command line (tests/cli, tests/tabular)."""
    return CliRunner()


@pytest.fixture
def short_peer_estimation(monkeypatch: pytest.MonkeyPatch) -> None:
    """MST and AIM (oracledp.synth._peers) with short Private-PGM estimations.

    For tests whose assertions do not depend on how closely the model fits the measurements
    (what the fit is given, what it is charged, the interface): the selections, noise and
    guarantee are drawn as usual; only the post-processing runs fewer iterations."""
    import functools

    from oracledp.synth import _peers

    monkeypatch.setattr(_peers, "mst", functools.partial(_peers.mst, iters=100))
    monkeypatch.setattr(_peers, "aim", functools.partial(_peers.aim, round_iters=20,
                                                         final_iters=50))
