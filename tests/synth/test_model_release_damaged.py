"""A truncated or corrupt ``release.npz`` in a saved synthesizer is a damaged model.

``TableSynthesizer.load`` reported a missing ``release.npz`` or a broken
``synth-model.json`` as a damaged model (:class:`~oracledp._errors.ModelFileError`), but a
truncated or corrupt archive escaped as a traceback (``zipfile.BadZipFile``, ``EOFError``,
``NotImplementedError`` from a mangled zip header).

A ``release.npz`` changed after saving but still a valid archive (one float of a
log-potential rewritten, the zip CRC-32 recomputed) loaded and sampled the changed model
silently, and a flipped encryption flag in the zip directory escaped as a RuntimeError:
``synth-model.json`` now records the SHA-256 of ``release.npz`` (format version 2), checked
before any array is read; a file without it is refused.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._cli import app
from oracledp._errors import ModelFileError
from oracledp.datasets import table_schema
from oracledp.synth import TableSynthesizer
from oracledp.synth._table_synthesizer import (
    JSON_SHA256,
    MODEL_FILE,
    MODEL_VERSION,
    RELEASE_FILE,
    RELEASE_SHA256,
    _json_digest,
)

ROWS = [("1st class", "adults", "man", "yes"), ("2nd class", "adults", "women", "no"),
        ("3rd class", "child", "man", "no"), ("1st class", "child", "women", "yes")] * 10


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("saved") / "m"
    frame = pd.DataFrame(ROWS, columns=["class", "age", "sex", "survived"])
    TableSynthesizer("independent", epsilon=1.0, random_state=0).fit(
        frame, table_schema("titanic")).save(out)
    return out


def _copy_with(saved: Path, tmp_path: Path, release: bytes) -> Path:
    out = tmp_path / "m2"
    out.mkdir()
    shutil.copy(saved / MODEL_FILE, out / MODEL_FILE)
    (out / RELEASE_FILE).write_bytes(release)
    return out


def _record_checksum(out: Path) -> None:
    """Record the SHA-256 of ``out``'s release.npz in its synth-model.json, and the JSON's
    own, as save does."""
    d = json.loads((out / MODEL_FILE).read_text())
    d["release"][RELEASE_SHA256] = hashlib.sha256((out / RELEASE_FILE).read_bytes()).hexdigest()
    d[JSON_SHA256] = _json_digest(d)
    (out / MODEL_FILE).write_text(json.dumps(d, indent=2) + "\n")


def _one_float_changed(saved: Path, tmp_path: Path) -> tuple[Path, float]:
    """A copy of ``saved`` whose release.npz is a valid archive (CRC-32 and all) with one
    float of a log-potential changed, as an edit after saving leaves it; the changed value."""
    out = _copy_with(saved, tmp_path, b"")
    with np.load(saved / RELEASE_FILE) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["factor_0"] = arrays["factor_0"].copy()
    arrays["factor_0"][0] += 3.0
    np.savez(out / RELEASE_FILE, **arrays)
    return out, float(arrays["factor_0"][0])


def _damaged(saved: Path) -> list[bytes]:
    data = (saved / RELEASE_FILE).read_bytes()
    cases = [data[:k] for k in (0, 1, 30, 100, len(data) // 2, len(data) - 1)]
    rng = random.Random(0)
    for _ in range(40):  # one flipped bit in a zip header or a CRC
        b = bytearray(data)
        i = rng.choice([j for j in range(len(b)) if data[j:j + 2] == b"PK"]) + rng.randrange(30)
        b[min(i, len(b) - 1)] ^= 1 << rng.randrange(8)
        cases.append(bytes(b))
    return cases


def test_a_truncated_or_corrupt_release_is_a_damaged_model(saved: Path, tmp_path: Path
                                                           ) -> None:
    assert len(TableSynthesizer.load(saved).sample(5, random_state=0)) == 5
    for k, release in enumerate(_damaged(saved)):
        where = tmp_path / str(k)
        where.mkdir()
        out = _copy_with(saved, where, release)
        try:  # some flipped bits leave a readable archive: then it loads
            TableSynthesizer.load(out)
        except ModelFileError as exc:
            assert "the saved model is damaged" in str(exc)


@pytest.mark.parametrize("cut", [0, 100])
def test_the_reported_truncation(saved: Path, tmp_path: Path, cut: int) -> None:
    out = _copy_with(saved, tmp_path, (saved / RELEASE_FILE).read_bytes()[:cut])
    with pytest.raises(ModelFileError, match=r"damaged.*release\.npz is truncated or corrupt"):
        TableSynthesizer.load(out)


def test_a_missing_array_is_a_damaged_model(saved: Path, tmp_path: Path) -> None:
    out = _copy_with(saved, tmp_path, b"")
    with np.load(saved / RELEASE_FILE) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays.pop(sorted(arrays)[-1])
    np.savez(out / RELEASE_FILE, **arrays)
    with pytest.raises(ModelFileError, match="the saved model is damaged"):
        TableSynthesizer.load(out)
    _record_checksum(out)  # the archive as recorded: the missing array itself is refused
    with pytest.raises(ModelFileError, match=r"the saved model is damaged.*factor_3"):
        TableSynthesizer.load(out)


def test_the_command_line_says_one_error_line(runner, saved: Path, tmp_path: Path) -> None:
    out = _copy_with(saved, tmp_path, (saved / RELEASE_FILE).read_bytes()[:100])
    res = runner.invoke(app, ["synth", "sample", str(out), "--rows", "5"],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert "the saved model is damaged" in res.stderr and "Traceback" not in res.output
    assert json.loads((out / MODEL_FILE).read_text())  # the JSON itself is intact


_CHANGED = (r"the saved model is damaged \(release\.npz is truncated or corrupt, or was changed "
            r"after saving: its SHA-256 is not the one synth-model\.json records\)$")


def test_a_release_changed_after_saving_is_refused(saved: Path, tmp_path: Path) -> None:
    out, value = _one_float_changed(saved, tmp_path)
    with np.load(out / RELEASE_FILE) as npz:  # a readable archive: zip's CRC-32 cannot tell
        assert npz["factor_0"][0] == value
    with pytest.raises(ModelFileError, match=_CHANGED) as exc:
        TableSynthesizer.load(out)
    assert str(exc.value).startswith(f"{out}: ") and repr(value) not in str(exc.value)


def test_every_flipped_bit_of_the_release_is_refused(saved: Path, tmp_path: Path) -> None:
    """One bit flipped in release.npz (array data, zip headers, CRCs, directory): always
    the damaged-model error, never a model that loads or another exception (the encryption
    flag of a directory entry raised RuntimeError)."""
    data = (saved / RELEASE_FILE).read_bytes()
    out = _copy_with(saved, tmp_path, data)
    flags = [m.start() + 8 for m in re.finditer(b"PK\x01\x02", data)]  # directory entries
    assert flags
    for i in sorted({*range(0, len(data), 7), *flags}):
        b = bytearray(data)
        b[i] ^= 1
        (out / RELEASE_FILE).write_bytes(bytes(b))
        with pytest.raises(ModelFileError, match=_CHANGED):
            TableSynthesizer.load(out)


def test_the_checksum_is_recorded_and_required(saved: Path, tmp_path: Path) -> None:
    d = json.loads((saved / MODEL_FILE).read_text())
    assert d["format_version"] == MODEL_VERSION == 3
    assert d[JSON_SHA256] == _json_digest(d)
    assert (d["release"][RELEASE_SHA256]
            == hashlib.sha256((saved / RELEASE_FILE).read_bytes()).hexdigest())
    for edit, says in ((lambda d: d["release"].pop(RELEASE_SHA256),
                        "damaged (synth-model.json records no SHA-256 of release.npz)"),
                       (lambda d: d["release"].update({RELEASE_SHA256: None}),
                        "damaged (synth-model.json records no SHA-256 of release.npz)"),
                       (lambda d: d["release"].update({RELEASE_SHA256: "0" * 64}), "damaged"),
                       (lambda d: d.update(format_version=1),  # before the checksum
                        "unsupported format_version 1 (this oracledp reads version 3; "
                        "fit the model again)")):
        where = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
        where.mkdir()
        out = _copy_with(saved, where, (saved / RELEASE_FILE).read_bytes())
        doc = json.loads((out / MODEL_FILE).read_text())
        edit(doc)
        doc[JSON_SHA256] = _json_digest(doc)  # the JSON's own digest made to match the edit
        (out / MODEL_FILE).write_text(json.dumps(doc))
        with pytest.raises(ModelFileError, match=re.escape(says)):
            TableSynthesizer.load(out)


@pytest.mark.parametrize("edit", [
    lambda d: d["guarantee"].update(epsilon=0.01),  # a stronger guarantee than was fitted
    lambda d: d["guarantee"].update(holds=False),
    lambda d: d.update(method="mwem"),
    lambda d: d["params"].update(epsilon=0.01),
    lambda d: d.update(n=5),
    lambda d: d.pop(JSON_SHA256),
])
def test_a_hand_edited_model_file_is_refused(saved: Path, tmp_path: Path, edit) -> None:
    # Before format 3 each of these loaded, and `synth sample` printed the edited guarantee
    # (the fixture's method is pure: its file has no zcdp_rho to edit).
    out = _copy_with(saved, tmp_path, (saved / RELEASE_FILE).read_bytes())
    doc = json.loads((out / MODEL_FILE).read_text())
    before = json.dumps(doc, sort_keys=True)
    edit(doc)
    assert json.dumps(doc, sort_keys=True) != before  # an entry of the file changed
    (out / MODEL_FILE).write_text(json.dumps(doc, indent=1))
    with pytest.raises(ModelFileError, match="was changed after it was saved"):
        TableSynthesizer.load(out)


def test_the_json_digest_ignores_layout_only(saved: Path, tmp_path: Path) -> None:
    # Re-indented or re-ordered, the same entries still load (the digest is of the content).
    out = _copy_with(saved, tmp_path, (saved / RELEASE_FILE).read_bytes())
    doc = json.loads((out / MODEL_FILE).read_text())
    (out / MODEL_FILE).write_text(json.dumps(dict(reversed(list(doc.items())))))
    assert TableSynthesizer.load(out).guarantee_ == TableSynthesizer.load(saved).guarantee_


@pytest.mark.parametrize("command", ["sample", "evaluate"])
def test_the_command_line_refuses_a_changed_release(runner, saved: Path, tmp_path: Path,
                                                    command: str) -> None:
    out, value = _one_float_changed(saved, tmp_path)
    (tmp_path / "d.csv").write_text("class,age,sex,survived\n")
    args = (["synth", "sample", str(out), "--rows", "5", "--seed", "0"] if command == "sample"
            else ["synth", "evaluate", str(tmp_path / "d.csv"), str(tmp_path / "d.csv"),
                  "--model", str(out)])
    res = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and "Traceback" not in res.output
    assert res.stderr.count("\n") == 1 and re.fullmatch(
        f"error: {re.escape(str(out))}: {_CHANGED[:-1]}\n", res.stderr), res.stderr
    assert repr(value) not in res.stderr
