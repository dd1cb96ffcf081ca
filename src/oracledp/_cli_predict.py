"""``oracledp predict`` and ``oracledp evaluate``: a saved model applied to a table.

Both are post-processing of the released model (no privacy cost); ``evaluate`` reads your test
labels and is not private.  ``predict`` streams: it checks every row in a first pass that writes
nothing, then encodes, scores and writes a chunk of rows at a time, in memory that does not grow
with the table.  Refusals are one ``error: ...`` line on stderr with exit code 2, never a record
value or a row.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from oracledp._cli_table import (
    _SEP,
    _clipping_on_stderr,
    _fail,
    _read_table,
    _reading_or_failing,
    _warn,
)
from oracledp._errors import OracleDPError

#: ``oracledp.synth._table_synthesizer.MODEL_FILE`` (the file `synth fit` writes), spelt here
#: so that predict does not import the synthesizer.
SYNTH_MODEL_FILE = "synth-model.json"


def _saved_model_and_table(model_dir: Path, data: Path, sep: str,
                           with_target: bool) -> tuple[Any, Any]:
    """The model saved by `oracledp fit` and DATA read (file-level checks only; the values
    are checked when encoded, by the prediction policy)."""
    saved = _saved_model(model_dir)
    return saved, _read_table(data, saved.schema, sep, with_target=with_target, check=False)


def _saved_model(model_dir: Path) -> Any:
    """The model saved by `oracledp fit` (exit 2 if it cannot be loaded)."""
    from oracledp.tabular import load_model

    if (model_dir.is_dir() and not (model_dir / "model.json").exists()
            and (model_dir / SYNTH_MODEL_FILE).exists()):
        _fail(f"{model_dir} holds {SYNTH_MODEL_FILE}, a synthetic-data model written by "
              "`oracledp synth fit`, not a classifier: `oracledp synth sample "
              f"{model_dir} --rows N` draws records from it (predict and evaluate take a "
              "directory written by `oracledp fit`)")
    try:
        return load_model(model_dir)
    except (OracleDPError, ValueError) as exc:
        _fail(str(exc))


def _scores(saved: Any, df: Any, data: Path, strict: bool) -> Any:
    """The saved model's scores on DATA: strict refuses values outside the training schema,
    otherwise the prediction policy encodes them and one warning counts them."""
    from oracledp.tabular import describe_adjusted

    try:
        with _clipping_on_stderr():
            if strict:
                X = saved.schema.encode(df)
            else:
                X, adjusted = saved.schema.encode_for_prediction(df, warn=False)
                if adjusted:
                    _warn(describe_adjusted(adjusted, len(df), strict_hint="pass --strict"))
    except (OracleDPError, ValueError) as exc:
        _fail(f"{data}: {exc}")
    return X @ saved.coef + saved.intercept


def _score_column(saved: Any, decision: Any) -> Any:
    """``predict --scores``: for the logistic models (dpsgd, opsamp, accuracy-first) the
    probability of the second label, ``sigmoid(decision)``; for the 0/1-loss halfspaces the
    decision function itself.  Post-processing of the released model: no privacy cost."""
    from scipy.special import expit

    from oracledp.tabular._model_file import LOGISTIC_MODELS

    return expit(decision) if saved.predictor_type in LOGISTIC_MODELS else decision


def _roc_auc(y: Any, decision: Any, positive: str) -> float | None:
    """ROC AUC of the scores against the labels (``positive`` the second label); None when
    the labels are of one class only (the AUC is not defined)."""
    from sklearn.metrics import roc_auc_score

    truth = y == positive
    if truth.all() or not truth.any():
        return None
    return float(roc_auc_score(truth, decision))


_STRICT = typer.Option("--strict", help="Refuse rows with values outside the training schema "
                                        "instead of clipping numbers to its bounds and "
                                        "encoding unknown levels as all zeros (columns the "
                                        "schema declares \"out_of_bounds\": \"clip\" are "
                                        "still clipped, as in the fit).")


def predict_table(
    model_dir: Annotated[Path, typer.Argument(help="Directory written by `oracledp fit`.")],
    data: Annotated[Path, typer.Argument(help="CSV or Parquet with the schema's feature columns.")],
    sep: Annotated[str, _SEP] = ",",
    strict: Annotated[bool, _STRICT] = False,
    scores: Annotated[
        bool, typer.Option("--scores", help="Add a column `score`: for opdisc, rspm and "
                                            "gaussian-rspm the decision function <x, w> (> 0 "
                                            "predicts the +1 label, the second in sorted "
                                            "order); for dpsgd, opsamp and accuracy-first the "
                                            "logistic model's probability of that label.")
    ] = False,
) -> None:
    """Print one predicted label per row of DATA as CSV (column `prediction`, and `score`
    with --scores) on stdout: post-processing of the released model, no privacy cost.

    Streamed in bounded memory: a first pass reads and checks every row and writes nothing
    (a refused table prints nothing on stdout); a second pass encodes, scores and writes the
    rows a chunk at a time."""
    import pandas as pd

    from oracledp.tabular import describe_adjusted
    from oracledp.tabular._chunks import ChunkedEncoder

    saved = _saved_model(model_dir)
    encoder = ChunkedEncoder(saved.schema, strict)
    for chunk in _chunks(data, saved.schema, sep):  # 1. check every row; nothing written
        encoder.add(chunk)
    try:
        with _clipping_on_stderr():
            adjusted = encoder.finish()
    except (OracleDPError, ValueError) as exc:
        _fail(f"{data}: {exc}")
    if adjusted:
        _warn(describe_adjusted(adjusted, encoder.n_rows, strict_hint="pass --strict"))
    header = True
    for chunk in _chunks(data, saved.schema, sep):  # 2. score and write, chunk by chunk
        decision = encoder.encode(chunk) @ saved.coef + saved.intercept
        columns = {"prediction": saved.labels_of_scores(decision)}
        if scores:
            columns["score"] = _score_column(saved, decision)
        typer.echo(pd.DataFrame(columns).to_csv(index=False, header=header), nl=False)
        header = False


def _chunks(data: Path, schema: Any, sep: str) -> Iterator[Any]:
    """DATA's rows in chunks (:func:`oracledp.tabular._chunks.read_chunks`), a file-level
    refusal as ``_read_table`` words it."""
    from oracledp.tabular._chunks import read_chunks

    with _reading_or_failing(data) as report:
        yield from read_chunks(data, schema, sep=sep, with_target=False, verbose=report)


def evaluate_table(
    model_dir: Annotated[Path, typer.Argument(help="Directory written by `oracledp fit`.")],
    data: Annotated[Path, typer.Argument(help="Labelled test table (CSV or Parquet).")],
    sep: Annotated[str, _SEP] = ",",
    strict: Annotated[bool, _STRICT] = False,
) -> None:
    """Accuracy and ROC AUC of a saved model on DATA (NON-private: it reads your test labels)."""
    saved, df = _saved_model_and_table(model_dir, data, sep, with_target=True)
    try:
        y = saved.schema.labels_of(df)
    except (OracleDPError, ValueError) as exc:
        _fail(f"{data}: {exc}")
    decision = _scores(saved, df, data, strict)
    acc = float((saved.labels_of_scores(decision) == y).mean())
    auc = _roc_auc(y, decision, saved.classes[1])
    console = Console()
    console.print(f"accuracy {acc:.4f}{'' if auc is None else f', ROC AUC {auc:.4f}'} on "
                  f"{len(y):,} records of {data}", markup=False)
    majority = float(max((y == c).mean() for c in saved.classes))
    console.print(f"  majority label rate: {majority:.4f} (what always predicting the more "
                  "common label scores)", markup=False)
    if auc is None:
        console.print(f"  ROC AUC: not defined, every record of {data} has the same label (it "
                      "needs records of both labels)", markup=False)
    measured = "the accuracy is" if auc is None else "the accuracy and the AUC are"
    console.print(f"  non-private evaluation on your test data: {measured} computed exactly "
                  "and not covered by the model's privacy guarantee", markup=False)
    console.print(f"  model: {saved.model_label}; guarantee of the training: "
                  f"{saved.guarantee.describe()}", markup=False, highlight=False)
    if saved.schema.clipping_note():
        console.print(f"  note: {saved.schema.clipping_note()}", markup=False, highlight=False)
    if saved.schema.records_per_person > 1:
        console.print(f"  per person ({saved.schema.records_per_person} records): "
                      f"{saved.guarantee_per_person.describe()}", markup=False,
                      highlight=False)

