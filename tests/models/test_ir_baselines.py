"""TF-IDF match and nearest neighbour on hand-made examples whose right answers are known."""

from __future__ import annotations

from models.examples import TurnExample
from models.ir_baselines import NearestNeighbour, TfIdfMatch
from models.methods import best_answers


def ex(query: str, answer: str = "", memory: tuple[str, ...] = ()) -> TurnExample:
    return TurnExample("d", "t", "trn", 0, memory, tuple("user" for _ in memory), query, answer)


CANDIDATES = ["what do you think of this option: resto_1", "here it is resto_1_phone", "here it is resto_2_phone",
              "api_call thai paris", "api_call thai rome", "hello what can i help you with today"]


def test_tfidf_ranks_by_weighted_overlap() -> None:
    model = TfIdfMatch(CANDIDATES, CANDIDATES + ["hello there", "the phone of resto_2 please"])
    assert best_answers(model, [ex("hello")]) == ["hello what can i help you with today"]
    assert best_answers(model, [ex("phone of resto_2_phone")]) == ["here it is resto_2_phone"]


def test_tfidf_history_and_match_type() -> None:
    types = {"thai": "cuisine", "paris": "location", "rome": "location"}
    history = ("i want thai food", "in rome")
    plain = TfIdfMatch(CANDIDATES, CANDIDATES, None, use_history=False)
    with_history = TfIdfMatch(CANDIDATES, CANDIDATES, None, use_history=True)
    typed = TfIdfMatch(CANDIDATES, CANDIDATES, types, use_history=True)
    query = ex("<SILENCE>", memory=history)
    assert best_answers(with_history, [query]) == ["api_call thai rome"] != best_answers(plain, [query])
    # Both api calls share "thai"; only "rome" was said, so only that call gets the location type word too.
    said = typed._typed_candidates({"thai", "rome"})
    base = typed._plain
    rome, paris = CANDIDATES.index("api_call thai rome"), CANDIDATES.index("api_call thai paris")
    location = typed.index["#type_location"]
    assert said[rome, location] > 0 and said[paris, location] == 0 and base[rome, location] == 0
    assert best_answers(typed, [query]) == ["api_call thai rome"]


def test_nearest_neighbour_overlap_then_frequency() -> None:
    training = [ex("can you book a table", "i'm on it"), ex("can you book a table", "i'm on it"),
                ex("can you book a table", "where should it be"), ex("in rome please", "how many people")]
    model = NearestNeighbour(training)
    assert best_answers(model, [ex("book a table for us")]) == ["i'm on it"]  # most frequent response of the neighbour
    assert best_answers(model, [ex("rome")]) == ["how many people"]
    assert best_answers(model, [ex("zzz")]) == ["i'm on it"]  # no overlap: the most frequent response overall


def test_nearest_neighbour_normalised_overlap_prefers_the_utterance_that_says_nothing_else() -> None:
    training = [ex("can you book a table in rome for six", "api_call"), ex("book a table", "where should it be")]
    query = [ex("can you book a table")]
    # five words shared against three; but 5 of the 9 words of either against 3 of 5
    assert best_answers(NearestNeighbour(training), query) == ["api_call"]
    assert best_answers(NearestNeighbour(training, normalised=True), query) == ["where should it be"]


def test_batched_scores_equal_scoring_each_input_against_every_candidate(tmp_path, monkeypatch) -> None:
    """The batch path (one product, then only the re-weighted candidates, kept per set of said entity words) gives
    bit-identical scores, hence the same rankings, as the per-input formula it replaced, on generated task 5 with
    its KB's entity types: computed, kept, and evicted from a small cache."""
    import numpy as np

    from data.babi.generation import GenerationPlan, generate
    from data.layout import discover
    from models.examples import TaskData
    from models.features import kb_entity_types

    generate(GenerationPlan(seed=1, dialogs_per_split=4, tasks=(5,)), tmp_path, runner="local")
    task = TaskData.load(discover(tmp_path)[5])
    examples = task.split("tst-OOV")[:60]
    documents = list(task.candidates) + task.sentences("trn")
    for kept in (4096, 2):
        monkeypatch.setattr("models.ir_baselines.TYPED_CACHE", kept)
        for types in (None, kb_entity_types(task.facts)):
            for history in (False, True):
                model = TfIdfMatch(task.candidates, documents, types, use_history=history)
                for scores in (model.batch_scores(examples), model.batch_scores(examples)):
                    for example, batched in zip(examples, scores, strict=True):
                        bag = model._input_bag(example)
                        query = model._normalised(model._bag_matrix([bag]))
                        candidates = model._typed_candidates(model._said(example)) if types else model._plain
                        np.testing.assert_array_equal(batched, (candidates @ query.T).toarray().ravel())
                if types:
                    assert 0 < len(model._typed) <= kept


def test_type_words_of_enough_weight_move_the_api_call_above_a_repeated_greeting() -> None:
    """Against a whole history the greeting the bot already said shares the most words with the input; the API call
    wins once its type words (cuisine, location: said, and in the call) weigh enough. Fails if match type has no
    effect on the scores."""
    types = {"thai": "cuisine", "paris": "location", "rome": "location"}
    history = ("hello", "hello what can i help you with today", "i want thai food in rome for us", "i'm on it")
    documents = CANDIDATES + list(history) + ["i'm on it", "i want food", "hello", "for us please"]
    query = ex("<SILENCE>", memory=history)
    untyped = TfIdfMatch(CANDIDATES, documents, None, use_history=True)
    light, heavy = (TfIdfMatch(CANDIDATES, documents, types, use_history=True, type_weight=w) for w in (1.0, 10.0))
    assert best_answers(untyped, [query]) == best_answers(light, [query]) == ["hello what can i help you with today"]
    assert best_answers(heavy, [query]) == ["api_call thai rome"]
    assert (heavy.scores(query) != untyped.scores(query)).any()


def test_match_type_looks_for_entities_in_the_memory_when_the_input_is_the_last_utterance() -> None:
    """Section 4.5: a type word is added when the entity is in the input *or memory*. Before an API call the last
    utterance is silence; the call whose entities were said earlier in the dialog is typed all the same."""
    types = {"thai": "cuisine", "paris": "location", "rome": "location"}
    query = ex("<SILENCE>", memory=("i want thai food", "in rome"))
    typed = TfIdfMatch(CANDIDATES, CANDIDATES, types, use_history=False, type_weight=10.0)
    assert best_answers(typed, [query]) == ["api_call thai rome"]
    assert best_answers(TfIdfMatch(CANDIDATES, CANDIDATES, None, use_history=False), [query]) != ["api_call thai rome"]
