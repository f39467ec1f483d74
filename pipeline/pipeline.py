"""The `dialog` TFX pipeline: one definition for every orchestrator (local, Kubeflow Pipelines / Vertex AI).

DialogExampleGen -> StatisticsGen -> SchemaGen (inferred, for reference) and ImportSchemaGen (the curated schema)
-> ExampleValidator -> DialogDataGate (stops the run on bad data) -> per product of the corpus' paper
(``models.papers``; bAbI: the template ranker, MemN2N with match type, supervised embeddings; banking: the state
ranker and SMN): Trainer -> Evaluator (TFMA slices, thresholds against the last blessed model of its kind) ->
AtomicPusher. A Movie Dialog corpus has its own ExampleGen and Trainer (:func:`create_movie_pipeline`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import tensorflow_data_validation as tfdv
import tensorflow_model_analysis as tfma
from tfx.components import Evaluator, ExampleValidator, SchemaGen, StatisticsGen
from tfx.components.schema_gen.import_schema_gen.component import ImportSchemaGen
from tfx.dsl.components.common.resolver import Resolver
from tfx.dsl.input_resolution.strategies.latest_blessed_model_strategy import LatestBlessedModelStrategy
from tfx.orchestration import pipeline as tfx_pipeline
from tfx.types import Channel, standard_artifacts

from components.atomic_pusher import AtomicPusher
from components.data_gate import DialogDataGate
from components.dialog_example_gen import SPLIT_FILES, DialogExampleGen, corpus_splits
from components.dialog_trainer import DialogTrainer
from models import papers
from models.movie.records import ANSWER_INDICES
from models.papers import Profile
from models.tf_examples import LABEL_KEY
from pipeline.configs import CURATED_SCHEMA, MOVIE_SCHEMA, PIPELINE_NAME

if TYPE_CHECKING:  # the Vertex AI client takes seconds to import: only a Vertex compile needs it
    from components.vertex_training import VertexTraining

METRICS_MODULE = "components.dialog_metrics"
EXTRACTORS_MODULE = "components.dialog_extractors"  # TFMA's default extractors, minus three costs (its docstring)
SLICE_FEATURES: tuple[tuple[str, ...], ...] = (
    (), ("task",), ("split",), ("challenge",), ("task", "split"), ("task", "challenge"), ("split", "challenge"))
CHALLENGE = "challenge"


# The slice that blesses a model: the dev dialogs (TFX split "eval"), never a test set, which is only reported.
BLESSING_SLICE = tfma.SlicingSpec(feature_values={"split": "dev"})


def _blessing_threshold(min_accuracy: float, max_drop: float) -> tfma.MetricThreshold:
    return tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={"value": min_accuracy}),
        change_threshold=tfma.GenericChangeThreshold(direction=tfma.MetricDirection.HIGHER_IS_BETTER,
                                                     absolute={"value": -max_drop}))


def eval_config(min_accuracy: float, max_drop: float, challenges: bool = True) -> tfma.EvalConfig:
    """Per-response and per-dialog accuracy and hits@k on every slice; the threshold on the dev slice gates the
    push (the floor, and at most ``max_drop`` below the last blessed model of the same kind). Without
    ``challenges`` (a corpus with no challenge set), the slices by challenge are left out: each would repeat
    another slice, and TFMA's per-turn work grows with the slice count."""
    features = [keys for keys in SLICE_FEATURES if challenges or CHALLENGE not in keys]
    threshold = _blessing_threshold(min_accuracy, max_drop)
    metrics = [
        # Gate on all of dev, not per task: task 3 sits far below tasks 1 and 4 by nature.
        tfma.MetricConfig(class_name="DialogRankingMetrics", module=METRICS_MODULE, config='{"ks": [2, 10]}',
                          per_slice_thresholds=[tfma.PerSliceMetricThreshold(slicing_specs=[BLESSING_SLICE],
                                                                             threshold=threshold)]),
    ]
    return tfma.EvalConfig(
        model_specs=[tfma.ModelSpec(model_type="tf_generic", signature_name="serving_examples",
                                    label_key=LABEL_KEY, prediction_key="indices")],
        slicing_specs=[tfma.SlicingSpec(feature_keys=list(keys)) for keys in features],
        metrics_specs=[tfma.MetricsSpec(metrics=metrics)])


# Movie Dialog: per task and split, and per task and exchange (``turn``: Table 9's breakdown of task 3).
MOVIE_SLICES: tuple[tuple[str, ...], ...] = ((), ("task",), ("split",), ("task", "split"), ("task", "turn"))


def movie_eval_config(min_accuracy: float, max_drop: float) -> tfma.EvalConfig:
    """hits@1 (per-response accuracy), hits@10 and hits@100 of every slice, any right answer counting (the
    ``answer_indices`` label), each exchange ranked among its own candidates (``serving_examples``); the dev
    exchanges bless."""
    metric = tfma.MetricConfig(
        class_name="DialogRankingMetrics", module=METRICS_MODULE, config='{"ks": [10, 100]}',
        per_slice_thresholds=[tfma.PerSliceMetricThreshold(slicing_specs=[BLESSING_SLICE],
                                                           threshold=_blessing_threshold(min_accuracy, max_drop))])
    return tfma.EvalConfig(
        model_specs=[tfma.ModelSpec(model_type="tf_generic", signature_name="serving_examples",
                                    label_key=ANSWER_INDICES, prediction_key="indices")],
        slicing_specs=[tfma.SlicingSpec(feature_keys=list(keys)) for keys in MOVIE_SLICES],
        metrics_specs=[tfma.MetricsSpec(metrics=[metric])])


def data_checks(example_gen: Any, schema_file: str, stats_options: tfdv.StatsOptions | None = None,
                **gate: str) -> list[Any]:
    """What stands between the examples and training: StatisticsGen (with ``stats_options``), SchemaGen (inferred,
    for reference), the curated schema (ImportSchemaGen), ExampleValidator and the DialogDataGate (``gate``: its
    parameters), last."""
    statistics_gen = StatisticsGen(examples=example_gen.outputs["examples"], stats_options=stats_options)
    inferred_schema = SchemaGen(statistics=statistics_gen.outputs["statistics"], exclude_splits=["test"])
    curated_schema = ImportSchemaGen(schema_file=schema_file).with_id("CuratedSchema")
    example_validator = ExampleValidator(statistics=statistics_gen.outputs["statistics"],
                                         schema=curated_schema.outputs["schema"])
    data_gate = DialogDataGate(examples=example_gen.outputs["examples"],
                               anomalies=example_validator.outputs["anomalies"], **gate)
    return [statistics_gen, inferred_schema, curated_schema, example_validator, data_gate]


def evaluated_and_pushed(name: str, trainer: Any, examples: Any, splits: Sequence[str], config: tfma.EvalConfig,
                         serving_dir: str) -> list[Any]:
    """A Trainer's model evaluated (against the last blessed model of its kind) and pushed when blessed: the
    Resolver, the Evaluator and the AtomicPusher after it (``name``: the components' prefix)."""
    baseline = Resolver(
        strategy_class=LatestBlessedModelStrategy,
        model=Channel(type=standard_artifacts.Model, producer_component_id=f"{name}Trainer", output_key="model"),
        model_blessing=Channel(type=standard_artifacts.ModelBlessing, producer_component_id=f"{name}Evaluator",
                               output_key="blessing"),
    ).with_id(f"{name}LatestBlessedModel")
    evaluator = Evaluator(examples=examples, model=trainer.outputs["model"], baseline_model=baseline.outputs["model"],
                          example_splits=list(splits), eval_config=config,
                          module_path=EXTRACTORS_MODULE).with_id(f"{name}Evaluator")
    pusher = AtomicPusher(model=trainer.outputs["model"], model_blessing=evaluator.outputs["blessing"],
                          base_directory=serving_dir).with_id(f"{name}Pusher")
    return [baseline, evaluator, pusher]


def create_movie_pipeline(*, pipeline_root: str, data_root: Any, serving_model_dir: str, profile: Profile,
                          metadata_connection_config: Any = None, beam_pipeline_args: Sequence[str] = (),
                          enable_cache: bool = True, schema_file: str = str(MOVIE_SCHEMA),
                          pipeline_name: str = PIPELINE_NAME,
                          vertex: VertexTraining | None = None) -> tfx_pipeline.Pipeline:
    """The Movie Dialog pipeline: MovieExampleGen -> statistics, schemas, validation -> DialogDataGate -> a
    MovieTrainer per product of the profile (the joint MemN2N and, in the full profile, the joint supervised
    embeddings; with ``vertex``, Vertex AI jobs on its worker pool) -> Evaluators (hits@k per task, blessed on dev)
    -> AtomicPushers (``<serving>/memn2n``, ``<serving>/embeddings``)."""
    # Imported here: a dialog-bAbI run that loaded the movie model's modules printed TensorFlow's "Exception ignored
    # in AtomicFunction.__del__" eighteen times as the interpreter shut down.
    from components.movie_example_gen import MovieExampleGen
    from components.movie_trainer import MovieTrainer

    example_gen = MovieExampleGen(input_base=data_root).with_id("MovieExampleGen")
    # A task-4 training reply is in no candidate file by design: only dev and test answers must be candidates.
    # Top values and unique counts by sketches: exact ones keep a count per distinct text, millions at paper scale.
    checks = data_checks(example_gen, schema_file, tfdv.StatsOptions(use_sketch_based_topk_uniques=True),
                         candidate_check_splits="eval,test")
    components: list[Any] = [example_gen, *checks]
    for product in profile.products():
        trainer = MovieTrainer(examples=example_gen.outputs["examples"], config=product.config,
                               vertex=vertex).with_id(f"{product.component}Trainer")
        trainer.add_upstream_node(checks[-1])
        components += [trainer, *evaluated_and_pushed(
            product.component, trainer, example_gen.outputs["examples"], product.splits,
            movie_eval_config(product.min_accuracy, profile.max_drop),
            f"{serving_model_dir.rstrip('/')}/{product.slot}")]
    return tfx_pipeline.Pipeline(
        pipeline_name=pipeline_name, pipeline_root=pipeline_root, components=components,
        enable_cache=enable_cache, metadata_connection_config=metadata_connection_config,
        beam_pipeline_args=list(beam_pipeline_args))


def create_pipeline(
    *,
    pipeline_root: str,
    data_root: Any,
    serving_model_dir: str,
    profile: str | Profile,
    tasks: Sequence[int] = (),
    paper: str | None = None,
    metadata_connection_config: Any = None,
    beam_pipeline_args: Sequence[str] = (),
    enable_cache: bool = True,
    schema_file: str | None = None,
    pipeline_name: str = PIPELINE_NAME,
    splits: Sequence[str] | None = None,
    vertex: VertexTraining | None = None,
) -> tfx_pipeline.Pipeline:
    """The pipeline of a corpus' paper (``models.papers``): ``paper`` names it, or it is looked up from
    ``data_root`` (a local path; a RuntimeParameter, whose corpus is known only at run time, needs ``paper``).
    ``profile`` is one of the paper's profiles by name, or a profile itself; the paper's products for ``tasks``
    are trained, evaluated and pushed (``<serving>/<slot>``), each against its own blessing floor.

    For a paper of dialog-bAbI files, ``splits`` are the TFX splits to read. By default a path is looked at: a
    corpus without test files (the public task 6) gets no ``test`` split, and its Evaluators report on ``eval``
    (the dev dialogs) alone; a RuntimeParameter's corpus has all three. A paper with challenge sets (banking) is
    sliced by challenge, as Table 8 is."""
    if paper is not None:
        found = papers.get(paper)
    elif isinstance(data_root, str):
        found, _ = papers.of_corpus(data_root, tasks)
    else:
        raise ValueError("a corpus known only at run time (a RuntimeParameter) needs its paper named: paper=...")
    if isinstance(profile, str):
        if profile not in found.profiles:
            raise ValueError(f"{found.title} has no profile {profile!r}; choose from {list(found.profiles)}")
        profile = found.profiles[profile]
    if found.pipeline == papers.MOVIE:
        if tasks:
            raise ValueError(f"{found.title}: the pipeline trains one joint model on every task; give no tasks")
        return create_movie_pipeline(
            pipeline_root=pipeline_root, data_root=data_root, serving_model_dir=serving_model_dir, profile=profile,
            metadata_connection_config=metadata_connection_config, beam_pipeline_args=beam_pipeline_args,
            enable_cache=enable_cache, pipeline_name=pipeline_name, vertex=vertex,
            schema_file=schema_file or found.schema or str(MOVIE_SCHEMA))
    if splits is None:
        splits = corpus_splits(data_root, tasks) if isinstance(data_root, str) else tuple(SPLIT_FILES)
    example_gen = DialogExampleGen(input_base=data_root, tasks=tasks, splits=splits).with_id("DialogExampleGen")
    checks = data_checks(example_gen, schema_file or found.schema or str(CURATED_SCHEMA))
    components: list[Any] = [example_gen, *checks]
    for product in profile.products(tasks):
        trainer = DialogTrainer(examples=example_gen.outputs["examples"], method=product.method,
                                config=product.config, vertex=vertex).with_id(f"{product.component}Trainer")
        trainer.add_upstream_node(checks[-1])
        components += [trainer, *evaluated_and_pushed(
            product.component, trainer, example_gen.outputs["examples"],
            [split for split in product.splits if split in splits],
            eval_config(product.min_accuracy, profile.max_drop, found.challenges),
            f"{serving_model_dir.rstrip('/')}/{product.slot}")]
    return tfx_pipeline.Pipeline(
        pipeline_name=pipeline_name, pipeline_root=pipeline_root, components=components, enable_cache=enable_cache,
        metadata_connection_config=metadata_connection_config, beam_pipeline_args=list(beam_pipeline_args))
