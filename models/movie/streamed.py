"""The joint MemN2N of Dodge et al. trained from a stream of tf.Examples (the pipeline's Movie Dialog Trainer).

Table 6's benchmark (``models.movie.neural``) reads a corpus into Python lists and scores every candidate at every
step. Neither scales to the paper's corpus (3M training exchanges, 75k entities), so this trainer:

- reads the ExampleGen's TFRecords through ``tf.data`` (interleaved files, a shuffle buffer, batches), and
  featurises each batch in the graph (:class:`MovieFeatures`: :mod:`models.movie.graph_text`'s dictionary and KB
  hash lookup, then the project's :class:`~models.features.Featurizer`), the same ops the SavedModel runs; the
  texts come parsed into appendix A's tokens by the ExampleGen (``models.movie.records``), where the SavedModel
  parses raw text itself;
- builds the dictionary in one streamed pass (token counts, never the texts);
- trains with a sampled softmax: each example's gold answer (one of its first three, drawn anew each time) is
  scored from its text against the batch's other gold answers and ``sampled`` entities drawn uniformly; a
  negative that is a right answer of the example is masked. A task-4 training reply is in no candidate file and
  is trained all the same;
- with ``task_sampling`` below 1, draws each epoch's exchanges task-balanced (:func:`task_rates`): a small task
  (QA's 96k exchanges of the paper's 6M) is seen several times an epoch and a large one in part, so that no task is
  drowned by the others' size;
- keeps the epoch with the best mean over tasks of dev hits@k (the paper's k), each example ranked among its own
  candidates (``candidate_range``: the entities, or its split's task-4 file), and stops after ``patience``
  epochs without progress.

The same trainer fits the supervised embeddings (no hop) and section 3.3's LSTM (:class:`SampledLstm`), so that
each of Table 6's networks fits the paper's scale. Peak memory is set by the batch, the shuffle buffer and the
model, not by the corpus.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from models.features import FeatureSpec, Featurizer, spec_from_sentences
from models.memn2n import NEG_INF, ROWS, SUMMED, MemN2N, bag_of_embeddings
from models.movie.graph_text import GraphEntityText, entity_key
from models.movie.lstm import LstmNetwork
from models.movie.paper import PAPER_K
from models.movie.records import ANSWER_INDICES, CANDIDATE_RANGE, ENTITIES, PARSED, TASK_NAMES, MovieCandidates, Parser
from models.movie.text import MAX_ANSWERS
from models.optimizers import RowAdam
from models.serving.export import export, hold_models, prepare_output
from models.serving.ranker import LONG_TERM_MEMORY
from models.training import finite_loss, softmax_cross_entropy

# hits@k of each task name with the paper's k.
TASK_K = {TASK_NAMES[task]: k for task, k in PAPER_K.items()}
USER, BOT = "user", "bot"
ENCODERS = ("memn2n", "lstm")


@dataclass(frozen=True)
class StreamedConfig:
    """The streamed trainer's settings: by default Table 6's joint MemN2N's
    (``models.movie.methods.JOINT_MEMN2N_CONFIG``: 2 hops, three dictionaries, d = 64, memory of 40 with up to 30 KB
    sentences; the pipeline's product is :data:`PRODUCT_JOINT_MEMN2N`) and the streaming ones. Batches of 512 at
    Adam 0.01 rather than 32 at 0.005: a quarter of the steps of 128 at the paper's scale, where the step's fixed
    costs dominate, and on the small world's dev as good as 128 at 0.005 (docs/movie.md). ``hops=0`` is the
    supervised embeddings of section 3.2 ("a Memory Network with no attention over memory": the query's words
    against the candidate's; two dictionaries give x^T U^T V y), trained from the same stream
    (:data:`STREAMED_EMBEDDINGS`). ``encoder="lstm"`` is section 3.3's LSTM (:class:`SampledLstm`) over the last
    ``context`` messages and the query, cut to their last ``max_tokens`` words; hops and dictionaries do not apply
    to it."""

    encoder: str = "memn2n"
    embedding_dim: int = 64
    hops: int = 2
    dictionaries: int = 3
    learning_rate: float = 0.01
    clipnorm: float = 40.0
    epochs: int = 8
    patience: int | None = 3
    batch_size: int = 512
    sampled: int = 1000  # entities drawn as negatives per batch
    max_memory: int = 40
    max_kb: int = 30
    max_frequency: int = 100
    min_count: int = 5  # appendix A: a word is in the dictionary when training says it this often
    shuffle_buffer: int = 20_000
    # Training steps per call of the compiled step (less Python per step). One process only: several workers gather
    # each step's sparse gradients, whose sizes differ between workers, which Keras' multi-step loop cannot do
    # ("Shape mismatch in the collective instance"); they take one step per call.
    steps_per_execution: int = 8
    top_k: int = 100  # what the SavedModel returns: hits@100 of task 2 needs 100
    # Gradients of the batch's words' rows alone, and Adam stepping only them (models.optimizers.RowAdam); False:
    # dense tables and Keras' Adam, much slower a step at the paper's scale (docs/results.md).
    row_updates: bool = True
    context: int = 2  # the LSTM's earlier messages read with the query (appendix A)
    max_tokens: int = 60
    # Task-balanced epochs (task_rates): a task's share of an epoch is proportional to its training exchanges to
    # the power task_sampling (1: as the corpus has them, every exchange once; 0: every task alike), and an epoch
    # holds at most epoch_exchanges of them (0: as many as the corpus).
    task_sampling: float = 1.0
    epoch_exchanges: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("embedding_dim", "hops", "epochs", "batch_size", "sampled", "max_memory", "max_kb",
                     "max_frequency", "min_count", "shuffle_buffer", "steps_per_execution", "top_k", "context",
                     "max_tokens", "epoch_exchanges"):
            value, least = getattr(self, name), 0 if name in ("hops", "epoch_exchanges") else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number >= {least}, got {value!r}")
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, got {self.encoder!r}")
        if self.dictionaries not in (1, 2, 3):
            raise ValueError(f"dictionaries must be 1, 2 or 3, got {self.dictionaries!r}")
        for name in ("learning_rate", "clipnorm"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if not isinstance(self.task_sampling, int | float) or not 0 <= self.task_sampling <= 1:
            raise ValueError(f"task_sampling must be a number from 0 to 1, got {self.task_sampling!r}")

    @property
    def balanced(self) -> bool:
        return self.task_sampling != 1 or self.epoch_exchanges > 0


# The joint supervised embeddings of the pipeline: no hop, one dictionary for inputs and one for candidates.
STREAMED_EMBEDDINGS = StreamedConfig(hops=0, dictionaries=2)
# The joint models' epochs (the pipeline's products and Table 6's joint rows): task-balanced, so that a small task
# (QA) is not drowned by the large ones, and a cap on an epoch's size so that 8 epochs of both joint models fit the
# pipeline's hour at the paper's scale (a smaller corpus is one epoch whole). The joint MemN2N draws every task
# alike, chosen on dev over the square root of each task's size, which the joint embeddings keep (not run again).
# Why and what they give: docs/movie.md ("Task-balanced epochs").
EPOCH_CAP = 1_500_000
STREAMED_JOINT_MEMN2N = StreamedConfig(task_sampling=0.0, epoch_exchanges=EPOCH_CAP)
# The pipeline's product: the joint MemN2N in the per-task model's shape (1 hop, input and output dictionaries),
# chosen on dev at the paper's scale over the paper's joint shape (2 hops, three dictionaries), which Table 6's
# joint row keeps, at the paper's joint learning rate, chosen on the same dev. Why: docs/movie.md ("The pipeline's
# joint MemN2N").
PRODUCT_JOINT_MEMN2N = replace(STREAMED_JOINT_MEMN2N, hops=1, dictionaries=2, learning_rate=0.005)
STREAMED_JOINT_EMBEDDINGS = replace(STREAMED_EMBEDDINGS, task_sampling=0.5, epoch_exchanges=EPOCH_CAP)
# The paper's LSTM at appendix B's embedding size, the same on every task as Table 6's own LSTM (docs/movie.md says
# why).
STREAMED_LSTM = StreamedConfig(encoder="lstm", embedding_dim=100)


def record_spec() -> dict[str, Any]:
    """The tf.Example features the trainer and the ``serving_examples`` signature read."""
    return {PARSED["memory"]: tf.io.VarLenFeature(tf.string), PARSED["query"]: tf.io.FixedLenFeature([], tf.string),
            PARSED["answers"]: tf.io.VarLenFeature(tf.string), ANSWER_INDICES: tf.io.VarLenFeature(tf.int64),
            CANDIDATE_RANGE: tf.io.FixedLenFeature([2], tf.int64, default_value=[0, 0]),
            "task": tf.io.FixedLenFeature([], tf.string, default_value="")}


def _serialized(files: Sequence[str]) -> tf.data.Dataset:
    """The records of the TFRecord files (gzip, as TFX writes them), unparsed, the files interleaved."""
    if not files:
        raise FileNotFoundError("no TFRecord files to read")
    names = tf.data.Dataset.from_tensor_slices(list(files))
    return names.interleave(lambda f: tf.data.TFRecordDataset(f, compression_type="GZIP"), cycle_length=len(files))


def task_rates(exchanges: dict[str, int], config: StreamedConfig) -> dict[str, float]:
    """How many times an epoch sees each training exchange of a task, on average: the task's share of the epoch
    (its exchanges to the power ``task_sampling``, normalised) times the epoch's size (the corpus's, at most
    ``epoch_exchanges``), over the task's exchanges. 1 for every task when the config is not balanced."""
    total = sum(exchanges.values())
    if not config.balanced or not total:
        return {task: 1.0 for task in exchanges}
    size = min(config.epoch_exchanges, total) if config.epoch_exchanges else total
    weights = {task: count ** config.task_sampling for task, count in exchanges.items() if count}
    norm = sum(weights.values())
    return {task: size * weights[task] / norm / exchanges[task] for task in weights}


def _sampled(serialized: tf.data.Dataset, rates: dict[str, float], seed: int) -> tf.data.Dataset:
    """Each record kept floor(rate) times and once more with probability frac(rate) (rate: its task's, 1 for a
    task not in ``rates``), drawn anew each epoch (``Dataset.random`` re-randomised per iteration)."""
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(rates), tf.string), tf.constant(list(rates.values()), tf.float32)), default_value=1.0)

    def copies(records: tf.Tensor, draw: tf.Tensor) -> tf.Tensor:
        task = tf.io.parse_example(records, {"task": record_spec()["task"]})["task"]
        rate = table.lookup(task)
        uniform = tf.random.stateless_uniform(tf.shape(rate), seed=tf.stack([draw, tf.constant(seed, tf.int64)]))
        return tf.repeat(records, tf.cast(tf.floor(rate + uniform), tf.int64))

    draws = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    return tf.data.Dataset.zip(serialized.batch(1024), draws).map(copies).unbatch()


def records(files: Sequence[str], batch_size: int, shuffle: int = 0, seed: int = 0,
            rates: dict[str, float] | None = None) -> tf.data.Dataset:
    """Parsed batches of the TFRecord files (gzip, as TFX writes them), shuffled through a buffer when
    ``shuffle``, each record's task sampled at ``rates`` (:func:`task_rates`) when given."""
    dataset = _serialized(files)
    if rates and any(rate != 1 for rate in rates.values()):
        dataset = _sampled(dataset, rates, seed)
    if shuffle:
        dataset = dataset.shuffle(shuffle, seed=seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size).map(lambda r: tf.io.parse_example(r, record_spec()),
                                         num_parallel_calls=tf.data.AUTOTUNE)


class MovieFeatures(tf.Module):
    """Raw Movie Dialog text -> the MemN2N's word ids: the dialog's earlier texts and the KB sentences of its
    last messages as memories, the query; one featurisation for training, evaluation and serving. With
    ``max_tokens``, also ``tokens`` [B, max_tokens]: the LSTM's word ids of the last ``context`` texts and the
    query, the last ``max_tokens`` of them, padded with 0 at the end."""

    def __init__(self, text: GraphEntityText, spec: FeatureSpec, context: int = 2, max_tokens: int = 0,
                 name: str | None = None) -> None:
        super().__init__(name=name)
        self.text, self.featurizer = text, Featurizer(spec)
        self.context, self.max_tokens = context, max_tokens

    def _memories(self, history: tf.RaggedTensor, query: tf.Tensor) -> tuple[tf.RaggedTensor, ...]:
        """The memories (the KB sentences of the last messages, then the dialog's texts, oldest first), their
        speakers, the kept texts and the kept query."""
        said = history.with_flat_values(self.text.keep(history.flat_values))
        asked = self.text.keep(query)
        recent = tf.strings.reduce_join(said[:, -2:], axis=1, separator=" ")
        kb = self.text.long_term(tf.strings.reduce_join(tf.stack([recent, asked], axis=1), axis=1, separator=" "))
        memory = tf.concat([kb, said], axis=1)
        turn = tf.ragged.range(said.row_lengths())
        speakers = tf.concat([kb.with_flat_values(tf.fill(tf.shape(kb.flat_values), USER)),
                              turn.with_flat_values(tf.where(turn.flat_values % 2 == 0, USER, BOT))], axis=1)
        return memory, speakers, said, asked

    def with_memory_slots(self, history: tf.RaggedTensor, query: tf.Tensor) -> tuple[dict[str, tf.Tensor], tf.Tensor]:
        """:meth:`__call__`, and [B, memory_size] the memories' texts in the model's slot order (``Featurizer.slots``;
        "" where empty): what the attention weighs, for showing it. The memories are looked up once for both."""
        found = self._memories(history, query)
        memory = found[0]
        source, valid = self.featurizer.slots(tf.cast(memory.row_lengths(), tf.int32))
        dense = tf.pad(memory.to_tensor(""), [[0, 0], [0, 1]])  # a column to gather from when there is no memory
        return self._features(*found), tf.where(valid, tf.gather(dense, source, batch_dims=1), "")

    def __call__(self, history: tf.RaggedTensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        """``history`` [B, (H)] parsed texts (``GraphEntityText.parse``), oldest first; ``query`` [B]."""
        return self._features(*self._memories(history, query))

    def _features(self, memory: tf.RaggedTensor, speakers: tf.RaggedTensor, said: tf.RaggedTensor,
                  asked: tf.Tensor) -> dict[str, tf.Tensor]:
        features = self.featurizer(memory.to_tensor(""), speakers.to_tensor(""), asked)
        if self.max_tokens:
            read = tf.concat([said[:, -self.context:], tf.expand_dims(asked, 1)], axis=1)
            words = tf.strings.split(tf.strings.lower(tf.strings.reduce_join(read, axis=1, separator=" ")))
            ids = tf.ragged.map_flat_values(self.featurizer.table.lookup, words)[:, -self.max_tokens:]
            features["tokens"] = tf.cast(ids.to_tensor(0, shape=[None, self.max_tokens]), tf.int32)
        return features

    def answer_ids(self, answers: tf.Tensor) -> tf.Tensor:
        """[B] parsed answers -> [B, S] word ids, as candidates are featurised."""
        return self.featurizer.sentence_ids(self.text.keep(answers))

    def parsed(self, history: tf.RaggedTensor, query: tf.Tensor) -> tuple[tf.RaggedTensor, tf.Tensor]:
        """Raw texts (serving) parsed as the ExampleGen parses them."""
        return history.with_flat_values(self.text.parse(history.flat_values)), self.text.parse(query)


def drawn_right(drawn: tf.Tensor, right: tf.Tensor) -> tf.Tensor:
    """[B, n] bool: whether ``drawn`` [n] entity j is among example b's right answers (``right`` [B, R], padded
    with -1).

    A binary search of each drawn entity in the example's sorted answers: some examples have a thousand right
    answers, and comparing every pair (B x n x R) was most of the forward pass (docs/results.md)."""
    ordered = tf.sort(tf.pad(right, [[0, 0], [0, 1]], constant_values=-1), axis=1)  # never empty
    drawn = tf.broadcast_to(tf.cast(drawn, right.dtype)[tf.newaxis, :], [tf.shape(right)[0], tf.shape(drawn)[0]])
    at = tf.minimum(tf.searchsorted(ordered, drawn), tf.shape(ordered)[1] - 1)
    return tf.equal(tf.gather(ordered, at, batch_dims=1), drawn)


def ranked_within(logits: tf.Tensor, span: tf.Tensor, k: int) -> tf.Tensor:
    """[B, k] best candidate indices of each example among its ``span`` [B, 2] = [start, stop) (all when the span
    is empty)."""
    positions = tf.range(tf.shape(logits)[1], dtype=tf.int64)[tf.newaxis, :]
    start, stop = span[:, :1], span[:, 1:]
    inside = (positions >= start) & (positions < stop) | tf.equal(start, stop)
    return tf.math.top_k(tf.where(inside, logits, NEG_INF), k=k).indices


class SampledSoftmax:
    """The streamed models' training logits: each example's state against the batch's gold answers' texts and
    ``sampled`` entities of ``sample_range`` (a sampled softmax), the gold of row b in column b; another example's
    same answer, and a drawn entity that is one of the example's right answers, masked. Mixed in before a model
    that takes ``(vocabulary_size, candidate_ids, **kwargs)`` and holds the candidates' dictionary ``W`` and its
    ``gradient``."""

    def __init__(self, vocabulary_size: int, candidate_ids: np.ndarray, sample_range: tuple[int, int],
                 sampled: int, **kwargs: Any) -> None:
        super().__init__(vocabulary_size, candidate_ids, **kwargs)
        self.candidate_ids = tf.constant(candidate_ids, dtype=tf.int32)
        self.sample_range, self.sampled = sample_range, sampled

    def sampled_logits(self, state: tf.Tensor, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        """[B, B + sampled] logits of ``state`` [B, d]."""
        start, stop = self.sample_range
        drawn = tf.random.uniform([self.sampled], start, stop, dtype=tf.int32)
        gold = bag_of_embeddings(self.W, inputs["answer_ids"], self.gradient)  # [B, d]
        negatives = bag_of_embeddings(self.W, tf.gather(self.candidate_ids, drawn), self.gradient)
        logits = tf.matmul(state, tf.concat([gold, negatives], axis=0), transpose_b=True)  # [B, B + n]
        key = inputs["answer_key"]
        batch = tf.shape(key)[0]
        same = tf.equal(key[:, None], key[None, :]) & ~tf.eye(batch, dtype=tf.bool)  # another example's same answer
        return tf.where(tf.concat([same, drawn_right(drawn, inputs["right"])], axis=1), NEG_INF, logits)


class SampledMemN2N(SampledSoftmax, MemN2N):
    """A MemN2N whose training call scores the gold answers' texts and sampled entities (a sampled softmax);
    its inference call scores every candidate."""

    def call(self, inputs: dict[str, tf.Tensor], training: bool = False) -> tf.Tensor:
        state, _ = self.attend(inputs)
        if not training or "answer_ids" not in inputs:
            return self.score(state, inputs)
        return self.sampled_logits(state, inputs)


class SampledLstm(SampledSoftmax, LstmNetwork):
    """Section 3.3's LSTM (:class:`~models.movie.lstm.LstmNetwork`: a message is the mean of the hidden states
    over its words) trained as :class:`SampledMemN2N` is, from ``tokens`` (:class:`MovieFeatures`); it has no
    memory, so its attention is empty."""

    def call(self, inputs: dict[str, tf.Tensor], training: bool = False) -> tf.Tensor:
        state = self.encode(inputs["tokens"])
        if not training or "answer_ids" not in inputs:
            return self.score(state)
        return self.sampled_logits(state, inputs)

    def predict_with_attention(self, inputs: dict[str, tf.Tensor], candidates: tf.Tensor | None = None
                               ) -> tuple[tf.Tensor, tf.Tensor]:
        batch, slots = tf.shape(inputs["memory"])[0], tf.shape(inputs["memory"])[1]
        return self.score(self.encode(inputs["tokens"]), candidates), tf.zeros(tf.stack([batch, 0, slots]))


class HitsOnDev(keras.callbacks.Callback):
    """Dev hits@k per task after each epoch (each example among its own candidates); the epoch with the best
    mean over tasks is kept, and training stops after ``patience`` epochs without a better one."""

    def __init__(self, dev: tf.data.Dataset, patience: int | None, k: int) -> None:
        super().__init__()
        self.dev, self.patience, self.k = dev, patience, k
        self.best, self.best_epoch, self.best_weights = -1.0, 0, None
        self.history: list[dict[str, Any]] = []
        self._started = 0.0

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._started = time.perf_counter()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        seconds = time.perf_counter() - self._started
        loss = finite_loss(logs, epoch)
        started = time.perf_counter()
        hits = dev_hits(self.model, self.dev, self.k)
        score = float(np.mean(list(hits.values()))) if hits else 0.0
        self.history.append({"epoch": epoch + 1, "loss": loss, "dev_hits": hits, "dev_mean_hits": round(score, 2),
                             "seconds": round(seconds, 1), "eval_seconds": round(time.perf_counter() - started, 1)})
        if score > self.best:
            self.best, self.best_epoch, self.best_weights = score, epoch + 1, self.model.get_weights()
        elif self.patience is not None and epoch + 1 - self.best_epoch >= self.patience:
            self.model.stop_training = True

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.best_weights is not None:
            self.model.set_weights(self.best_weights)


def dev_hits(model: keras.Model, dev: tf.data.Dataset, k: int) -> dict[str, float]:
    """hits@k (%, the paper's k per task) of every task in ``dev`` (batches of features, ``task``, ``right``,
    ``span``)."""
    rank = tf.function(lambda x, span: ranked_within(model(x, training=False), span, k), autograph=False)
    found: dict[str, list[int]] = {}
    for x, task, right, span in dev:
        top = rank(x, span).numpy()
        for name, ranked, gold in zip(task.numpy(), top, right.numpy(), strict=True):
            name = name.decode()
            cut = TASK_K.get(name, 10)
            found.setdefault(name, []).append(bool(np.isin(ranked[:cut], gold[gold >= 0]).any()))
    return {name: round(100 * float(np.mean(hits)), 2) for name, hits in sorted(found.items())}


@dataclass
class TrainingCounts:
    """What one streamed pass over the training records counts: appendix A's tokens (of the queries and earlier
    texts), the longest text in tokens, and each task's exchanges."""

    tokens: Counter
    longest: int
    tasks: dict[str, int]


def count_tokens(files: Sequence[str], batch_size: int = 4096) -> TrainingCounts:
    """Token counts of the training queries and earlier texts (what appendix A's dictionary counts), the longest
    of them in tokens and the exchanges of each task, in one streamed pass."""
    counts: Counter = Counter()
    tasks: Counter = Counter()
    longest = 1

    def tokens(batch: dict[str, tf.Tensor]) -> tuple[tf.Tensor, ...]:
        texts = tf.concat([batch[PARSED["memory"]].values, batch[PARSED["query"]]], axis=0)
        words = tf.strings.split(texts)
        unique, _, count = tf.unique_with_counts(words.flat_values)
        task, _, task_count = tf.unique_with_counts(batch["task"])
        return unique, count, tf.reduce_max(words.row_lengths()), task, task_count

    for unique, count, most, task, task_count in records(files, batch_size).map(tokens):
        counts.update(dict(zip((u.decode() for u in unique.numpy()), count.numpy().tolist(), strict=True)))
        tasks.update(dict(zip((t.decode() for t in task.numpy()), task_count.numpy().tolist(), strict=True)))
        longest = max(longest, int(most))
    return TrainingCounts(counts, longest, dict(sorted(tasks.items())))


@dataclass
class MovieModelParts:
    """What training and serving build from the corpus resources and the token counts (the dictionary and the KB
    lookup are ``features.text``)."""

    features: MovieFeatures
    spec: FeatureSpec
    candidates: MovieCandidates


def build_parts(entities: Sequence[str], triples: Sequence[Sequence[str]], candidates: MovieCandidates,
                counts: Counter, longest: int, config: StreamedConfig) -> MovieModelParts:
    """The dictionary (entities and words said ``min_count`` times), the KB sentences in its tokens, the
    candidates in its tokens and the feature spec."""
    entity_tokens = {entity_key(e).replace(" ", "_") for e in entities if e.strip()}
    words = sorted(w for w, n in counts.items() if n >= config.min_count and w not in entity_tokens)
    tokens = Parser(GraphEntityText(entities, words=words), "tokens")

    subjects, values = tokens([t[0] for t in triples]), tokens([t[2] for t in triples])
    kb = [f"{s} {t[1]} {v}" for s, t, v in zip(subjects, triples, values, strict=True)]
    text = GraphEntityText(entities, kb, words=words, max_frequency=config.max_frequency, max_kb=config.max_kb)
    candidate_tokens = tokens(candidates.texts)
    spec = spec_from_sentences(candidate_tokens, [], [*kb, *words, *entity_tokens],
                               memory_size=config.max_memory)
    spec = replace(spec, sentence_size=min(40, max(spec.sentence_size, longest)))
    max_tokens = config.max_tokens if config.encoder == "lstm" else 0
    return MovieModelParts(MovieFeatures(text, spec, config.context, max_tokens), spec, candidates)


def training_data(parts: MovieModelParts, files: Sequence[str], config: StreamedConfig,
                  rates: dict[str, float] | None = None) -> tf.data.Dataset:
    """Training batches (features, the drawn gold answer's ids and key, the right answers), each task's records
    sampled at ``rates`` when given."""
    features = parts.features

    def prepare(index: tf.Tensor, batch: dict[str, tf.Tensor]) -> tuple[dict[str, tf.Tensor], tf.Tensor]:
        answers = tf.RaggedTensor.from_sparse(batch[PARSED["answers"]])
        choices = tf.minimum(answers.row_lengths(), MAX_ANSWERS)
        # Stateless, from the batch's position: the batches are prepared in parallel, in any order.
        draw = tf.random.stateless_uniform(tf.shape(choices), seed=tf.stack([tf.constant(config.seed, tf.int64),
                                                                               index]))
        pick = tf.cast(draw * tf.cast(choices, tf.float32), tf.int64)
        chosen = tf.gather(answers.flat_values, answers.row_starts() + pick)
        x = features(tf.RaggedTensor.from_sparse(batch[PARSED["memory"]]), batch[PARSED["query"]])
        x["answer_ids"] = features.answer_ids(chosen)
        x["answer_key"] = tf.strings.to_hash_bucket_fast(chosen, 1 << 62)
        x["right"] = tf.sparse.to_dense(batch[ANSWER_INDICES], default_value=-1)
        return x, tf.zeros_like(x["answer_key"])  # the gold is each row's own column: no label needed

    options = tf.data.Options()
    # Several workers each keep every n-th batch: right whatever the number of TFRecord files.
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dataset = records(files, config.batch_size, config.shuffle_buffer, config.seed, rates).enumerate()
    dataset = dataset.map(prepare, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)
    return dataset.with_options(options)


def in_batch_softmax(y_true: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    """Softmax cross-entropy of :class:`SampledMemN2N`'s training logits, whose gold answer of row b is column b:
    computed from the logits alone, so a batch split over replicas keeps each row's gold."""
    return softmax_cross_entropy(tf.range(tf.shape(logits)[0]), logits)


def evaluation_data(parts: MovieModelParts, files: Sequence[str], batch_size: int = 512) -> tf.data.Dataset:
    features = parts.features

    def prepare(batch: dict[str, tf.Tensor]) -> tuple:
        x = features(tf.RaggedTensor.from_sparse(batch[PARSED["memory"]]), batch[PARSED["query"]])
        return x, batch["task"], tf.sparse.to_dense(batch[ANSWER_INDICES], default_value=-1), batch[CANDIDATE_RANGE]

    return records(files, batch_size).map(prepare).prefetch(2)


def steps_per_execution(files: Sequence[str], config: StreamedConfig, exchanges: int | None = None) -> int:
    """``config.steps_per_execution``, or fewer when the training stream holds fewer batches: a stream shorter than
    one execution counted an epoch of 0 steps, and Keras' progress line then failed (``math domain error``) on a
    corpus smaller than a batch. Counts at most that many batches (of records, unparsed); a sampled stream
    (``exchanges`` an epoch on average, varying by epoch) counts half its expected batches, for slack."""
    wanted = config.steps_per_execution
    if exchanges is not None:
        return max(1, min(wanted, exchanges // config.batch_size // 2))
    batches = int(_serialized(files).batch(config.batch_size).take(wanted).reduce(0, lambda count, _: count + 1))
    return max(1, min(wanted, batches))


def train_streamed(entities: Sequence[str], triples: Sequence[Sequence[str]], candidates: MovieCandidates,
                   train_files: Sequence[str], eval_files: Sequence[str], config: StreamedConfig,
                   out: str | None = None, verbose: int = 0, log_dir: str | None = None,
                   strategy: tf.distribute.Strategy | None = None) -> dict[str, Any]:
    """Fit on the training records, keep the best epoch on the eval records, export to ``out``; the summary.

    The model is built and fitted under ``strategy`` (default: the one in scope): under several workers' strategy
    each keeps its share of the batches (``training_data``) and every worker evaluates dev in full, so all stop at
    the same epoch."""
    if out is not None:
        prepare_output(out)
    keras.utils.set_random_seed(config.seed)
    started = time.perf_counter()
    counted = count_tokens(train_files)
    parts = build_parts(entities, triples, candidates, counted.tokens, counted.longest, config)
    rates = task_rates(counted.tasks, config)
    epoch = round(sum(counted.tasks[task] * rate for task, rate in rates.items()))
    prepared = time.perf_counter() - started
    featurizer = parts.features.featurizer
    candidate_ids = featurizer.sentence_ids(tf.constant(parts.spec.candidates)).numpy()
    strategy = strategy or tf.distribute.get_strategy()
    with strategy.scope():
        gradient = ROWS if config.row_updates else SUMMED
        sampled = (len(parts.spec.vocabulary), candidate_ids, candidates.ranges[ENTITIES], config.sampled)
        if config.encoder == "lstm":
            model = SampledLstm(*sampled, embedding_dim=config.embedding_dim, seed=config.seed, gradient=gradient)
        else:
            model = SampledMemN2N(*sampled, embedding_dim=config.embedding_dim, hops=config.hops,
                                  dictionaries=config.dictionaries, seed=config.seed, gradient=gradient)
        adam = RowAdam if config.row_updates else keras.optimizers.Adam
        model.compile(optimizer=adam(learning_rate=config.learning_rate, clipnorm=config.clipnorm),
                      loss=in_batch_softmax,
                      steps_per_execution=(steps_per_execution(train_files, config,
                                                               epoch if config.balanced else None)
                                           if strategy.num_replicas_in_sync == 1 else 1))
    best = HitsOnDev(evaluation_data(parts, eval_files), config.patience, config.top_k)
    callbacks: list[keras.callbacks.Callback] = [best]
    if log_dir:
        callbacks.append(keras.callbacks.TensorBoard(log_dir=log_dir))
    fitted = time.perf_counter()
    with warnings.catch_warnings():
        # A stream has no length until its first epoch ends, where Keras warns "Your input ran out of data;
        # interrupting training" and goes on with the next epoch: nothing is interrupted. (An epoch's last call,
        # several steps, runs past the last batch, after which the optimizer has counted a step with no batch:
        # docs/results.md. models.training's graph loop does not; moving this trainer to it would move its figures.)
        warnings.filterwarnings("ignore", message="Your input ran out of data")
        model.fit(training_data(parts, train_files, config, rates), epochs=config.epochs, verbose=verbose,
                  callbacks=callbacks)
    summary = {"config": asdict(config), "vocabulary_size": len(parts.spec.vocabulary),
               "candidates": len(parts.spec.candidates), "kb_sentences": parts.features.text.kb_size,
               "memory_size": parts.spec.memory_size, "sentence_size": parts.spec.sentence_size,
               "task_exchanges": counted.tasks, "task_rates": {t: round(r, 4) for t, r in rates.items()},
               "epoch_exchanges": epoch,
               "best_epoch": best.best_epoch, "dev_mean_hits": round(best.best, 2),
               "dev_hits": best.history[best.best_epoch - 1]["dev_hits"] if best.best_epoch else {},
               "replicas": strategy.num_replicas_in_sync, "prepare_seconds": round(prepared, 1),
               "train_seconds": round(time.perf_counter() - fitted, 1),
               "history": best.history}
    if out is not None:
        export(MovieServingModule(parts, model, config.top_k), out)
    return summary


class MovieServingModule(tf.Module):
    """The exported movie model: raw text in (the dialog's earlier texts and the query), the ranked candidates'
    texts out, the dictionary, KB memory lookup and candidates inside. The signatures are those of
    ``models.serving.export`` (``serving_default``, ``serving_speakers``, ``serving_examples``); speakers do not
    change a movie model's input (the user speaks first, then the two alternate), only which entries are padding.
    ``serving_examples`` ranks each example among its ``candidate_range``, the other two among every candidate."""

    def __init__(self, parts: MovieModelParts, model: SampledMemN2N | SampledLstm, top_k: int = 100) -> None:
        super().__init__()
        self.features = parts.features
        hold_models(self, model=model)
        # Every candidate's embeddings, computed once: the model is done training, and each call (a turn served, a
        # batch the Evaluator ranks) computed all of them again (every entity of the world, and the replies).
        self.candidate_embeddings = tf.Variable(model.candidate_embeddings(), trainable=False,
                                                name="candidate_embeddings")
        self.responses = tf.constant(parts.candidates.texts)
        self.top_k = min(top_k, len(parts.candidates.texts))
        spec = json.loads(parts.spec.to_json())
        # What `dialog chat` tells its user: this model answers from the KB it holds, not from API calls.
        spec[LONG_TERM_MEMORY] = {"kb_sentences": parts.features.text.kb_size}
        self._spec_json = json.dumps(spec)

    def rank(self, history: tf.RaggedTensor, query: tf.Tensor, span: tf.Tensor,
             memories: bool = True) -> dict[str, tf.Tensor]:
        """The ranked candidates of parsed texts, and (``memories``) the texts the attention weighs, in its slot
        order: for showing a conversation's attention, not for the Evaluator (``serving_examples``), which would
        carry a memory's worth of strings an exchange through TFMA for nothing."""
        if memories:
            features, slots = self.features.with_memory_slots(history, query)
        else:
            features = self.features(history, query)
        logits, attention = self.model.predict_with_attention(features, self.candidate_embeddings)
        indices = ranked_within(logits, span, self.top_k)
        ranked = {"responses": tf.gather(self.responses, indices), "scores": tf.gather(logits, indices, batch_dims=1),
                  "indices": indices, "attention": attention}
        if memories:
            ranked["memories"] = slots
        return ranked

    def _everything(self, query: tf.Tensor) -> tf.Tensor:
        return tf.zeros([tf.shape(query)[0], 2], tf.int64)

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None, None], tf.string, name="memory"),
                                  tf.TensorSpec([None], tf.string, name="query")])
    def serve(self, memory: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        return self.rank(*self.features.parsed(tf.RaggedTensor.from_tensor(memory, padding=""), query),
                         self._everything(query))

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None, None], tf.string, name="memory"),
                                  tf.TensorSpec([None, None], tf.string, name="memory_speaker"),
                                  tf.TensorSpec([None], tf.string, name="query")])
    def serve_speakers(self, memory: tf.Tensor, memory_speaker: tf.Tensor, query: tf.Tensor) -> dict[str, tf.Tensor]:
        return self.rank(*self.features.parsed(tf.ragged.boolean_mask(memory, tf.not_equal(memory_speaker, "")),
                                               query), self._everything(query))

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve_examples(self, examples: tf.Tensor) -> dict[str, tf.Tensor]:
        parsed = tf.io.parse_example(examples, record_spec())
        return self.rank(tf.RaggedTensor.from_sparse(parsed[PARSED["memory"]]), parsed[PARSED["query"]],
                         parsed[CANDIDATE_RANGE], memories=False)
