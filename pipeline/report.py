"""The page a person looks at after a run (``dialog report ROOT``; ``dialog pipeline`` writes it after each run), and
a model card per pushed model.

One self-contained HTML file, ``ROOT/report/index.html``: each model's blessing, where it was pushed and its slice
table; its training curves (loss and dev accuracy per epoch, from the Trainer's summary); attention heat maps of a
few dev dialogs through the pushed model; the data gate's report; TFDV's own statistics view of the splits. Images
are inline, so the file can be mailed or archived alone (TFDV's view loads its Facets script from the web). Everything
is read from ML Metadata and the artifacts it points to, so the page describes the newest run, cached components
included. The model cards are Markdown (``ROOT/report/model_card_<model>.md``), and in the page too.
"""

from __future__ import annotations

import base64
import html
import io
import json
import posixpath
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data.atomic import real_directory, write_text_atomic
from models.papers import Product
from pipeline.local_runner import paths
from pipeline.summary import metadata_reader, newest_artifact, run_summary

REPORT_DIRECTORY = "report"
# What each model knows by design, for its card: the hand-chosen parts a reader must weigh its figures against.
BY_DESIGN = {
    "template": "Hand-chosen: the entity lexicon learned from the KB, a dialog-state tracker whose rules fill API "
                "calls, and the filler's named features (rating rank, attributes of the restaurant on offer, "
                "whether a value was said); each is ablated in docs/babi.md. It answers only with candidates of "
                "the corpus's candidate file.",
    "memn2n": "End-to-end memory network (Sukhbaatar et al.) as in Bordes et al.: bag-of-words memories with time "
              "and speaker features; match-type features mark KB entity types shared by the input and a candidate "
              "(the one hand-chosen part). It ranks the corpus's candidates; it cannot say anything else.",
    "embeddings": "Supervised embeddings: one bag-of-words score between the input and each candidate, no memory "
                  "attention (Bordes et al., Section 4). A baseline, not meant to serve.",
}
INTENDED_USE = ("Research on goal-oriented dialog: ranking the candidate responses of the corpus it was trained on, "
                "for the simulated restaurant, banking or movie domain of that corpus. Not for real users' requests: "
                "its KB, candidates and callers are those of the corpus.")


def _png(figure: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return _data_uri(buffer.getvalue())


def _data_uri(png: bytes) -> str:
    """A PNG inline in the page, so that the file stands alone."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def training_curves(history: Sequence[dict[str, Any]], title: str) -> str | None:
    """Loss and dev accuracy per epoch as a PNG data URI; None for fewer than two epochs, where there is no curve
    to draw (one epoch was a single dot on an axis of its own making)."""
    epochs = [row["epoch"] for row in history if "epoch" in row]
    if len(epochs) < 2:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (loss, accuracy) = plt.subplots(1, 2, figsize=(8, 2.8))
    loss.plot(epochs, [row.get("loss") for row in history], marker="o")
    loss.set(title=f"{title}: training loss", xlabel="epoch")
    dev = [row.get("dev_per_response_accuracy", row.get("dev")) for row in history]
    accuracy.plot(epochs, dev, marker="o", color="tab:green")
    accuracy.set(title="dev per-response accuracy (%)", xlabel="epoch")
    figure.tight_layout()
    return _png(figure)


def _training_summary(store: Any, component: str) -> dict[str, Any]:
    from models.gfile import GFILE

    run = newest_artifact(store, "ModelRun", f"{component}Trainer")
    path = run and posixpath.join(run.uri, "training_summary.json")
    if not path or not GFILE.exists(path):
        return {}
    with GFILE.open(path, "r") as handle:
        return json.loads(handle.read())


def attention_maps(model_dir: str, data: Path | None, count: int = 2) -> list[str]:
    """Heat maps of the last bot turn of the first ``count`` dev dialogs, through the pushed model."""
    if data is None or not model_dir:
        return []
    from data.layout import discover
    from models.examples import split_examples
    from models.serving.explain import explain_turns, heat_map_png
    from models.serving.ranker import SavedModelRanker

    ranker = SavedModelRanker(model_dir)
    tasks = discover(data)
    images = []
    for task in sorted(tasks)[:count]:
        if "dev" not in tasks[task].splits:
            continue
        dialog = [e for e in split_examples(tasks[task], "dev") if e.dialog_id.endswith("/0")]
        if dialog:
            turn = explain_turns(ranker, dialog[-1:])[0]
            images.append(_data_uri(heat_map_png(turn)))
    return images


def movie_attention_maps(model_dir: str, data: Path | None, count: int = 1) -> list[str]:
    """Heat maps of a Movie Dialog model's attention over its memories for the first ``count`` dev questions of
    QA and the first ``count`` questions about the recommended movie of QA+Recs (its second exchange), where the
    KB memory has the answer (each map is one row per memory, up to the model's memory size)."""
    if data is None or not model_dir:
        return []
    from data.movie.reader import discover_movie_corpus
    from models.movie.examples import MovieData
    from models.serving.explain import explain_movie_exchanges

    movies = MovieData(discover_movie_corpus(data))
    chosen = [e for task, exchange in ((1, 1), (3, 2)) if "dev" in movies.corpus.tasks.get(task, {})
              for e in [e for e in movies.examples(task, "dev") if e.exchange == exchange][:count]]
    turns = explain_movie_exchanges(model_dir, [(f"task {e.task} dev dialog {e.dialog}", e.history, e.query,
                                                 ", ".join(e.answers)) for e in chosen])
    return drawn_attention(turns)


def drawn_attention(turns: Sequence[Any]) -> list[str]:
    """Each turn's attention as a heat map (``models.serving.explain.TurnAttention``); none for a turn without
    hops (Movie Dialog's embeddings, no hops, and LSTM, no memory, have no attention to draw)."""
    from models.serving.explain import heat_map_png

    return [_data_uri(heat_map_png(turn)) for turn in turns if turn.attention.shape[0]]


def model_attention_maps(model_dir: str, data: Path | None) -> list[str]:
    """The pushed model's attention heat maps, chosen by what the model says it is (its spec): over the KB memory
    it holds and the dialog for a model with a long-term memory (Movie Dialog's), else over the dialog's lines."""
    if not model_dir:
        return []
    from models.serving.ranker import holds_long_term_memory

    if holds_long_term_memory(model_dir):
        return movie_attention_maps(model_dir, data)
    return attention_maps(model_dir, data)


def model_card(model: str, result: dict[str, Any], training: dict[str, Any]) -> str:
    """The model card in Markdown: data, training settings, slice metrics, intended use, what it knows by design."""
    rows = [f"| {name} | " + " | ".join(str(value) for value in metrics.values()) + " |"
            for name, metrics in result["slices"].items()]
    columns = list(next(iter(result["slices"].values()), {}).keys())
    trained = training.get("template_model", training)  # the template ranker's: its template model's
    config = trained.get("config") or {}
    epochs = trained.get("epochs_run") or len(trained.get("history") or []) or "?"
    return "\n".join([
        f"# Model card: {model}",
        "",
        f"- Pushed to: {result['pushed_model'] or 'not pushed'}; blessed: {result['blessed']}",
        f"- Data: tasks {training.get('tasks', '?')} of the run's corpus; evaluated on "
        f"{', '.join(result.get('evaluated_splits') or ['nothing'])} (blessed on dev only)",
        f"- Training: best epoch {trained.get('best_epoch', '?')} of {epochs} run; settings "
        f"`{json.dumps(config, sort_keys=True)}`",
        f"- Intended use: {INTENDED_USE}",
        f"- By design: {BY_DESIGN.get(model, 'see docs/')}",
        "",
        "| slice | " + " | ".join(columns) + " |",
        "| --- |" + " --- |" * len(columns),
        *rows,
        "",
    ])


def _table(slices: dict[str, dict[str, float]]) -> str:
    columns = list(next(iter(slices.values()), {}).keys())
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ["slice", *columns])
    body = "".join("<tr><td>" + html.escape(name) + "</td>" + "".join(f"<td>{row.get(c, '')}</td>" for c in columns)
                   + "</tr>" for name, row in slices.items())
    return f"<table><tr>{head}</tr>{body}</table>"


def _statistics_view(store: Any) -> str:
    artifact = newest_artifact(store, "ExampleStatistics", "StatisticsGen")
    if artifact is None:
        return "<p>No statistics in this run.</p>"
    import tensorflow_data_validation as tfdv
    from tensorflow_data_validation.utils.display_util import get_statistics_html

    splits = {split: posixpath.join(artifact.uri, f"Split-{split}", "FeatureStats.pb") for split in ("train", "eval")}
    loaded = {split: tfdv.load_stats_binary(path) for split, path in splits.items() if Path(path).is_file()}
    if not loaded:
        return "<p>No statistics in this run.</p>"
    names = list(loaded)
    view = get_statistics_html(loaded[names[0]], loaded.get(names[1]) if len(names) > 1 else None,
                               lhs_name=names[0], rhs_name=names[-1] if len(names) > 1 else "None")
    return f'<iframe class="stats" srcdoc="{html.escape(view)}"></iframe>'


def write_report(root: Path, products: Sequence[Product], data: Path | None = None,
                 summary: dict[str, Any] | None = None) -> Path:
    """Write ``ROOT/report/index.html`` and the model cards of the newest run in ``root`` (``products``: the
    models of its profile); returns the page. ``summary``: the run's :func:`~pipeline.summary.run_summary` when
    the caller already read it; ``data``: the run's corpus (dialog-bAbI files or the Movie Dialog layout), for
    attention maps."""
    located = paths(Path(root))
    store = metadata_reader(located["metadata"])
    summary = summary or run_summary(located["metadata"], products)
    components = {product.slot: product.component for product in products}
    out = Path(real_directory(root, REPORT_DIRECTORY))  # a link planted there would take the pages elsewhere
    sections = [f"<h1>dialog pipeline run</h1><p>Artifacts: {html.escape(str(located['pipeline_root']))}. "
                f"Product model: {html.escape(summary['model'])}.</p>"]
    for model, result in summary["models"].items():
        if not result["slices"] and not result["pushed_model"]:
            continue  # not in this run's profile
        training = _training_summary(store, components[model])
        card = model_card(model, result, training)
        write_text_atomic(out / f"model_card_{model}.md", card)
        history = training.get("template_model", training).get("history") or []
        curves = training_curves(history, model)
        pushed = result["pushed_model"]
        link = f'<a href="file://{html.escape(pushed)}">{html.escape(pushed)}</a>' if pushed else "not pushed"
        parts = [f'<h2 id="{model}">{html.escape(model)}</h2>',
                 f"<p class=\"verdict\">blessed: <b>{result['blessed']}</b>; pushed: {link}</p>",
                 _table(result["slices"]) if result["slices"] else "<p>Not evaluated in this run.</p>"]
        if curves:
            parts.append(f'<img alt="{model} training curves" src="{curves}">')
        maps = model_attention_maps(pushed or "", data)
        parts += [f'<img alt="{model} attention" src="{image}">' for image in maps]
        parts.append(f"<details><summary>model card</summary><pre>{html.escape(card)}</pre></details>")
        sections.append("\n".join(parts))
    gate = newest_artifact(store, "dialog.DataReport", "DialogDataGate")
    gate_path = gate and Path(gate.uri) / "data_report.json"
    if gate_path and gate_path.is_file():
        sections.append("<h2>Data gate</h2><pre>" + html.escape(gate_path.read_text()[:20000]) + "</pre>")
    sections.append("<h2>Statistics (TFDV)</h2>" + _statistics_view(store))
    seconds = ", ".join(f"{name} {value:.0f} s" for name, value in summary["component_seconds"].items())
    sections.append(f"<h2>Components</h2><p>{html.escape(seconds)}</p>")
    style = ("body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child{text-align:left}"
             "img{display:block;margin:1em 0;max-width:100%}iframe.stats{width:100%;height:600px;border:0}")
    page = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>dialog run report</title>"
            f"<style>{style}</style></head><body>{''.join(sections)}</body></html>")
    write_text_atomic(out / "index.html", page)
    return out / "index.html"
