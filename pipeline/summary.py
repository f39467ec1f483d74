"""What a finished run produced: the slice table of each model's evaluation, its blessing, where it was pushed.

Read from the pipeline's ML Metadata store (the newest artifacts of each Evaluator and Pusher), so it reports the
run that just finished whether its components executed or came from the cache.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tensorflow_model_analysis as tfma
from ml_metadata.metadata_store import metadata_store
from ml_metadata.proto import metadata_store_pb2

from models.papers import Product
from pipeline.metadata_check import check_metadata

PERCENT_METRICS = ("per_response_accuracy", "per_dialog_accuracy", "hits_at_2", "hits_at_10", "hits_at_100")
# The slice table's columns for a Movie Dialog run: hits@1 (per-response), and the paper's other two k.
MOVIE_COLUMNS = ("per_response_accuracy", "hits_at_10", "hits_at_100")


def metadata_reader(metadata_path: Path) -> metadata_store.MetadataStore:
    """A read-only connection to a run's SQLite ML Metadata store (the summary and the report read, never write);
    a damaged store is a :class:`~pipeline.metadata_check.MetadataDamaged` naming it, not MLMD's traceback."""
    check_metadata(metadata_path)
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(metadata_path)
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READONLY
    return metadata_store.MetadataStore(config)


def newest_artifact(store: metadata_store.MetadataStore, type_name: str, component: str) -> Any | None:
    """The newest artifact of ``type_name`` written under ``.../<component>/...`` of the pipeline root."""
    found = [a for a in store.get_artifacts_by_type(type_name) if f"/{component}/" in a.uri
             and a.state == metadata_store_pb2.Artifact.LIVE]
    return max(found, key=lambda a: a.id, default=None)


def slice_name(slice_key: tuple) -> str:
    return ",".join(f"{column}={value.decode() if isinstance(value, bytes) else value}"
                    for column, value in slice_key) or "overall"


def raw_slice_metrics(evaluation_uri: str) -> dict[str, dict[str, float]]:
    """``{"task=babi-1": {"per_response_accuracy": 0.991, ..., "turns": n}}``: every metric as TFMA wrote it
    (fractions, unrounded), for comparisons that must be exact."""
    return {slice_name(slice_key): {name: value["doubleValue"] for name, value in outputs[""][""].items()
                                    if "doubleValue" in value}
            for slice_key, outputs in tfma.load_eval_result(evaluation_uri).slicing_metrics}


def slice_metrics(evaluation_uri: str) -> dict[str, dict[str, float]]:
    """``{"task=babi-1": {"per_response_accuracy": 99.1, ..., "turns": n}}``, accuracies in percent."""
    table: dict[str, dict[str, float]] = {}
    for name, metrics in raw_slice_metrics(evaluation_uri).items():
        row = {metric: round(100 * metrics[metric], 2) for metric in PERCENT_METRICS if metric in metrics}
        row["turns"] = int(metrics.get("turns", 0))
        table[name] = row
    return dict(sorted(table.items(), key=lambda item: (item[0] != "overall", item[0].count(","), item[0])))


def model_summary(store: metadata_store.MetadataStore, name: str) -> dict[str, Any]:
    """What the components ``name``Evaluator and ``name``Pusher wrote last."""
    evaluation = newest_artifact(store, "ModelEvaluation", f"{name}Evaluator")
    blessing = newest_artifact(store, "ModelBlessing", f"{name}Evaluator")
    pushed = newest_artifact(store, "PushedModel", f"{name}Pusher")
    blessed = bool(blessing and blessing.custom_properties["blessed"].int_value)
    is_pushed = bool(pushed and pushed.custom_properties["pushed"].int_value)
    slices = slice_metrics(evaluation.uri) if evaluation else {}
    return {"pushed_model": pushed.custom_properties["pushed_destination"].string_value if is_pushed else None,
            "blessed": blessed, "slices": slices, "evaluated_splits": evaluated_splits(slices)}


def evaluated_splits(slices: dict[str, dict[str, float]]) -> list[str]:
    """The dialog-bAbI splits an evaluation covers (its ``split=`` slices), so that an ``overall`` over dev alone
    (the quick profile's paper models) is not read as one over dev and test."""
    return sorted(name.removeprefix("split=") for name in slices if name.startswith("split=") and "," not in name)


def component_windows(store: metadata_store.MetadataStore) -> list[tuple[str, float, float]]:
    """(component, start, end) in epoch seconds for each component of the newest run, in run order, cached ones
    included (a window of ~0 s).

    The local runner runs components one after the other and MLMD stamps an execution when it is published, so
    a component's window runs from the previous component's stamp (the first: from its own creation) to its own.
    """
    newest: dict[str, Any] = {}
    for context in store.get_contexts_by_type("node"):
        executions = store.get_executions_by_context(context.id)
        if executions:
            newest[context.name.rsplit(".", 1)[-1]] = max(executions, key=lambda e: e.id)
    ordered = sorted(newest.items(), key=lambda item: item[1].last_update_time_since_epoch)
    windows = []
    previous = min((e.create_time_since_epoch for _, e in ordered), default=0) / 1000
    for name, execution in ordered:
        end = execution.last_update_time_since_epoch / 1000
        windows.append((name, previous, end))
        previous = end
    return windows


def component_seconds(store: metadata_store.MetadataStore) -> dict[str, float]:
    """Wall time of each component in the newest run (:func:`component_windows`)."""
    return {name: round(end - start, 1) for name, start, end in component_windows(store)}


def run_summary(metadata_path: Path, products: Sequence[Product]) -> dict[str, Any]:
    """The product model's result at the top level (the README's JSON contract); that of every model of the run's
    profile (``products``, the product model first) under ``models``, by slot: a model an earlier run in the same
    root trained, and this one did not, is not reported as this run's."""
    store = metadata_reader(metadata_path)
    results = {product.slot: model_summary(store, product.component) for product in products}
    first = products[0].slot
    return {"model": first, **results[first], "models": results, "component_seconds": component_seconds(store)}


def run_corpus(metadata_path: Path) -> str | None:
    """The corpus directory the newest run read (its ExampleGen's ``input_base``), None when no run is recorded."""
    store = metadata_reader(metadata_path)
    for context in store.get_contexts_by_type("node"):
        if context.name.endswith("ExampleGen"):
            executions = store.get_executions_by_context(context.id)
            if executions:
                newest = max(executions, key=lambda e: e.id)
                if "input_base" in newest.custom_properties:
                    return newest.custom_properties["input_base"].string_value
    return None


def trained(metadata_path: Path, products: Sequence[Product]) -> list[Product]:
    """Those of ``products`` whose Trainer wrote a model in this root (a quick run trains fewer than the full
    profile names)."""
    store = metadata_reader(metadata_path)
    return [p for p in products if newest_artifact(store, "Model", f"{p.component}Trainer") is not None]


def format_table(summary: dict[str, Any], columns: tuple[str, ...] = ("per_response_accuracy",
                                                                     "per_dialog_accuracy", "hits_at_10")) -> str:
    """One line per slice: each model's per-response (per-dialog) accuracy and hits@10, in percent."""
    models = summary["models"]
    names = sorted({name for result in models.values() for name in result["slices"]},
                   key=lambda n: (n != "overall", n.count(","), n))
    if not any(name.startswith("challenge=") and name != "challenge=none" for name in names):
        names = [name for name in names if "challenge=" not in name]  # no challenge sets: nothing to slice
    header = f"{'slice':<32}" + "".join(f"{m + ' ' + c.replace('_accuracy', ''):>28}" for m in models
                                        for c in columns)
    lines = [header]
    for name in names:
        cells = []
        for model in models:
            row = models[model]["slices"].get(name, {})
            cells += [f"{row[column]:>28.2f}" if column in row else f"{'-':>28}" for column in columns]
        lines.append(f"{name:<32}" + "".join(cells))
    for model, result in models.items():
        lines.append(f"{model}: blessed={result['blessed']} pushed_model={result['pushed_model']} "
                     f"evaluated on {', '.join(result.get('evaluated_splits') or ['nothing'])}")
    lines.append("component seconds: " + ", ".join(f"{name} {seconds:.0f}"
                                                   for name, seconds in summary["component_seconds"].items()))
    return "\n".join(lines)


def as_json_line(summary: dict[str, Any]) -> str:
    return json.dumps(summary, sort_keys=False)
