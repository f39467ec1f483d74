"""Featuriser, MemN2N, training and export: shapes, masking, match type, a toy task learned, export fidelity."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from data.babi.generation import GenerationPlan, generate
from data.layout import discover
from models.examples import TurnExample, pad_batch, split_examples
from models.features import (
    PAD_ID,
    TYPE_PREFIX,
    FeatureSpec,
    Featurizer,
    build_spec,
    candidate_type_slots,
    kb_entity_types,
    time_word,
    tokenize,
)
from models.memn2n import (
    PER_OCCURRENCE,
    ROWS,
    SUMMED,
    bag_of_embeddings,
    match_type_scores,
    matched_entity_types,
    segment_sum,
    summed_rows,
)
from models.methods import best_answers
from models.serving.evaluate import evaluate
from models.serving.explain import explain_turns
from models.serving.export import DialogServingModule, export
from models.serving.ranker import SavedModelRanker
from models.training import (
    MemN2NConfig,
    answer_indices,
    build_model,
    featurize,
    id_dtype,
    train,
    train_config,
)


@pytest.fixture(scope="module")
def task1(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("task1")
    generate(GenerationPlan(seed=0, dialogs_per_split=30, tasks=(1,)), out, runner="local")
    return discover(out)[1]


@pytest.fixture(scope="module")
def spec(task1) -> FeatureSpec:
    return build_spec(task1, memory_size=12)


def example(memory: list[str], speakers: list[str], query: str, answer: str = "") -> TurnExample:
    return TurnExample("d", "babi-1", "trn", 0, tuple(memory), tuple(speakers), query, answer)


def test_tf_tokenisation_matches_python(spec: FeatureSpec) -> None:
    featurizer = Featurizer(spec)
    texts = ["api_call Italian paris  six cheap", "i'm on it", "what do you think of this option: resto_x", ""]
    ids = featurizer.sentence_ids(tf.constant(texts)).numpy()
    for text, row in zip(texts, ids, strict=True):
        expected = [spec.word_id(word) for word in tokenize(text)][: spec.sentence_size]
        assert list(row[: len(expected)]) == expected and not row[len(expected):].any()


def test_memory_is_most_recent_first_with_time_and_speaker_words(spec: FeatureSpec) -> None:
    batch = [example(["hi", "hello what can i help you with today", "resto_x R_rating 5"], ["user", "bot", "user"],
                     "<SILENCE>"), example([], [], "hi")]
    features = Featurizer(spec)(*(tf.constant(a, tf.string) for a in pad_batch(batch)))
    memory = features["memory"].numpy()
    assert memory.shape == (2, 12, spec.sentence_size + 2)
    words = [spec.vocabulary[i] for i in memory[0, 0] if i != PAD_ID]
    assert words == ["<unk>", "r_rating", "5", time_word(0), "#user"]  # resto_x is no word of the corpus
    assert [spec.vocabulary[i] for i in memory[0, 1, -2:]] == [time_word(1), "#bot"]
    assert not memory[0, 3:].any() and not memory[1].any()  # empty slots, and a first turn with no memory


def test_padding_never_gets_attention(spec: FeatureSpec, task1) -> None:
    model = build_model(spec, MemN2NConfig(hops=3, embedding_dim=16))
    batch = split_examples(task1, "trn")[:6]
    features = Featurizer(spec)(*(tf.constant(a, tf.string) for a in pad_batch(batch)))
    logits, attention = model.predict_with_attention(features)
    attention = attention.numpy()
    assert logits.shape == (6, len(spec.candidates)) and attention.shape == (6, 3, 12)
    for row, e in enumerate(batch):
        filled = min(len(e.memory), 12)
        assert np.all(attention[row, :, filled:] == 0)
        if filled:
            np.testing.assert_allclose(attention[row].sum(axis=-1), 1.0, rtol=1e-5)
        else:
            assert not attention[row].any()


def test_match_type_rule() -> None:
    types = kb_entity_types([("resto_a", "R_cuisine", "thai"), ("resto_a", "R_phone", "resto_a_phone"),
                             ("resto_a", "R_location", "two words")])
    assert types == {"thai": "cuisine", "resto_a_phone": "phone"}  # several-word values stay untyped
    vocabulary = ("<pad>", "<unk>", "#type_cuisine", "#type_phone", "thai", "french", "resto_a_phone", "here",
                  "it", "is", "api_call", "food")
    spec = FeatureSpec(vocabulary, {**types, "french": "cuisine"},
                       ("here it is resto_a_phone", "api_call thai", "api_call french", "thai food"), 4, 4)
    entity_ids, type_ids = candidate_type_slots(spec)
    assert [spec.vocabulary[i] for i in type_ids] == ["#type_cuisine", "#type_phone"]
    model = build_model(spec, MemN2NConfig(match_type=True, hops=1, embedding_dim=8))
    features = Featurizer(spec)(tf.constant([["i like thai food"]]), tf.constant([["user"]]),
                                tf.constant(["anything"]))
    matched = model.matched_types(features).numpy()[0]
    # 1) a KB entity of the type, 2) in the candidate, 3) in the input or memory:
    assert matched.tolist() == [[False, False],  # phone not said
                                [True, False],  # thai said
                                [False, False],  # french not said
                                [True, False]]  # thai said; "food" is no entity


def test_memn2n_learns_a_small_task1(task1, tmp_path: Path) -> None:
    out = tmp_path / "model"
    # 30 dialogs: batches of 32 at Adam's 0.01 give it enough steps (the defaults are for corpora of thousands)
    summary = train(task1, MemN2NConfig(match_type=True, hops=2, embedding_dim=32, learning_rate=0.01, epochs=30,
                                       batch_size=32), out=out)
    assert summary["best_epoch"] >= 1 and summary["dev_per_response_accuracy"] > 85
    ranker = SavedModelRanker(out)
    assert evaluate(ranker, split_examples(task1, "trn"))["per_response_accuracy"] == 100.0  # memorised
    # and learned: dialogs it never saw, new restaurants included. Seeds 0-3 give 92.3-93.5 and 72.7-90.4 (the
    # OOV set of 30 dialogs is noisy; at seed 0 it was 84.5 with a gradient row per word occurrence, before the
    # fused sparse bags: models.memn2n.summed_rows).
    held_out, oov = (evaluate(ranker, split_examples(task1, split)) for split in ("tst", "tst-OOV"))
    assert held_out["per_response_accuracy"] >= 90.0 and oov["per_response_accuracy"] >= 70.0, (held_out, oov)
    assert held_out["hits_at_10"] == 100.0


def test_featurize_keeps_the_featurizers_ids_in_a_narrow_type(task1, spec: FeatureSpec) -> None:
    examples = split_examples(task1, "dev")[:70]
    features = featurize(Featurizer(spec), examples, chunk=32)  # chunks of 32, 32 and 6 turns
    expected = Featurizer(spec)(*(tf.constant(a, tf.string) for a in pad_batch(examples)))
    for key in ("memory", "query"):
        assert features[key].dtype == np.uint16
        np.testing.assert_array_equal(features[key], expected[key].numpy())
    assert id_dtype(65536) == np.uint16 and id_dtype(65537) == np.int32


def test_export_answers_like_the_in_memory_model(task1, spec: FeatureSpec, tmp_path: Path) -> None:
    examples = split_examples(task1, "dev")[:60]
    model = build_model(spec, MemN2NConfig(match_type=True, hops=2, embedding_dim=16))
    features = featurize(Featurizer(spec), examples)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(features, answer_indices(spec, examples), epochs=3, verbose=0)  # weights that are not the init
    logits, attention = model.predict_with_attention(features)
    export(DialogServingModule(spec, model, top_k=5), tmp_path / "model")

    ranker = SavedModelRanker(tmp_path / "model")
    ranked = ranker.outputs(examples)
    np.testing.assert_array_equal(ranked["indices"], np.argsort(-logits.numpy(), axis=-1, kind="stable")[:, :5])
    np.testing.assert_allclose(ranked["scores"], np.sort(logits.numpy(), axis=-1)[:, ::-1][:, :5], rtol=1e-5)
    assert best_answers(ranker, examples[:3]) == [spec.candidates[i] for i in ranked["indices"][:3, 0]]
    served = ranker.serve(**dict(zip(("memory", "memory_speaker", "query"),
                                     (tf.constant(a, tf.string) for a in pad_batch(examples)), strict=True)))
    np.testing.assert_allclose(served["attention"].numpy(), attention.numpy(), atol=1e-6)


def test_evaluate_refuses_a_directory_without_a_model(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no saved_model.pb"):
        SavedModelRanker(tmp_path)


def test_explain_puts_attention_back_in_time_order(task1, spec: FeatureSpec, tmp_path: Path) -> None:
    model = build_model(spec, MemN2NConfig(hops=2, embedding_dim=8))
    examples = split_examples(task1, "dev")[:8]  # the first dialog's turns: 0 to 7+ memories
    export(DialogServingModule(spec, model), tmp_path / "model")
    ranker = SavedModelRanker(tmp_path / "model")
    features = featurize(Featurizer(spec), examples)
    _, slots = model.predict_with_attention(features)
    for turn, e, row in zip(explain_turns(ranker, examples), examples, slots.numpy(), strict=True):
        assert turn.attention.shape == (2, len(e.memory))
        kept = min(len(e.memory), spec.memory_size)
        np.testing.assert_allclose(turn.attention[:, len(e.memory) - kept:], row[:, :kept][:, ::-1], atol=1e-6)


def test_a_module_exported_again_carries_the_weights_set_since(task1, spec: FeatureSpec, tmp_path: Path) -> None:
    """fit_and_export writes the OOV dev set's epoch by setting its weights into the module it exported the dev
    set's epoch from (its signatures traced once): each SavedModel scores as the weights held when it was written."""
    model = build_model(spec, MemN2NConfig(hops=1, embedding_dim=8))
    module = DialogServingModule(spec, model)
    memory, speaker, query = (tf.constant(part) for part in pad_batch(split_examples(task1, "dev")[:8]))
    expected = [module.serve_speakers(memory, speaker, query)["scores"].numpy()]
    export(module, tmp_path / "first")
    rng = np.random.default_rng(0)
    model.set_weights([w + rng.normal(0.0, 0.5, w.shape).astype(w.dtype) for w in model.get_weights()])
    expected.append(module.serve_speakers(memory, speaker, query)["scores"].numpy())
    export(module, tmp_path / "second")
    assert not np.allclose(*expected)
    for name, scores in zip(("first", "second"), expected, strict=True):
        served = tf.saved_model.load(str(tmp_path / name)).signatures["serving_speakers"]
        np.testing.assert_allclose(served(memory=memory, memory_speaker=speaker, query=query)["scores"].numpy(),
                                   scores, rtol=1e-5, atol=1e-5)


class _Scripted:
    """A model whose dev answers per epoch are scripted: ``right[epoch]`` of the three dev turns are right."""

    stop_training = False
    epoch = 0

    def __init__(self, right: list[int]) -> None:
        self.right = right

    def predict_on_batch(self, features):
        return np.array([[0.0, 1.0] if turn < self.right[self.epoch] else [1.0, 0.0] for turn in range(3)])

    def get_weights(self):
        return [self.epoch]

    def set_weights(self, weights):
        self.restored = weights


def _epochs_run(right: list[int], patience: int | None) -> tuple[int, int, list[int]]:
    from models.training import BestOnDev

    model, callback = _Scripted(right), BestOnDev({}, np.array([1, 1, 1]), patience=patience)
    callback.set_model(model)
    for epoch in range(len(right)):
        model.epoch = epoch
        callback.on_epoch_begin(epoch)
        callback.on_epoch_end(epoch, {"loss": 1.0})
        if model.stop_training:
            break
    callback.on_train_end()
    return epoch + 1, callback.best_epoch, model.restored


def test_best_on_dev_keeps_the_best_epoch_and_stops_after_patience() -> None:
    assert _epochs_run([1, 2, 1, 1, 1, 2], patience=2) == (4, 2, [1])
    assert _epochs_run([1, 2, 1, 1, 1, 2], patience=None) == (6, 2, [1])


def test_best_on_dev_stops_at_the_first_perfect_epoch_which_nothing_can_beat() -> None:
    assert _epochs_run([1, 3, 2, 3, 3], patience=None) == (2, 2, [1])
    assert _epochs_run([1, 2, 2, 3], patience=4) == (4, 4, [3])


class _ScriptedTwoSets(_Scripted):
    """Scripted answers on two sets told apart by their ``which`` feature: dev (0) and an OOV dev set (1)."""

    def __init__(self, dev: list[int], oov: list[int]) -> None:
        self.sets = (dev, oov)

    def predict_on_batch(self, features):
        right = self.sets[int(features["which"][0])][self.epoch]
        return np.array([[0.0, 1.0] if turn < right else [1.0, 0.0] for turn in range(3)])


def _two_sets_run(dev: list[int], oov: list[int], patience: int | None = None, select_on_mean: bool = False):
    from models.training import BestOnDev

    labels = np.array([1, 1, 1])
    model = _ScriptedTwoSets(dev=dev, oov=oov)
    callback = BestOnDev({"which": np.zeros(3)}, labels, oov=({"which": np.ones(3)}, labels), patience=patience,
                         select_on_mean=select_on_mean)
    callback.set_model(model)
    for epoch in range(len(dev)):
        model.epoch = epoch
        callback.on_epoch_begin(epoch)
        callback.on_epoch_end(epoch, {"loss": 1.0})
        if model.stop_training:
            break
    callback.on_train_end()
    return epoch + 1, callback, model


def test_best_on_dev_with_an_oov_dev_set_keeps_each_sets_best_and_their_mean() -> None:
    # dev is perfect from the first epoch, the OOV dev set only at the fourth: no stop before it
    run, callback, model = _two_sets_run(dev=[3, 3, 3, 2], oov=[0, 2, 1, 3], select_on_mean=True)
    assert run == 4
    # means 50, 83.3, 66.7, 83.3: epoch 2 (the first of the best), not epoch 1 (dev alone) nor 4 (OOV alone)
    assert callback.best_epoch == 2 and model.restored == [1]
    assert callback.epoch_of("dev") == 1 and callback.weights_of("dev") == [0]
    assert callback.epoch_of("oov_dev") == 4 and callback.weights_of("oov_dev") == [3]
    assert [round(e["oov_dev_per_response_accuracy"]) for e in callback.history] == [0, 67, 33, 100]
    assert [round(e["dev_per_response_accuracy"]) for e in callback.history] == [100, 100, 100, 67]
    _, on_dev, model = _two_sets_run(dev=[3, 3, 3, 2], oov=[0, 2, 1, 3])
    assert on_dev.best_epoch == 1 and model.restored == [0]


def test_patience_waits_for_every_set_to_stop_improving() -> None:
    # dev peaks at epoch 1; the OOV dev set still improves at 3, so patience 2 runs to epoch 5, not 3
    run, callback, _ = _two_sets_run(dev=[3, 2, 2, 2, 2, 2, 2], oov=[0, 1, 2, 1, 1, 2, 3], patience=2)
    assert run == 5 and callback.epoch_of("dev") == 1 and callback.epoch_of("oov_dev") == 3


def test_a_corpus_without_a_kb_trains_without_match_type_and_reports_hits_at_10(tmp_path: Path) -> None:
    dialog = ("1 hi\thello how can i help\n2 a table for two tonight\tsure , what time ?\n"
              "3 eight please\tbooked for eight\n4 thanks\tyou are welcome\n")
    for split in ("trn", "dev", "tst"):
        (tmp_path / f"dialog-babi-task7-concierge-{split}.txt").write_text("\n".join([dialog] * 3))
    answers = ["hello how can i help", "sure , what time ?", "booked for eight", "you are welcome", "goodbye"]
    (tmp_path / "dialog-babi-task7-concierge-candidates.txt").write_text("".join(f"1 {a}\n" for a in answers))
    files = discover(tmp_path)[7]
    assert files.kb is None
    summary = train(files, MemN2NConfig(match_type=True, hops=1, embedding_dim=8, epochs=2), out=tmp_path / "m")
    assert summary["config"]["match_type"] and not summary["match_type_used"]
    result = evaluate(SavedModelRanker(tmp_path / "m"), split_examples(files, "tst"))
    assert result["hits_at_10"] == 100.0 and result["turns"] == 12  # 5 candidates: all in the top 10


@pytest.mark.parametrize("dictionaries", [1, 2, 3])
def test_one_two_or_three_dictionaries(dictionaries: int) -> None:
    from models.memn2n import MemN2N

    model = MemN2N(12, np.array([[1, 2], [3, 0]]), embedding_dim=4, hops=1, dictionaries=dictionaries)
    inputs = {"memory": np.array([[[1, 2, 0], [3, 4, 0], [0, 0, 0]]]), "query": np.array([[5, 6, 0]])}
    assert model(inputs).shape == (1, 2)
    embeddings = [w for w in model.weights if w.path.endswith("embeddings")]
    assert len(embeddings) == dictionaries
    model.C.set_weights([np.zeros((12, 4))])  # the memory dictionary: with it zeroed, attention is uniform
    _, attention = model.predict_with_attention(inputs)
    assert np.allclose(attention.numpy()[0, 0], [0.5, 0.5, 0.0])
    if dictionaries == 3:  # ... and the input and candidate dictionaries are untouched
        assert np.abs(model.A.get_weights()[0]).sum() > 0 and np.abs(model.W.get_weights()[0]).sum() > 0
    with pytest.raises(ValueError, match="dictionaries"):
        MemN2N(12, np.array([[1, 2]]), dictionaries=4)


def test_words_no_training_example_holds_keep_a_zero_embedding(task1, spec: FeatureSpec) -> None:
    from models.training import learned_words

    examples = split_examples(task1, "trn")[:80]
    features, answers = featurize(Featurizer(spec), examples), answer_indices(spec, examples)
    learned = learned_words(spec, features, answers)
    assert all(learned[spec.word_id(w)] for w in tokenize(examples[5].query) + tokenize(examples[5].answer))
    assert not learned[0]
    said = {int(i) for key in ("memory", "query") for i in features[key].ravel()} - {0}
    answered = {spec.word_id(w) for i in answers for w in tokenize(spec.candidates[i])}
    typed = {spec.word_id(TYPE_PREFIX + t) for t in spec.types}
    assert set(np.flatnonzero(learned)) == said | answered | typed
    unseen = [i for i, w in enumerate(spec.vocabulary) if not learned[i]]
    assert unseen  # the other candidates' restaurants, for one
    word, once = next(i for i in unseen if i != PAD_ID), {key: value.copy() for key, value in features.items()}
    once["memory"][np.unravel_index(np.flatnonzero(once["memory"] == PAD_ID)[0], once["memory"].shape)] = word
    assert learned_words(spec, once, answers)[word]  # a word said once is learned
    model = build_model(spec, MemN2NConfig(match_type=True, hops=1, embedding_dim=8, only_learned_words=True),
                        learned)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=keras.losses.SparseCategoricalCrossentropy(True))
    model.fit(features, answers, epochs=2, verbose=0)  # softmax pushes every wrong candidate's words down ...
    for table in (model.A, model.W):
        weights = table.get_weights()[0]
        assert np.all(weights[unseen] == 0) and np.any(weights[learned] != 0)  # ... but these stay at zero


def test_constant_inputs_computed_a_chunk_at_a_time_equal_the_whole_batch(task1, spec: FeatureSpec) -> None:
    from models.training import with_constant_inputs

    features = featurize(Featurizer(spec), split_examples(task1, "dev")[:70])
    model = build_model(spec, MemN2NConfig(match_type=True, hops=1, embedding_dim=8))
    whole = model.constant_inputs({k: tf.constant(v) for k, v in features.items()})["said"].numpy()
    chunked = with_constant_inputs(model, features, chunk=16)  # four chunks of 16 and one of 6
    assert chunked["said"].dtype == whole.dtype and np.array_equal(chunked["said"], whole) and whole.any()
    assert all(chunked[key] is features[key] for key in features)
    plain = build_model(spec, MemN2NConfig(match_type=False, hops=1, embedding_dim=8))
    assert with_constant_inputs(plain, features, chunk=16) is features  # nothing constant: nothing computed


@pytest.mark.parametrize("model_name", ["memn2n", "embeddings"])
def test_fast_formulations_score_like_the_reference_formulas(task1, spec: FeatureSpec, model_name: str) -> None:
    """The sparse bags and the (candidate, type) pairs give the padded bags' and the [B, C, K] rule's scores,
    whether match type's ``said`` is computed in the graph (serving) or once ahead of training."""
    hops = {"hops": 2} if model_name == "memn2n" else {}  # the embeddings have no hops
    model = build_model(spec, train_config(model_name, match_type=True, embedding_dim=16, **hops))
    features = {k: tf.constant(v) for k, v in featurize(Featurizer(spec), split_examples(task1, "dev")[:64]).items()}
    logits = model(features).numpy()
    np.testing.assert_allclose(model({**features, **model.constant_inputs(features)}).numpy(), logits, atol=1e-5)
    for ids in (features["query"], features["memory"]):
        padded = keras.ops.sum(model.A(ids) * tf.cast(ids > 0, tf.float32)[..., None], axis=-2)
        np.testing.assert_allclose(bag_of_embeddings(model.A, ids).numpy(), padded.numpy(), atol=1e-6)
    state = tf.random.normal([64, 16], seed=1)
    scorer = model.W if model_name == "memn2n" else model.B
    slots = tf.constant(candidate_type_slots(spec)[0])
    reference = match_type_scores(state, matched_entity_types(features, slots, len(spec.vocabulary)),
                                  scorer, model.typed.type_word_ids)
    np.testing.assert_allclose(model.typed.scores(state, scorer, model.typed.said(features)).numpy(),
                               reference.numpy(), atol=1e-5)


def test_per_occurrence_bags_take_a_keras_embedding_layers_adam_step() -> None:
    """The sparse bags sum what a padded ``keras.layers.Embedding`` sums. Per occurrence, Adam steps them as it steps
    the layer: word 1, said twice in a batch, has two gradient rows and Adam's second moment sums their squares.
    The fused default hands Adam one row, their sum, and steps that word less; the other words alike."""
    ids = np.array([[1, 1, 2], [3, 1, 0]])  # word 1 twice in the first bag, padding in the second
    rows, columns = np.nonzero(ids)
    target = tf.random.normal([2, 4], seed=3)

    def stepped(bags_of: Callable[[keras.layers.Embedding], tf.Tensor]) -> tuple[np.ndarray, np.ndarray]:
        keras.utils.set_random_seed(0)
        embedding = keras.layers.Embedding(5, 4)
        embedding.build()
        with tf.GradientTape() as tape:
            bags = bags_of(embedding)
            loss = tf.reduce_sum(bags * target)
        variables = embedding.trainable_variables
        keras.optimizers.Adam(learning_rate=0.1).apply_gradients(
            zip(tape.gradient(loss, variables), variables, strict=True))
        return bags.numpy(), keras.ops.convert_to_numpy(embedding.embeddings)

    layer = stepped(lambda e: keras.ops.sum(e(ids) * tf.cast(ids > 0, tf.float32)[..., None], axis=1))
    per_occurrence, fused, distinct = (
        stepped(lambda e, how=how: summed_rows(e, tf.constant(ids[rows, columns]), tf.constant(rows), 2, how))
        for how in (PER_OCCURRENCE, SUMMED, ROWS))
    np.testing.assert_allclose(per_occurrence[0], layer[0], atol=1e-6)
    np.testing.assert_allclose(fused[0], layer[0], atol=1e-6)
    np.testing.assert_allclose(distinct[0], layer[0], atol=1e-6)
    np.testing.assert_allclose(per_occurrence[1], layer[1], atol=1e-6)
    np.testing.assert_allclose(distinct[1], fused[1], atol=1e-6)  # the same summed rows, only sparse
    moved = np.abs(fused[1] - layer[1]).max(axis=1) > 1e-4
    assert moved.tolist() == [False, True, False, False, False]  # only the repeated word steps otherwise


def test_segment_sum_has_the_sums_and_the_gradient_of_tfs_own() -> None:
    """Bit for bit, eagerly and in a graph, for ids as bags and pairs hold them (unsorted, never negative, some
    segments empty)."""
    data = tf.random.normal([7, 3], seed=5)
    ids = tf.constant([2, 0, 2, 4, 0, 2, 1])
    upstream = tf.random.normal([6, 3], seed=6)

    def sums_and_gradient(summed: Callable) -> tuple[tf.Tensor, tf.Tensor]:
        with tf.GradientTape() as tape:
            tape.watch(data)
            sums = summed(data, ids, 6)
            loss = tf.reduce_sum(sums * upstream)
        return sums, tape.gradient(loss, data)

    for run in (sums_and_gradient, tf.function(sums_and_gradient)):
        ours, tfs = run(segment_sum), run(tf.math.unsorted_segment_sum)
        np.testing.assert_array_equal(ours[0].numpy(), tfs[0].numpy())
        np.testing.assert_array_equal(ours[1].numpy(), tfs[1].numpy())


def test_the_rows_gradient_is_the_summed_one_on_the_batchs_words_alone() -> None:
    ids = tf.constant([3, 1, 3, 7, 1, 3])
    bags = tf.constant([0, 0, 0, 1, 2, 2])
    embedding = keras.layers.Embedding(10, 4)
    embedding.build()
    target = tf.random.normal([3, 4], seed=1)

    def gradient(how: str) -> tf.Tensor | tf.IndexedSlices:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(summed_rows(embedding, ids, bags, 3, how) * target)
        return tape.gradient(loss, embedding.embeddings.value)

    sparse, dense = gradient(ROWS), gradient(SUMMED)
    assert isinstance(sparse, tf.IndexedSlices)
    assert sorted(sparse.indices.numpy().tolist()) == [1, 3, 7]  # each word once, whatever its occurrences
    np.testing.assert_allclose(tf.convert_to_tensor(sparse).numpy(), dense.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="gradient must be one of"):
        summed_rows(embedding, ids, bags, 3, "sparse")


def test_the_training_loss_is_keras_sparse_categorical_cross_entropy() -> None:
    from models.training import softmax_cross_entropy

    logits = tf.random.normal([16, 50], stddev=30.0, seed=2)  # large logits: logsumexp must stay stable
    gold = tf.constant(np.arange(16) * 3)
    reference = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)(gold, logits)
    np.testing.assert_allclose(softmax_cross_entropy(gold, logits).numpy(), reference.numpy(), rtol=1e-5, atol=1e-4)
