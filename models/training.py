"""Train a response-ranking model on a task's ``trn`` split, keep the best epoch on ``dev``, export it.

The entry used by ``dialog train`` (:func:`train`) and the TFX Trainer's ``run_fn`` (:func:`fit_and_export`).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from keras.src.trainers.data_adapters.array_data_adapter import ArrayDataAdapter

from data.layout import TaskFiles
from data.oov_dev import oov_dev
from models.embeddings import SupervisedEmbeddings, margin_ranking_loss
from models.examples import TaskData, TurnExample, dialogs_examples, pad_batch
from models.features import TYPE_PREFIX, FeatureSpec, Featurizer, build_spec, candidate_type_slots, tokenize
from models.memn2n import PER_OCCURRENCE, SUMMED, MemN2N
from models.metrics import percent
from models.recurrent import UtteranceLSTM
from models.serving.export import DialogServingModule, export, prepare_output
from models.word_vectors import rows_for as pretrained_rows

OOV_DEV_SPLIT = "dev-OOV"  # the ``split`` of the OOV dev set's examples

# How the project trains what a paper's hyperparameter table describes: Adam's step and the batch that reached the
# paper's accuracy in the least wall time on dev (docs/results.md has the measurements). A paper's learning rate
# for plain SGD-like training is not used: under Adam it can diverge.
TRAINING_DEFAULTS: dict[str, float | int] = {"learning_rate": 0.005, "batch_size": 128, "epochs": 30}


def check_whole(config: object, *names: str) -> None:
    """Each of ``names`` a whole number >= 1 (a config's sizes), or a ValueError naming it."""
    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")


@dataclass(frozen=True)
class TrainConfig:
    """What the training of every network shares: the loop (Adam's step, batches, epochs, patience, how the epoch is
    chosen) and the inputs (match type, embedding size, memory). Each network's own settings are in its subclass:
    :class:`MemN2NConfig`, :class:`EmbeddingsConfig`, :class:`RecurrentConfig`, and a paper's own (the template
    ranker's, ``models.babi.template.config``); :func:`train_config` builds one by name."""

    model: str = "memn2n"  # the network: the subclass's name (:data:`CONFIGS`)
    match_type: bool = False
    embedding_dim: int = 32
    # The measured defaults (:data:`TRAINING_DEFAULTS`), shared by `dialog train`, the benchmarks and the
    # pipeline's profiles.
    learning_rate: float = float(TRAINING_DEFAULTS["learning_rate"])
    epochs: int = int(TRAINING_DEFAULTS["epochs"])
    batch_size: int = int(TRAINING_DEFAULTS["batch_size"])
    clipnorm: float = 40.0
    max_memory: int = 200
    seed: int = 0
    # Stop when dev accuracy has not improved for this many epochs (None: run every epoch).
    patience: int | None = None
    # Choose the epoch on the mean of dev and an OOV dev made from dev alone (data.oov_dev: its KB entities swapped
    # for ones no training dialog holds), not on dev alone, which cannot see the OOV test sets. Used by `train` when
    # the task's KB has entities no training dialog holds; otherwise dev alone.
    select_on_oov_dev: bool = False

    def __post_init__(self) -> None:
        """Refuse settings that cannot train (a zero size, a rate that is not a positive number) before any time
        is spent, naming the setting."""
        if CONFIGS.get(self.model) is not type(self):
            raise ValueError(f"model must be one of {list(CONFIGS)} with its own config, got {self.model!r} in a "
                             f"{type(self).__name__}")
        check_whole(self, "embedding_dim", "epochs", "batch_size", "max_memory")
        if self.patience is not None and (not isinstance(self.patience, int) or self.patience < 1):
            raise ValueError(f"patience must be a whole number >= 1 (or None), got {self.patience!r}")
        for name in ("learning_rate", "clipnorm"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class MemN2NConfig(TrainConfig):
    """A MemN2N (appendix A of Bordes et al.): softmax cross-entropy over every candidate."""

    model: str = "memn2n"
    hops: int = 3
    # 1 embedding for everything, 2 (input and memories; candidates), 3 (input; memories; candidates).
    dictionaries: int = 2
    # Words no training example holds keep a zero embedding (``MemN2N``'s ``learned_words``).
    only_learned_words: bool = False
    # A gradient row per word occurrence, as a keras.layers.Embedding gives it, which Keras' Adam steps larger for
    # words said often in a batch (models.memn2n.summed_rows): slower, better on unseen entities.
    per_occurrence_gradient: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_whole(self, "hops")
        if self.dictionaries not in (1, 2, 3):
            raise ValueError(f"dictionaries must be 1, 2 or 3, got {self.dictionaries!r}")


@dataclass(frozen=True)
class EmbeddingsConfig(TrainConfig):
    """Supervised embeddings (4.3 of Bordes et al.): margin ranking loss with sampled negatives."""

    model: str = "embeddings"
    margin: float = 0.01
    negatives: int = 100
    use_history: bool = True  # the whole history as input, or the last utterance
    shared_embeddings: bool = False  # A = B

    def __post_init__(self) -> None:
        super().__post_init__()
        check_whole(self, "negatives")
        if not isinstance(self.margin, int | float) or not math.isfinite(self.margin) or self.margin < 0:
            raise ValueError(f"margin must be a number >= 0, got {self.margin!r}")


@dataclass(frozen=True)
class RecurrentConfig(TrainConfig):
    """An LSTM over the history's utterances (``models.recurrent.UtteranceLSTM``): softmax cross-entropy over every
    candidate. The template ranker's template model when it is Hybrid Code Networks' recurrent policy."""

    model: str = "recurrent"
    hidden: int = 128  # the LSTM's units (HCN's 128)
    # HCN's averaged word vectors: each step also reads the mean pretrained vector of its words
    # (models.word_vectors; fixed, not trained).
    word_vectors: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_whole(self, "hidden")
        if self.match_type:
            raise ValueError("the recurrent model has no match type")


# The networks' configs by name; a paper's own network adds its config (:func:`register_config`), as the
# template ranker does (models.babi.template.config).
CONFIGS: dict[str, type[TrainConfig]] = {"memn2n": MemN2NConfig, "embeddings": EmbeddingsConfig,
                                         "recurrent": RecurrentConfig}


def register_config(config: type[TrainConfig]) -> type[TrainConfig]:
    """Add a network's config under its ``model`` name (a class decorator), for :func:`train_config` and the
    Trainer's rebuilding of a config from its JSON fields."""
    name = config.model
    if CONFIGS.get(name, config) is not config:
        raise ValueError(f"config {name!r} is registered twice")
    CONFIGS[name] = config
    return config


def train_config(model: str = "memn2n", **settings: Any) -> TrainConfig:
    """The config of ``model`` with ``settings``: a setting that model does not have is refused by name (the
    embeddings have no hops), as is an unknown model."""
    if model not in CONFIGS:
        raise ValueError(f"model must be one of {list(CONFIGS)}, got {model!r}")
    known = {f.name for f in fields(CONFIGS[model])}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(f"{model} has no setting {', '.join(unknown)}")
    return CONFIGS[model](model=model, **settings)


def featurize(featurizer: Featurizer, examples: Sequence[TurnExample], chunk: int = 512) -> dict[str, np.ndarray]:
    """Run the featuriser over examples in chunks; returns ``memory`` and ``query`` id arrays.

    The featuriser runs as one traced graph (shapes left open, so it is traced once), not op by op, which is
    faster. Chunks bound the peak memory: larger ones were a little faster but held much more at the peak of task
    6's training (200 memory slots). The ids are kept in the narrowest unsigned type that holds the vocabulary
    (uint16 below 65,536 words; the models cast them back), written chunk by chunk into one array: task 6's
    training memory is 14,404 x 200 x 31 ids, the largest array training holds, and was held twice while
    concatenated."""
    if not examples:
        raise ValueError("no examples to featurise")
    texts = tf.TensorSpec([None, None], tf.string)
    traced = tf.function(featurizer.__call__, autograph=False,
                         input_signature=[texts, texts, tf.TensorSpec([None], tf.string)])
    dtype = id_dtype(int(featurizer.table.size()))
    arrays: dict[str, np.ndarray] = {}
    for start in range(0, len(examples), chunk):
        memory, speaker, query = pad_batch(examples[start:start + chunk])
        features = traced(tf.constant(memory, tf.string), tf.constant(speaker, tf.string),
                          tf.constant(query, tf.string))
        for key in ("memory", "query"):
            write_chunk(arrays, key, features[key].numpy(), start, len(examples), dtype)
    return arrays


def write_chunk(arrays: dict[str, np.ndarray], key: str, part: np.ndarray, start: int, size: int,
                dtype: np.dtype | None = None) -> None:
    """Write the rows ``part`` of ``arrays[key]`` from row ``start``, allocating the array of ``size`` rows (in
    ``dtype``, else the part's) at its first chunk: chunked results land in one array, never held twice as a list
    of chunks and their concatenation."""
    if key not in arrays:
        arrays[key] = np.empty((size, *part.shape[1:]), part.dtype if dtype is None else dtype)
    arrays[key][start:start + len(part)] = part


def id_dtype(vocabulary_size: int) -> np.dtype:
    """The narrowest unsigned integer type for word ids below ``vocabulary_size`` (at least 16 bits)."""
    return np.dtype(np.uint16) if vocabulary_size <= np.iinfo(np.uint16).max + 1 else np.dtype(np.int32)


def with_constant_inputs(model: keras.Model, features: dict[str, np.ndarray], chunk: int = 1024
                         ) -> dict[str, np.ndarray]:
    """``features`` and the model's weight-independent inputs (``constant_inputs``), computed once, a chunk at a
    time into one array each: the pipeline's 47.6k MemN2N training turns have a [47.6k, 4,800] ``said``, which
    was held twice while its chunks were concatenated."""
    compute = tf.function(model.constant_inputs, autograph=False)
    size = len(features["query"])
    arrays: dict[str, np.ndarray] = {}
    for start in range(0, size, chunk):
        part = compute({key: value[start:start + chunk] for key, value in features.items()})
        if not part:  # nothing constant (no match type): no pass over the data
            return features
        for key, value in part.items():
            write_chunk(arrays, key, value.numpy(), start, size)
    return {**features, **arrays}


def answer_indices(spec: FeatureSpec, examples: Sequence[TurnExample]) -> np.ndarray:
    index = {candidate: i for i, candidate in enumerate(spec.candidates)}
    missing = [e for e in examples if e.answer not in index]
    if missing:
        raise ValueError(f"{len(missing)} gold answers are not candidates, e.g. {missing[0].answer!r} "
                         f"({missing[0].dialog_id}); run `dialog validate` on the corpus")
    return np.array([index[e.answer] for e in examples], dtype=np.int32)


def learned_words(spec: FeatureSpec, features: dict[str, np.ndarray], answers: np.ndarray) -> np.ndarray:
    """bool [V]: the words training can learn: those of the featurised training inputs (time and speaker words
    included), of the gold answers, and the entity type words."""
    seen = np.zeros(len(spec.vocabulary), dtype=bool)
    for key in ("memory", "query"):
        # A count per word id, not np.unique, whose sort of the memory ids was much of a fit's set-up (docs/results.md).
        # An id past the vocabulary makes the shapes differ and raises, as indexing with it did.
        seen |= np.bincount(features[key].ravel(), minlength=len(seen)) > 0
    seen[[spec.word_id(w) for i in np.unique(answers) for w in tokenize(spec.candidates[i])]] = True
    seen[[spec.word_id(TYPE_PREFIX + t) for t in spec.types]] = True
    seen[0] = False  # padding
    return seen


def build_model(spec: FeatureSpec, config: TrainConfig, learned: np.ndarray | None = None
                ) -> MemN2N | SupervisedEmbeddings | UtteranceLSTM:
    """The network for ``config``; ``learned`` (bool [V]) is used with ``config.only_learned_words``."""
    featurizer = Featurizer(spec)
    candidate_ids = featurizer.sentence_ids(tf.constant(spec.candidates)).numpy()
    # A corpus without a KB (no KB file, no KB results: the paper's Concierge setting) has no entity types, so
    # match type has nothing to match: the model is built without it.
    match_ids, type_ids = candidate_type_slots(spec) if config.match_type and spec.types else (None, None)
    if isinstance(config, EmbeddingsConfig):
        return SupervisedEmbeddings(len(spec.vocabulary), candidate_ids, embedding_dim=config.embedding_dim,
                                    use_history=config.use_history, shared=config.shared_embeddings,
                                    match_type_ids=match_ids, type_word_ids=type_ids, seed=config.seed)
    if isinstance(config, RecurrentConfig):
        return UtteranceLSTM(len(spec.vocabulary), len(spec.candidates), embedding_dim=config.embedding_dim,
                             hidden=config.hidden, seed=config.seed,
                             pretrained=pretrained_rows(spec.vocabulary) if config.word_vectors else None)
    if type(config) is not MemN2NConfig:  # a paper's MemN2N-based model (the template ranker) builds its own
        raise ValueError(f"model must be memn2n, embeddings or recurrent, not {config.model!r}")
    return MemN2N(len(spec.vocabulary), candidate_ids, embedding_dim=config.embedding_dim, hops=config.hops,
                  match_type_ids=match_ids, type_word_ids=type_ids, seed=config.seed, dictionaries=config.dictionaries,
                  learned_words=learned if config.only_learned_words else None,
                  gradient=PER_OCCURRENCE if config.per_occurrence_gradient else SUMMED)


def compiled_model(spec: FeatureSpec, config: TrainConfig, features: dict[str, np.ndarray], answers: np.ndarray
                   ) -> MemN2N | SupervisedEmbeddings | UtteranceLSTM:
    """The network training fits for ``config``, compiled: Adam at its step and clipping, its loss; the words it
    learns read from the featurised training ``features`` and ``answers`` when it keeps the others at zero. Built in
    the strategy scope of the caller. The benchmarks build theirs here too, so that they time what training runs."""
    learned = learned_words(spec, features, answers) \
        if isinstance(config, MemN2NConfig) and config.only_learned_words else None
    model = build_model(spec, config, learned)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=config.learning_rate, clipnorm=config.clipnorm),
                  loss=training_loss(config))
    return model


def training_loss(config: TrainConfig) -> keras.losses.Loss | Any:
    """Softmax cross-entropy over all candidates (MemN2N, appendix A); margin ranking (embeddings, 4.3)."""
    if isinstance(config, EmbeddingsConfig):
        return margin_ranking_loss(config.margin, config.negatives)
    return softmax_cross_entropy


def softmax_cross_entropy(y_true: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    """-log softmax(logits)[y], as logsumexp(logits) - logits[y]: the same loss as Keras' sparse categorical
    cross-entropy from logits, in less time over 4,212 candidates (TF's fused kernel is not vectorised)."""
    gold = tf.cast(tf.reshape(y_true, [-1, 1]), tf.int32)
    return tf.reduce_logsumexp(logits, axis=-1) - tf.gather(logits, gold, batch_dims=1)[:, 0]


class TrainingDiverged(ValueError):
    """The loss became NaN or infinite: training stops and no model is written."""


def finite_loss(logs: dict | None, epoch: int) -> float:
    """An epoch's training loss; :class:`TrainingDiverged` when it is NaN or infinite (nothing learned is worth
    keeping, and nothing is exported)."""
    loss = float((logs or {}).get("loss", 0.0))
    if not math.isfinite(loss):
        raise TrainingDiverged(f"training diverged: the loss became {loss} in epoch {epoch + 1}; lower the "
                               "learning rate (--learning-rate)")
    return loss


def training_batches(features: dict[str, np.ndarray], labels: np.ndarray, batch_size: int) -> tf.data.Dataset:
    """The shuffled batches ``model.fit(features, labels, batch_size=..., shuffle=True)`` makes (the array adapter
    of Keras 3.6, pinned in constraints.txt: the same order, so the same trained numbers), with tf.data's
    autotuning off. Its model thread is joined when an epoch's iterator is deleted, at the start of the next
    epoch, and it stalled that start in some of the epochs (MemN2N in `make run`'s Trainer); without it the
    parallel map runs on as many threads as there are cores."""
    adapter = ArrayDataAdapter(features, labels, batch_size=batch_size, shuffle=True)
    options = tf.data.Options()
    options.autotune.enabled = False
    # The batch count stated, as Keras knows it of arrays: without it Keras reads each epoch to the end of the data,
    # and the epochs after the first come in another order (so other trained numbers than model.fit's).
    return adapter.get_tf_dataset().apply(tf.data.experimental.assert_cardinality(adapter.num_batches)).with_options(
        options)


# Training steps one call of the compiled train function runs (:func:`loop_training_steps`).
STEPS_PER_CALL = 16


def loop_training_steps(model: keras.Model, features: dict[str, np.ndarray], steps: int) -> None:
    """Make ``model.fit`` run ``steps`` training steps per call of its compiled function, in a graph loop over the
    batches, where Keras runs one: Keras' Python around a call (callbacks, the iterator, the call itself) is a
    large part of a small model's step (docs/results.md has the profile). The steps are the same, one after the
    other in the same order, so the trained numbers are the same to the bit, for the networks trained here: the
    build below draws no random number from them (a recurrent cell with dropout would draw its mask there).

    Keras' own ``steps_per_execution`` puts ``steps`` calls of its step in one graph, and an epoch's last call runs
    past the last batch: the call fails there, after the optimizer has counted a step that had no batch, so the
    trained numbers differ (docs/results.md). This loop stops where the batches end (not at a ``steps_per_epoch``:
    it is for ``fit`` over a whole dataset, as the training loops here call it). The model and its optimizer are
    built first, on one example of ``features``, so that no variable is made inside the loop. Under a strategy (any
    but the default), eagerly, or once the model is compiled again, Keras' loop is kept."""
    if steps == 1 or tf.distribute.has_strategy() or model.distribute_strategy is not tf.distribute.get_strategy():
        return
    with warnings.catch_warnings():
        # A memory of one slot (a first turn's): called eagerly, Keras warns of the softmax over it.
        warnings.filterwarnings("ignore", message="You are using a softmax over axis -1")
        model({key: value[:1] for key, value in features.items()})
    model.optimizer.build(model.trainable_variables)
    model.steps_per_execution = steps

    def make_train_function(force: bool = False) -> Any:
        if model.run_eagerly or model.steps_per_execution != steps:  # compiled again since: Keras' own loop
            return type(model).make_train_function(model, force)
        if model.train_function is not None and not force:
            return model.train_function
        one_step = tf.function(model.train_step, reduce_retracing=True, jit_compile=model.jit_compile)

        @tf.function(reduce_retracing=True)
        def train_function(iterator: Any) -> dict[str, tf.Tensor]:
            logs = one_step(next(iterator))  # Keras calls it only while a batch is left
            for _ in tf.range(steps - 1):
                tf.autograph.experimental.set_loop_options(parallel_iterations=1)  # one step after the other
                batch = iterator.get_next_as_optional()
                if not batch.has_value():
                    break
                logs = one_step(batch.get_value())
            return logs

        model.train_function = train_function
        return train_function

    model.make_train_function = make_train_function


def top_candidates(model: keras.Model, features: dict[str, np.ndarray], size: int, batch_size: int = 1024
                   ) -> np.ndarray:
    """Each example's best-scoring candidate, a batch at a time: never every example x every candidate at once
    (task 5's dev would be 18k x 4k scores). Under a strategy of several replicas, ``predict`` spreads each batch
    over them (``predict_on_batch``, faster otherwise, would run it whole on each)."""
    strategy = getattr(model, "distribute_strategy", None)
    several = strategy is not None and strategy.num_replicas_in_sync > 1

    def scores(batch: dict[str, np.ndarray]) -> np.ndarray:
        return model.predict(batch, batch_size=batch_size, verbose=0) if several else model.predict_on_batch(batch)

    return np.concatenate([
        np.argmax(np.asarray(scores({key: value[start:start + batch_size] for key, value in features.items()})),
                  axis=-1)
        for start in range(0, size, batch_size)]) if size else np.zeros(0, dtype=np.int64)


class BestOnDev(keras.callbacks.Callback):
    """Per-response accuracy on dev after each epoch; the best epoch's weights are restored at the end.

    With ``oov`` (an OOV dev set's features and labels, ``data.oov_dev``) both accuracies are in the history, and
    each set's own best epoch is kept too (:meth:`weights_of`), so a caller can report the OOV test sets with the
    epoch chosen on the OOV dev set and the plain ones with the epoch chosen on dev. The epoch restored is dev's
    best, or with ``select_on_mean`` the best mean of the two (one model for both kinds of test set).

    With ``patience``, training stops once that many epochs in a row have beaten none of the bests kept (dev's, the
    OOV dev set's, and the mean when it is the one restored). Training also stops once every best kept is 100%: no
    later epoch can beat it (a best must be strictly better), so the models kept are the same as after every epoch,
    and a model that gets all of dev right early (the template model, on some tasks) stops there instead of running
    every epoch. Each epoch's history has its training
    seconds and its dev evaluation seconds apart."""

    def __init__(self, features: dict[str, np.ndarray], labels: np.ndarray, batch_size: int = 1024,
                 patience: int | None = None, oov: tuple[dict[str, np.ndarray], np.ndarray] | None = None,
                 select_on_mean: bool = False) -> None:
        super().__init__()
        self.features, self.labels, self.batch_size, self.patience = features, labels, batch_size, patience
        self.oov = oov
        self.selected = "mean" if oov is not None and select_on_mean else "dev"
        # score, epoch (1-based) and weights of the best epoch on each set (and on their mean)
        self.bests: dict[str, tuple[float, int, list | None]] = {
            name: (-1.0, -1, None) for name in ("dev", "oov_dev", self.selected) if name == "dev" or oov is not None}
        self.history: list[dict[str, float]] = []
        self._started = 0.0

    @property
    def best_epoch(self) -> int:
        return self.bests[self.selected][1]

    @property
    def best_accuracy(self) -> float:
        return self.bests[self.selected][0]

    def epoch_of(self, name: str) -> int:
        """The best epoch on ``name``: "dev", or with an OOV dev set "oov_dev" or "mean"."""
        return self.bests[name][1]

    def weights_of(self, name: str) -> list | None:
        return self.bests[name][2]

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._started = time.perf_counter()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        seconds = time.perf_counter() - self._started
        finite_loss(logs, epoch)
        started = time.perf_counter()
        scores = {"dev": self._accuracy(self.features, self.labels)}
        entry = {"epoch": epoch + 1, "loss": float((logs or {}).get("loss", np.nan)),
                 "dev_per_response_accuracy": scores["dev"]}
        if self.oov is not None:
            scores["oov_dev"] = entry["oov_dev_per_response_accuracy"] = self._accuracy(*self.oov)
            scores["mean"] = (scores["dev"] + scores["oov_dev"]) / 2
        scores = {name: score for name, score in scores.items() if name in self.bests}
        self.history.append({**entry, "seconds": seconds, "eval_seconds": time.perf_counter() - started})
        if logs is not None:
            logs.update({key: value for key, value in entry.items() if key.endswith("accuracy")})
        better = [name for name, score in scores.items() if score > self.bests[name][0]]
        weights = self.model.get_weights() if better else None
        for name in better:
            self.bests[name] = (scores[name], epoch + 1, weights)
        if all(score >= 100.0 for score, _, _ in self.bests.values()):
            self.model.stop_training = True
        elif self.patience is not None and all(epoch + 1 - best >= self.patience for _, best, _ in
                                               self.bests.values()):
            self.model.stop_training = True

    def _accuracy(self, features: dict[str, np.ndarray], labels: np.ndarray) -> float:
        return percent(top_candidates(self.model, features, len(labels), self.batch_size) == labels)

    def on_train_end(self, logs: dict | None = None) -> None:
        weights = self.weights_of(self.selected)
        if weights is not None:
            self.model.set_weights(weights)


def memory_size_for(config: TrainConfig, examples: Sequence[TurnExample]) -> int:
    """Memory slots the model keeps: the longest memory seen in training data, at most ``config.max_memory``."""
    return min(config.max_memory, max((len(e.memory) for e in examples), default=0) or 1)


def train(task: TaskData | TaskFiles, config: TrainConfig, out: str | Path | None = None, verbose: int = 0,
          log_dir: str | None = None, top_k: int = 10, oov_dev: Sequence[TurnExample] | None = None,
          oov_out: str | Path | None = None) -> dict[str, Any]:
    """Train on ``trn``, select on ``dev``, export to ``out``. Returns a summary with the history.

    With ``config.select_on_oov_dev``, ``oov_dev`` is the OOV dev set already made (:func:`oov_dev_examples`, for a
    caller that trains several configs of one task); without it, the set is made here. With ``oov_out``, the epoch
    best on the OOV dev set is exported there too (see :func:`fit_and_export`)."""
    for path in (out, oov_out):
        if path is not None:
            prepare_output(path)  # before reading anything, so a refused --out costs nothing
    if isinstance(task, TaskFiles):
        task = TaskData.load(task, splits=("trn", "dev"))
    trn, dev = task.split("trn"), task.split("dev")
    for split, examples in (("trn", trn), ("dev", dev)):
        if not examples:
            raise ValueError(f"{task.where(split)}: no dialog with a bot turn, nothing to "
                             f"{'train on' if split == 'trn' else 'select the best epoch on'}")
    spec = build_spec(task, memory_size=memory_size_for(config, trn + dev))
    oov = (oov_dev or oov_dev_examples(task)) if config.select_on_oov_dev or oov_out is not None else None
    return fit_and_export(spec, trn, dev, config, out, verbose, log_dir, top_k, oov_dev=oov, oov_out=oov_out)


def oov_dev_examples(task: TaskData) -> list[TurnExample] | None:
    """The examples of ``task``'s OOV dev set (``data.oov_dev``), or None when its KB has no entity that the
    training dialogs do not hold (no KB, or a KB training covers: nothing to swap in)."""
    if not {"trn", "dev"} <= set(task.dialogs):  # examples without their dialogs (the TFX Trainer's): none to swap
        return None
    made = oov_dev(task.dialogs["dev"], task.dialogs["trn"], task.facts, task.candidates)
    return dialogs_examples(made.dialogs, task.task, OOV_DEV_SPLIT) or None


def fit_and_export(spec: FeatureSpec, trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TrainConfig,
                   out: str | Path | None = None, verbose: int = 0, log_dir: str | None = None,
                   top_k: int = 10, strategy: tf.distribute.Strategy | None = None,
                   oov_dev: Sequence[TurnExample] | None = None, oov_out: str | Path | None = None
                   ) -> dict[str, Any]:
    """The training loop shared by ``dialog train`` and the TFX Trainer: fit on ``trn``, keep the best epoch
    on ``dev`` (and ``oov_dev``, when given), export the serving module (returning the ``top_k`` best candidates)
    to ``out``.

    With ``oov_dev`` and ``oov_out``, the epoch best on the OOV dev set alone is exported to ``oov_out`` as well:
    Table 2 reports each OOV test set with the model chosen on the OOV dev set, and each plain one with the model
    chosen on dev, instead of one epoch that trades one for the other."""
    if oov_out is not None and not oov_dev:
        raise ValueError("an OOV dev set is needed to export the model chosen on it")
    for path in (out, oov_out):
        if path is not None:
            prepare_output(path)
    model, summary, best = _fit(spec, trn, dev, config, verbose, log_dir, strategy, oov_dev)
    module = DialogServingModule(spec, model, top_k=top_k)
    if out is not None:
        export(module, out)
    if oov_out is not None:
        model.set_weights(best.weights_of("oov_dev"))
        export(module, oov_out)  # the same module: its signatures read the weights just set, traced once for both
    return summary


def fit(spec: FeatureSpec, trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TrainConfig,
        verbose: int = 0, log_dir: str | None = None, strategy: tf.distribute.Strategy | None = None,
        oov_dev: Sequence[TurnExample] | None = None) -> tuple[keras.Model, dict[str, Any]]:
    """Fit on ``trn`` and keep the best epoch on ``dev``: the model (its best weights) and the summary.

    With ``oov_dev`` (an OOV dev set, ``data.oov_dev``) its accuracy is in the history and the summary has its own
    best epoch (``oov_dev_best_epoch``); with ``config.select_on_oov_dev`` the model kept is the best mean of the two
    accuracies.

    The model is built and fitted under ``strategy`` (default: the one in scope, so a caller inside
    ``MirroredStrategy().scope()`` trains on every replica); ``config.batch_size`` is the global batch."""
    model, summary, _ = _fit(spec, trn, dev, config, verbose, log_dir, strategy, oov_dev)
    return model, summary


def _fit(spec: FeatureSpec, trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TrainConfig,
         verbose: int, log_dir: str | None, strategy: tf.distribute.Strategy | None,
         oov_dev: Sequence[TurnExample] | None) -> tuple[keras.Model, dict[str, Any], BestOnDev]:
    if not trn or not dev:
        raise ValueError(f"{len(trn)} training and {len(dev)} dev examples: both are needed")
    keras.utils.set_random_seed(config.seed)
    featurizer = Featurizer(spec)
    x_trn, y_trn = featurize(featurizer, trn), answer_indices(spec, trn)
    x_dev, y_dev = featurize(featurizer, dev), answer_indices(spec, dev)
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        model = compiled_model(spec, config, x_trn, y_trn)
    x_trn, x_dev = with_constant_inputs(model, x_trn), with_constant_inputs(model, x_dev)
    # The embeddings' negatives are drawn by a random op whose seed comes from the graph it is traced in: in the
    # loop's graph they would be other draws, so other trained numbers. Every other model's step is the same there.
    loop_training_steps(model, x_trn, 1 if isinstance(config, EmbeddingsConfig) else STEPS_PER_CALL)
    oov = (with_constant_inputs(model, featurize(featurizer, oov_dev)), answer_indices(spec, oov_dev)) if oov_dev \
        else None
    best = BestOnDev(x_dev, y_dev, patience=config.patience, oov=oov, select_on_mean=config.select_on_oov_dev)
    callbacks: list[keras.callbacks.Callback] = [best]
    if log_dir:
        callbacks.append(keras.callbacks.TensorBoard(log_dir=log_dir))
    started = time.perf_counter()
    model.fit(training_batches(x_trn, y_trn, config.batch_size), epochs=config.epochs, verbose=verbose,
              callbacks=callbacks)
    summary = {
        "config": asdict(config), "train_examples": len(trn), "dev_examples": len(dev),
        "vocabulary_size": len(spec.vocabulary), "candidates": len(spec.candidates), "memory_size": spec.memory_size,
        "match_type_used": bool(config.match_type and spec.types),
        "best_epoch": best.best_epoch,
        **{key: round(value, 2) for key, value in best.history[best.best_epoch - 1].items()
           if key.endswith("dev_per_response_accuracy")},
        "oov_dev_examples": len(oov_dev or ()),
        **({"oov_dev_best_epoch": best.epoch_of("oov_dev"),
            "oov_dev_best_per_response_accuracy": round(best.bests["oov_dev"][0], 2)} if oov else {}),
        "replicas": strategy.num_replicas_in_sync,
        "train_seconds": round(time.perf_counter() - started, 1), "history": best.history,
    }
    return model, summary, best
