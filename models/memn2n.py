"""End-to-end Memory Network for response ranking: appendix A of Bordes et al. (2017), section 4.5 match type.

Shapes: B batch, M memory slots, S words per sentence, d embedding size, C candidates, K entity types, P entity
words per type in a candidate.

- Sentences are bags of words: summed embeddings of their word ids (id 0 is padding and adds nothing).
- q = A Phi(query); for each hop h: p = softmax(q^T m_i) over non-empty slots, o = sum_i p_i m_i,
  q <- q + R_h o, with m_i = A Phi(memory_i) (A shared by query and memories).
- Candidate y scores q^T W Phi(y); with match type, W Phi(y) also gets the embedding of the type word of each
  type k for which one of y's words of type k occurs in the query or the memory.
"""

from __future__ import annotations

from collections.abc import Callable

import keras
import numpy as np
import tensorflow as tf
from keras import ops

NEG_INF = -1e9


class KeepRows(keras.constraints.Constraint):
    """Keeps the rows of words outside ``rows`` (bool [V]) at zero, after initialisation and every update."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = np.asarray(rows, dtype=np.float32)[:, None]

    def __call__(self, w: tf.Tensor) -> tf.Tensor:
        return w * ops.cast(self.rows, w.dtype)


class KeepRowsInitializer(keras.initializers.Initializer):
    def __init__(self, inner: keras.initializers.Initializer, rows: np.ndarray) -> None:
        self.inner, self.keep = inner, KeepRows(rows)

    def __call__(self, shape, dtype=None):  # noqa: ANN001, ANN204 (Keras' signature)
        return self.keep(self.inner(shape, dtype=dtype))


# How a bag of word embeddings back-propagates (:func:`summed_rows`): the same sums, a different gradient.
SUMMED, PER_OCCURRENCE, ROWS = "summed", "per_occurrence", "rows"
GRADIENTS = (SUMMED, PER_OCCURRENCE, ROWS)


def bag_of_embeddings(embedding: keras.layers.Embedding, ids: tf.Tensor, gradient: str = SUMMED) -> tf.Tensor:
    """[..., S] int ids -> [..., d]: the sum of the word embeddings, padding (id 0) excluded (``gradient``:
    :func:`summed_rows`).

    Only the non-padding ids are looked up (:func:`summed_rows`): a task-5 memory is a quarter full and its
    sentences a third of the sentence size, so the padded formulation gathered, and back-propagated through,
    ten times the rows that count."""
    ids = tf.cast(ids, tf.int32)  # Keras' symbolic build may hand float placeholders
    shape = tf.shape(ids)
    rows = tf.reshape(ids, [-1, shape[-1]])
    where = tf.where(rows > 0)  # [n, 2]: (sentence, position) of every real word
    sums = summed_rows(embedding, tf.gather_nd(rows, where), where[:, 0], tf.shape(rows)[0], gradient)
    return tf.reshape(sums, tf.concat([shape[:-1], [embedding.output_dim]], axis=0))


def summed_rows(embedding: keras.layers.Embedding, ids: tf.Tensor, bags: tf.Tensor, count: tf.Tensor,
                gradient: str = SUMMED) -> tf.Tensor:
    """[count, d]: bag b's sum of the embeddings of the ``ids`` whose ``bags`` entry is b (sorted).

    The same sums every way; the gradient differs, and with it Adam's step. ``SUMMED`` (the default): one fused
    sparse segment sum, whose gradient is a dense [V, d] table holding the sum over each word's occurrences; the
    fastest for a vocabulary of a few thousand words. ``ROWS``: the distinct words' rows are gathered first, so the
    gradient is those rows alone (``tf.IndexedSlices``, the same values as ``SUMMED``): with a vocabulary of 100k
    words a dense table per step costs more than the rest of the step, and :class:`models.optimizers.RowAdam`
    steps just those rows. ``PER_OCCURRENCE``: the rows are gathered one per occurrence, then summed, so the
    gradient has a row per occurrence, as a ``keras.layers.Embedding`` lookup gives it; Keras' Adam sums those rows
    into its first moment but their squares into its second, so a word said k times in a batch takes a step up to
    sqrt(k) larger. That is slower and generalises better to unseen entities (the OOV test sets): Table 2's MemN2N
    rows use it."""
    if gradient not in GRADIENTS:
        raise ValueError(f"gradient must be one of {GRADIENTS}, not {gradient!r}")
    if not embedding.built:
        embedding.build()
    if gradient == PER_OCCURRENCE:
        # The layer's lookup (``ops.take``) would first map negative ids, which a bag never holds, with a compare
        # and a select over every id: the table read and gathered as it does, without them.
        return segment_sum(tf.gather(ops.convert_to_tensor(embedding.embeddings), ids), bags, count)
    if gradient == ROWS:
        words, position = tf.unique(ids)
        return tf.sparse.segment_sum(tf.gather(embedding.embeddings.value, words), position, bags,
                                     num_segments=count)
    return tf.sparse.segment_sum(embedding.embeddings.value, ids, bags, num_segments=count)


@tf.autograph.experimental.do_not_convert  # AutoGraph would convert the body and lose the custom gradient
@tf.custom_gradient
def segment_sum(data: tf.Tensor, segment_ids: tf.Tensor, count: tf.Tensor) -> tuple[tf.Tensor, Callable]:
    """``tf.math.unsorted_segment_sum`` for ``segment_ids`` that are never negative (rows of bags, candidates of
    pairs), the same sums and the same gradient: TF's gradient gathers the upstream rows, then zeroes those of
    negative ids with a select over the whole [n, d] gradient, the costliest op of a step's fixed part on the
    candidates' words (docs/results.md has the profile); here the gather alone."""

    def gradient(upstream: tf.Tensor) -> tuple[tf.Tensor, None, None]:
        return tf.gather(upstream, segment_ids), None, None

    return tf.math.unsorted_segment_sum(data, segment_ids, count), gradient


def matched_entity_types(inputs: dict[str, tf.Tensor], match_type_ids: tf.Tensor, vocabulary_size: int) -> tf.Tensor:
    """[B, C, K] bool: candidate c has a word of type k (``match_type_ids`` [C, K, P]) that also occurs in the
    query or the memory (section 4.5's three conditions; the KB gave the types)."""
    batch = ops.shape(inputs["query"])[0]
    said = tf.cast(ops.concatenate([ops.reshape(inputs["memory"], (batch, -1)), inputs["query"]], axis=1), tf.int32)
    seen = tf.math.bincount(said, minlength=vocabulary_size, maxlength=vocabulary_size, axis=-1) > 0  # [B, V]
    seen = tf.concat([tf.zeros_like(seen[:, :1]), seen[:, 1:]], axis=1)  # padding is never a match
    return ops.any(tf.gather(seen, match_type_ids, axis=1), axis=-1)


def sparse_bags(ids: np.ndarray) -> tf.SparseTensor:
    """[N, S] padded word ids as a sparse id matrix without the padding, for TF's embedding-bag op."""
    rows, columns = np.nonzero(ids)
    return tf.SparseTensor(np.stack([rows, columns], axis=1).astype(np.int64), ids[rows, columns].astype(np.int64),
                           dense_shape=ids.shape)


def embed_bags(embedding: keras.layers.Embedding, bags: tf.SparseTensor, gradient: str = SUMMED) -> tf.Tensor:
    """[N, d]: each bag's summed embeddings (faster than padded bags over 4,212 candidates). One sparse
    segment sum over the constant ids (TF's embedding_lookup_sparse would de-duplicate them every step), or,
    or as ``gradient`` says (:func:`summed_rows`)."""
    return summed_rows(embedding, bags.values, bags.indices[:, 0], bags.dense_shape[0], gradient)


def match_type_scores(state: tf.Tensor, matched: tf.Tensor, embedding: keras.layers.Embedding,
                      type_word_ids: tf.Tensor) -> tf.Tensor:
    """[B, C]: for each candidate, state^T (embedding of type word k) summed over its matched types k.

    ``matched`` is [B or 1, C, K]; adding a type word to a candidate's bag adds exactly this to its score. The
    reference formulation: :class:`TypedCandidates` computes the same scores without the [B, C, K] tensors.
    """
    type_scores = ops.matmul(state, ops.transpose(embedding(type_word_ids)))  # [B, K]
    return ops.sum(ops.cast(matched, state.dtype) * type_scores[:, None, :], axis=-1)


class TypedCandidates:
    """Match type (section 4.5) over the (candidate, type) pairs that exist, not over every candidate x type.

    Most candidates hold one entity type or none (task 5: 4,800 pairs for 4,212 candidates x 7 types), so
    gathering "was one of the pair's words said" for the pairs only, then summing each pair's type score into
    its candidate, gives :func:`match_type_scores` of :func:`matched_entity_types` with a sixth of the gathers
    and no [B, C, K] tensor.
    """

    def __init__(self, match_type_ids: np.ndarray, type_word_ids: np.ndarray, vocabulary_size: int) -> None:
        match_type_ids = np.asarray(match_type_ids)
        candidates, types = np.nonzero((match_type_ids > 0).any(axis=-1))
        self.words = tf.constant(match_type_ids[candidates, types], dtype=tf.int32)  # [N, P], 0 = none
        self.types = tf.constant(types, dtype=tf.int32)  # [N]
        self.candidates = tf.constant(candidates, dtype=tf.int32)  # [N]
        self.count = int(match_type_ids.shape[0])
        self.type_word_ids = tf.constant(type_word_ids, dtype=tf.int32)  # [K]
        self.vocabulary_size = vocabulary_size

    def said(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        """[N, B], 1.0 where one of the pair's words occurs in the query or the memory of example b. Pairs
        first: the gather takes whole rows of [V, B], which is faster than gathering columns of [B, V]."""
        batch = tf.shape(inputs["query"])[0]
        words = tf.cast(tf.concat([tf.reshape(inputs["memory"], [batch, -1]), inputs["query"]], axis=1), tf.int32)
        seen = tf.math.bincount(words, minlength=self.vocabulary_size, maxlength=self.vocabulary_size,
                                binary_output=True, axis=-1)
        seen = tf.transpose(tf.cast(seen, tf.float32))  # [V, B], 1 where said
        seen = tf.concat([tf.zeros_like(seen[:1]), seen[1:]], axis=0)  # padding is never a match
        return tf.reduce_max(tf.gather(seen, self.words), axis=1)

    def constant_inputs(self, inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """``{"said": [B, N] uint8}``: :meth:`said` once, ahead of training, as a per-example input."""
        return {"said": tf.cast(tf.transpose(self.said(inputs)), tf.uint8)}

    def said_of(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        """[N, B]: ``inputs["said"]`` ([B, N], :meth:`said` computed ahead of training) when given, else
        :meth:`said`."""
        if "said" in inputs:
            return tf.transpose(tf.cast(inputs["said"], tf.float32))
        return self.said(inputs)

    def scores(self, state: tf.Tensor, embedding: keras.layers.Embedding, said: tf.Tensor | None) -> tf.Tensor:
        """[B, C]: each candidate's sum of state^T (type word embedding) over its pairs that ``said`` ([N, B])
        marks (every pair when ``said`` is None: appendix D's match type without history).

        Pairs and candidates along the first axis: row gathers and a segment sum over rows, which, with the
        backward pass, were faster than a one-hot matmul over [B, N] and than column gathers."""
        type_scores = tf.matmul(embedding(self.type_word_ids), state, transpose_b=True)  # [K, B]
        pair_scores = tf.gather(type_scores, self.types)  # [N, B]
        if said is not None:
            pair_scores = pair_scores * said
        return tf.transpose(segment_sum(pair_scores, self.candidates, self.count))  # [B, C]


class MemN2N(keras.Model):
    """Scores every candidate for a (memory, query) pair. ``call`` returns logits [B, C]."""

    def __init__(self, vocabulary_size: int, candidate_ids: np.ndarray, embedding_dim: int = 128, hops: int = 3,
                 match_type_ids: np.ndarray | None = None, type_word_ids: np.ndarray | None = None,
                 seed: int = 0, dictionaries: int = 2, learned_words: np.ndarray | None = None,
                 gradient: str = SUMMED, **kwargs) -> None:
        """``dictionaries``: 1, one embedding for input, memories and candidates; 2, A for input and memories and
        W for candidates (appendix A of Bordes et al.); 3, a third, C, for memories (Dodge et al.'s footnote 8).

        ``learned_words`` (bool [V]): when given, the other words keep a zero embedding. A word that no training
        dialog holds (an OOV restaurant, say) then adds nothing to a sentence, instead of a vector that training
        only ever pushed down as part of wrong candidates; match type still sees it.

        ``gradient``: how the sentence bags back-propagate (:func:`summed_rows`): ``PER_OCCURRENCE``, a row per word
        occurrence, which Keras' Adam steps differently; ``ROWS``, the batch's words' rows alone, for a large
        vocabulary. The scores are the same."""
        super().__init__(**kwargs)
        if dictionaries not in (1, 2, 3):
            raise ValueError(f"dictionaries must be 1, 2 or 3, not {dictionaries}")
        self.vocabulary_size = vocabulary_size
        if gradient not in GRADIENTS:
            raise ValueError(f"gradient must be one of {GRADIENTS}, not {gradient!r}")
        self.gradient = gradient

        def embedding(name: str, seed: int) -> keras.layers.Embedding:
            init = keras.initializers.RandomNormal(stddev=0.1, seed=seed)
            if learned_words is None:
                return keras.layers.Embedding(vocabulary_size, embedding_dim, embeddings_initializer=init, name=name)
            return keras.layers.Embedding(vocabulary_size, embedding_dim, name=name,
                                          embeddings_initializer=KeepRowsInitializer(init, learned_words),
                                          embeddings_constraint=KeepRows(learned_words))

        self.A = embedding("A", seed)
        self.W = self.A if dictionaries == 1 else embedding("W", seed)
        self.C = self.A if dictionaries < 3 else embedding("C", seed + 99)
        self.R = [keras.layers.Dense(embedding_dim, use_bias=False, name=f"R{h}",
                                     kernel_initializer=keras.initializers.RandomNormal(stddev=0.1, seed=seed + h))
                  for h in range(hops)]
        for h, layer in enumerate(self.R):
            # A list attribute is invisible to TensorFlow's checkpoint graph; named attributes put each R in the
            # SavedModel's variables under model/R{h}, so TF1-style loaders (saved_model_cli run) restore it too.
            setattr(self, f"R{h}", layer)
        # Constants that travel with the model: the candidates' word ids and, for match type, their typed words.
        self.candidate_bags = sparse_bags(candidate_ids)  # [C, S] word ids
        self.match_type = match_type_ids is not None
        if self.match_type:
            self.match_type_ids = tf.constant(match_type_ids, dtype=tf.int32)  # [C, K, P]
            self.typed = TypedCandidates(match_type_ids, type_word_ids, vocabulary_size)

    def attend(self, inputs: dict[str, tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        """The controller state after the last hop, [B, d], and the attention of every hop, [B, hops, M].

        Memories are most recent first, so the filled slots are a prefix: the hops run over the batch's longest
        memory only (a quarter fewer slots on task 5), and the attention is padded back to M."""
        memory_ids, query_ids = inputs["memory"], inputs["query"]
        slots = tf.shape(memory_ids)[1]
        filled = ops.any(ops.greater(memory_ids, 0), axis=-1)  # [B, M]; empty slots never get attention
        used = tf.maximum(tf.reduce_max(tf.reduce_sum(tf.cast(filled, tf.int32), axis=1)), 1)
        memory_ids, filled = memory_ids[:, :used], filled[:, :used]
        state = bag_of_embeddings(self.A, query_ids, self.gradient)  # [B, d]
        if not self.R:  # no hop: supervised embeddings ("a Memory Network with no attention over memory")
            return state, tf.zeros(tf.stack([tf.shape(state)[0], 0, slots]), dtype=state.dtype)
        memories = bag_of_embeddings(self.C, memory_ids, self.gradient)  # [B, used, d]
        mask = ops.cast(filled, state.dtype)
        attention = []
        for R in self.R:  # matvec: with its gradient, faster than einsum or broadcast-and-sum here
            scores = ops.where(filled, tf.linalg.matvec(memories, state), NEG_INF)
            weights = ops.softmax(scores, axis=-1) * mask  # all-empty memory: zeros
            state = state + R(tf.linalg.matvec(memories, weights, transpose_a=True))
            attention.append(tf.pad(weights, [[0, 0], [0, slots - used]]))
        return state, ops.stack(attention, axis=1)

    def candidate_embeddings(self) -> tf.Tensor:
        """[C, d]: each candidate's bag of output embeddings, as :meth:`score` computes it."""
        return embed_bags(self.W, self.candidate_bags, self.gradient)

    def score(self, state: tf.Tensor, inputs: dict[str, tf.Tensor], candidates: tf.Tensor | None = None
              ) -> tf.Tensor:
        """Logits [B, C] of every candidate against the final controller state (``candidates``: their embeddings
        computed once, for a model done training: a SavedModel of many candidates holds them rather than
        recomputing them at every call)."""
        candidates = self.candidate_embeddings() if candidates is None else candidates  # [C, d]
        logits = ops.matmul(state, ops.transpose(candidates))
        if self.match_type:
            logits = logits + self._match_type_logits(state, inputs)
        return logits

    def matched_types(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        """[B, C, K] bool, for inspection: which entity types of which candidates match (section 4.5)."""
        return matched_entity_types(inputs, self.match_type_ids, self.vocabulary_size)

    def _match_type_logits(self, state: tf.Tensor, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        return self.typed.scores(state, self.W, self.typed.said_of(inputs))

    def constant_inputs(self, inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """Inputs that depend on the example only, not on the weights (match type's ``said``, [B, N] uint8):
        training computes them once, so that no epoch recomputes them; serving computes them in the graph."""
        return self.typed.constant_inputs(inputs) if self.match_type else {}

    def call(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
        state, _ = self.attend(inputs)
        return self.score(state, inputs)

    def predict_with_attention(self, inputs: dict[str, tf.Tensor], candidates: tf.Tensor | None = None
                               ) -> tuple[tf.Tensor, tf.Tensor]:
        state, attention = self.attend(inputs)
        return self.score(state, inputs, candidates), attention
