"""The state ranker's tracked facts, computed in TensorFlow ops from a raw dialog, and its training end to end on a
small corpus (the SavedModel ranks as training scored dev)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from models.banking.slots import SlotLexicon
from models.banking.state_ranker import (
    COUNT_BUCKETS,
    TYPE_FLAGS,
    VALUE_FLAGS,
    VALUE_PATTERNS,
    StateConfig,
    StateFeatures,
    act_of,
    allowed_at,
    answered_right,
    build_state_ranker,
    cached_facts,
    candidate_matrix,
    development_batches,
    learn_act_mask,
    masked,
    scorer_inputs,
    train_state_ranker,
    within_acts,
)
from models.examples import TaskData
from models.methods import best_answers
from models.serving.ranker import SavedModelRanker
from tests.models.banking.test_slots import _examples

CANDIDATES = ["api_call check_partner megan", "api_call check_partner anna", "api_call check_account savings",
              "which account would you like to use ?", "who would you like to send the money to ?",
              "api_call check_amount savings 100", "api_call end_call"]


# A transfer whose account was checked valid and whose partner (anna) was checked invalid: memory and speakers.
CHECKED = (["i want to send money", "which account would you like to use ?", "my savings account",
            "api_call check_account savings", "savings R_status valid", "who would you like to send the money to ?",
            "anna", "api_call check_partner anna", "anna R_status invalid"],
           ["user", "bot", "user", "bot", "user", "bot", "user", "bot", "user"])


def _features(memory: list[str], speakers: list[str], query: str, removed: tuple[str, ...] = ()
              ) -> tuple[StateFeatures, dict[str, np.ndarray]]:
    lexicon = SlotLexicon.learn(_examples())
    features = StateFeatures(lexicon, CANDIDATES, ["yes", ",", "to", "<partner>"], removed)
    out = features(tf.constant([memory]), tf.constant([speakers]), tf.constant([query]))
    out["candidate"] = candidate_matrix(features, out)  # [1, C, F]: every candidate's row
    return features, {key: value.numpy()[0] for key, value in out.items() if not key.startswith("candidate_")}


def test_pending_values_and_the_slot_state_come_from_the_dialogs_own_calls_and_results() -> None:
    _, out = _features(*CHECKED, "yes , to megan")
    candidate = out["candidate"]  # [C, F]: every value / some value pending, in query, in last call, in results,
    # beside the last call, then the values' latest results, the slot types' facts and the candidate's category
    flags = 2 * VALUE_FLAGS
    assert VALUE_FLAGS == 5 and TYPE_FLAGS == 4
    megan, anna, savings = (CANDIDATES.index(c) for c in CANDIDATES[:3])
    assert candidate[megan, :flags].tolist() == [1, 1, 0, 0, 0] * 2  # said in this turn, never checked
    assert candidate[anna, :flags].tolist() == [0, 0, 1, 1, 0] * 2  # checked last, its result since
    assert candidate[savings, :flags].tolist() == [0] * flags
    both = CANDIDATES.index("api_call check_amount savings 100")  # savings checked long ago, 100 never said
    assert candidate[both, :flags].tolist() == [0] * flags
    kinds = SlotLexicon.learn(_examples()).kinds
    assert candidate[anna, flags + kinds.index("R_status invalid")] == 1
    assert candidate[savings, flags + kinds.index("R_status valid")] == 1
    # The request for the account carries its slot type's facts: the account's latest result is valid.
    request = CANDIDATES.index("which account would you like to use ?")
    type_kinds = candidate[request, flags + len(kinds) + TYPE_FLAGS:flags + 2 * len(kinds) + TYPE_FLAGS]
    assert type_kinds[kinds.index("R_status valid")] == 1 and candidate[request, -3:].tolist() == [0, 1, 0]
    assert out["query_words"].tolist() == [1, 2, 3, 4]  # "yes , to <partner>": the query delexicalised
    assert out["last_line"][-3:].tolist() == [1, 0, 0]  # the user spoke
    history = out["history_words"]
    assert history[history > 0].tolist() == [3]  # "to" (send money to): earlier words, not entities (anna)


def test_a_value_said_with_the_checked_one_is_beside_the_call_and_one_said_before_another_check_is_not() -> None:
    """The caller gave the amount with the account just checked: the bot checks it next. Given before the
    partner's repair, it waits to be asked for again (the training bots' flows), so it is pending but not beside."""
    both = CANDIDATES.index("api_call check_amount savings 100")
    beside = VALUE_FLAGS - 1  # the flag's place among every value's, then some value's
    opening = (["i want to send 100 from my savings account", "api_call check_account savings",
                "savings R_status valid"], ["user", "bot", "user"], "<SILENCE>")
    features, out = _features(*opening)
    assert out["candidate"][both, [beside, VALUE_FLAGS + beside]].tolist() == [0, 1]  # 100 is, savings is not
    _, ablated = _features(*opening, removed=("beside_call",))
    assert ablated["candidate"][both, VALUE_FLAGS + beside] == 0 and ablated["candidate"][both, VALUE_FLAGS] == 1
    amount = features.value_type.numpy()[sorted(SlotLexicon.learn(_examples()).types).index("100")]
    state = out["dialog_state"].reshape(features.type_count, -1)
    # Pending, not in the query, beside the call, not missing (given).
    assert state[amount, :TYPE_FLAGS].tolist() == [1, 0, 1, 0]
    counts = out["state_counts"].reshape(-1, COUNT_BUCKETS)
    assert counts[-1].argmax() == 1  # one value beside the call, whichever slot: the act term's pooled fact
    assert ablated["state_counts"].reshape(-1, COUNT_BUCKETS)[-1].argmax() == 0
    _, later = _features(["i want to send 100", "which account would you like to use ?", "my savings account",
                          "api_call check_account savings", "savings R_status valid"],
                         ["user", "bot", "user", "bot", "user"], "<SILENCE>")
    assert later["candidate"][both, [VALUE_FLAGS + 0, VALUE_FLAGS + beside]].tolist() == [1, 0]  # pending only


def test_the_act_mask_keeps_what_training_did_in_the_situation_and_anything_in_another() -> None:
    """Training checks the value given beside the last call and asks for a slot only when none waits: asked for
    a slot while the amount waits, the check goes first, and neither checking again the account just checked nor
    naming a partner the dialog never did stands before it; in a situation training never showed, nothing moves."""
    lexicon = SlotLexicon.learn(_examples())
    memory = [["i want to send 100 from my savings account", "api_call check_account savings",
               "savings R_status valid", "", ""],
              ["i want to send 100", "which account would you like to use ?", "my savings account",
               "api_call check_account savings", "savings R_status valid"],
              ["i want to send money to anna from my savings account", "api_call check_account savings",
               "savings R_status valid", "", ""]]
    speakers = [["user", "bot", "user", "", ""], ["user", "bot", "user", "bot", "user"],
                ["user", "bot", "user", "", ""]]
    check, request = CANDIDATES.index("api_call check_amount savings 100"), CANDIDATES.index(
        "who would you like to send the money to ?")
    again, unsaid = CANDIDATES.index("api_call check_account savings"), CANDIDATES.index("api_call check_partner megan")

    def mask(removed: tuple[str, ...] = ()) -> tuple[StateFeatures, dict[str, tf.Tensor], np.ndarray]:
        features = StateFeatures(lexicon, CANDIDATES, ["yes"], removed)
        facts = features.facts(tf.constant(memory), tf.constant(speakers), tf.constant(["<SILENCE>"] * 3))
        trn = {key: value.numpy() for key, value in facts.items()}
        partner = CANDIDATES.index("api_call check_partner anna")  # the value waiting beside the check
        return features, facts, learn_act_mask(features, trn, np.array([check, request, partner]))

    features, facts, allowed = mask()
    situation = features.situation(facts).numpy()
    uses = features.uses(facts, tf.constant([list(range(len(CANDIDATES)))] * 3)).numpy()
    assert situation[0] != situation[1] and situation[2] == situation[0]
    assert allowed.shape == (features.situations, len(features.acts) * 4)
    # One act, told apart by its values: savings was just checked, megan was never said.
    assert features.act_of.numpy()[again] == features.act_of.numpy()[unsaid] and uses[0, again] != uses[0, unsaid]
    assert allowed[situation[0], uses[0, check]] and not allowed[situation[0], uses[0, request]]
    assert not allowed[situation[0], uses[0, again]] and not allowed[situation[0], uses[0, unsaid]]
    assert allowed[situation[1], uses[1, request]] and not allowed[situation[1], uses[1, check]]
    assert allowed[np.setdiff1d(np.arange(features.situations), situation)].all()
    logits = tf.constant([[float(c) for c in range(len(CANDIDATES))]] * 3)  # the request scores above the check
    ranked = tf.argsort(masked(features, tf.constant(allowed), facts, logits), direction="DESCENDING").numpy()
    assert ranked[0, 0] == check and ranked[1, 0] == request
    held_back = [c for c in ranked[0] if not allowed[situation[0], uses[0, c]]]
    assert held_back == sorted(held_back, reverse=True)  # their own order kept, after the allowed ones
    assert mask(("act_mask",))[2].all()


def test_an_act_is_its_template_with_every_slot_made_one() -> None:
    """Checks of any slot are one act, every request one act; final calls stay apart (their API names no slot)."""
    lexicon = SlotLexicon.learn(_examples())
    acts = {c: act_of(lexicon.template(c), lexicon) for c in CANDIDATES}
    assert acts["api_call check_partner megan"] == acts["api_call check_account savings"] == \
        "api_call check_<slot> <value>"
    assert acts["api_call check_amount savings 100"] == "api_call check_<slot> <value> <value>"
    assert acts["which account would you like to use ?"] == acts["who would you like to send the money to ?"] == \
        "<request>"
    assert acts["api_call end_call"] == "api_call end_call"
    final = act_of("api_call transfer <account> <partner> <amount>", lexicon)
    assert final == "api_call transfer <value> <value> <value>"


def test_the_template_term_orders_templates_within_their_act_only() -> None:
    logits = tf.constant([[3.0, 1.0, -2.0, 7.0], [0.0, 0.0, 5.0, 5.0]])
    within = within_acts(logits, tf.constant([0, 0, 1, 0]), 2).numpy()
    for row, raw in zip(within, logits.numpy(), strict=True):
        np.testing.assert_allclose(np.exp(row[[0, 1, 3]]).sum(), 1.0, rtol=1e-6)
        assert row[2] == pytest.approx(0.0, abs=1e-6)  # an act of one template: probability 1
        assert np.argsort(row[[0, 1, 3]]).tolist() == np.argsort(raw[[0, 1, 3]]).tolist()


def test_the_state_counts_say_how_far_the_dialog_is_without_naming_a_slot() -> None:
    _, out = _features(*CHECKED, "yes , to megan and 100")
    kinds = SlotLexicon.learn(_examples()).kinds
    counts = out["state_counts"].reshape(len(kinds) + 3, COUNT_BUCKETS)
    assert counts[kinds.index("R_status valid")].argmax() == 1  # the account
    assert counts[kinds.index("R_status invalid")].argmax() == 1  # the partner
    assert counts[0].argmax() == min(len(SlotLexicon.learn(_examples()).slot_types) - 2, COUNT_BUCKETS - 1)
    assert counts[-2].argmax() == 2  # megan and 100 said, not checked
    assert counts[-1].argmax() == 0  # neither said with anna, the value checked last
    assert counts[-3].argmax() == 0  # every slot of the goal given: none missing


def test_cached_facts_give_the_inputs_of_the_raw_dialogs() -> None:
    """Training reads each example's facts once (ids packed, flags as bytes); the scorer's inputs from them are the
    served model's, from the raw dialog."""
    lexicon = SlotLexicon.learn(_examples())
    examples = _examples()
    features = StateFeatures(lexicon, CANDIDATES, ["yes", ",", "to", "<partner>", "my", "account", "the", "one"])
    cached = cached_facts(features, examples, size=3)
    assert cached["value_features"].dtype == np.uint8 and len(cached["last_line"]) == len(examples)
    from_cache = scorer_inputs(features, {key: tf.constant(value) for key, value in cached.items()})
    for i, example in enumerate(examples):
        raw = features(tf.constant([list(example.memory) or [""]]), tf.constant([list(example.memory_speaker) or
                                                                                 [""]]), tf.constant([example.query]))
        np.testing.assert_allclose(candidate_matrix(features, from_cache)[i], candidate_matrix(features, raw)[0])
        for key in ("last_line", "state_counts", "dialog_state"):
            np.testing.assert_allclose(np.asarray(from_cache[key][i], np.float32), raw[key][0])
        for key in ("query_words", "history_words"):
            assert sorted(w for w in from_cache[key][i].numpy() if w) == sorted(w for w in raw[key][0].numpy() if w)


def test_the_slot_the_goal_still_needs_is_missing_in_any_order() -> None:
    """The goals are the slot types of each training dialog's calls (both dialogs' take the account, the partner
    and the amount: one goal). The partner checked and the amount given, in an order training never had:
    the goal that takes both also takes the account, which nobody gave, so the account is missing; given alone, the
    account leaves the partner and the amount missing."""
    lexicon = SlotLexicon.learn(_examples())
    assert lexicon.goals == (("account", "amount", "partner"),)
    reordered = (["i want to send money", "who would you like to send the money to ?", "megan",
                  "api_call check_partner megan", "megan R_status valid", "how much would you like to send ?"],
                 ["user", "bot", "user", "bot", "user", "bot"], "100")
    missing = TYPE_FLAGS - 1
    for removed, expected in (((), ["account"]), (("goal",), [])):
        features, out = _features(*reordered, removed=removed)
        state = out["dialog_state"].reshape(features.type_count, -1)
        assert [lexicon.slot_types[t] for t in np.flatnonzero(state[:, missing])] == expected, removed
        counts = out["state_counts"].reshape(-1, COUNT_BUCKETS)
        assert counts[-3].argmax() == len(expected)
    request = CANDIDATES.index("which account would you like to use ?")
    _, out = _features(*reordered)
    # The request for it carries the fact (after every value's and some value's flags and their results).
    assert out["candidate"][request, 2 * VALUE_FLAGS + len(lexicon.kinds) + missing] == 1
    _, out = _features(["i want to send money", "which account would you like to use ?", "my savings account",
                        "api_call check_account savings", "savings R_status valid"],
                       ["user", "bot", "user", "bot", "user"], "<SILENCE>")
    given_account = out["dialog_state"].reshape(len(lexicon.slot_types), -1)[:, missing]
    assert [lexicon.slot_types[t] for t in np.flatnonzero(given_account)] == ["amount", "partner"]


def test_a_slot_is_missing_only_where_every_goal_holding_the_given_ones_takes_it() -> None:
    lexicon = replace(SlotLexicon.learn(_examples()), goals=(("account", "amount", "partner"), ("account", "partner")))
    features = StateFeatures(lexicon, CANDIDATES, ["yes"])
    types = lexicon.slot_types

    def missing(*given: str, asked: tuple[str, ...] = ()) -> list[str]:
        row = tf.constant([[t in given for t in types]])
        known = tf.constant([[t in given or t in asked for t in types]])
        return [types[t] for t in np.flatnonzero(features._missing(row, known).numpy()[0])]

    assert missing("account") == ["partner"]  # both goals take the partner; only one the amount
    assert missing("amount") == ["account", "partner"]  # one goal holds the amount
    assert missing() == [] and missing("account", "amount", "partner") == []
    # A slot the bot asked for is in the goal, given or not: asked for the amount, the account is missing too.
    assert missing("account", asked=("amount",)) == ["amount", "partner"]
    assert missing(asked=("amount",)) == ["account", "amount", "partner"]


def test_the_slots_the_bot_asked_for_say_which_goal_the_dialog_has() -> None:
    """Asked for the account, the user names the partner (another slot): only the goal that takes the account and
    the partner is left, so the account and the amount are missing; without the bot's request ("asked" removed)
    the partner alone fits a goal without the account as well, and nothing is missing."""
    lexicon = replace(SlotLexicon.learn(_examples()), goals=(("account", "amount", "partner"), ("partner",)))
    types = lexicon.slot_types
    memory = ["i want to send money", "which account would you like to use ?"]
    for removed, expected in (((), ["account", "amount"]), (("asked",), [])):
        features = StateFeatures(lexicon, CANDIDATES, ["yes"], removed)
        out = features.facts(tf.constant([memory]), tf.constant([["user", "bot"]]), tf.constant(["megan"]))
        state = out["type_features"].numpy()[0]
        assert [types[t] for t in np.flatnonzero(state[:, 3])] == expected, removed  # TYPE_FLAGS' last: missing


@pytest.mark.parametrize("removed", [(), ("value_state",), ("slot_state",)])
def test_the_compact_candidate_rows_are_every_candidates_row_and_score_as_them(removed: tuple[str, ...]) -> None:
    """Training and serving compute the filling term on a row per group and one per candidate with a fact: written
    out, they are the definition's matrix of every candidate, and the scores are the filler's over that matrix."""
    lexicon = SlotLexicon.learn(_examples())
    examples = _examples()
    words = ["yes", ",", "to", "<partner>", "my", "account", "the", "one"]
    features = StateFeatures(lexicon, CANDIDATES, words, removed)
    cached = cached_facts(features, examples, size=3)
    inputs = scorer_inputs(features, {key: tf.constant(value) for key, value in cached.items()})
    dense = features.candidate_features(tf.cast(cached["value_features"], tf.float32),
                                        tf.cast(cached["type_features"], tf.float32)).numpy()
    assert np.abs(dense[..., :2 * VALUE_FLAGS]).sum() > 0 or "value_state" in removed  # some value has a fact
    assert len(inputs["candidate_active"]) < dense.shape[0] * dense.shape[1]  # fewer rows than candidates
    np.testing.assert_array_equal(candidate_matrix(features, inputs).numpy(), dense)
    _, _, _, scorer = build_state_ranker(examples, CANDIDATES, StateConfig(dim=8, filler_units=4))
    scorer(inputs)
    expected = scorer.filler_out(scorer.filler_hidden(tf.constant(dense)))[..., 0]
    np.testing.assert_allclose(scorer._filling(inputs).numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


def test_a_value_said_again_after_its_check_is_pending_again() -> None:
    memory = ["to megan", "api_call check_partner megan", "megan R_status invalid",
              "the partner name you gave is not valid , would you like to change it ?"]
    _, before = _features(memory, ["user", "bot", "user", "bot"], "yes")
    _, again = _features(memory, ["user", "bot", "user", "bot"], "yes , megan")
    megan = CANDIDATES.index("api_call check_partner megan")
    assert before["candidate"][megan, 0] == 0 and again["candidate"][megan, 0] == 1


def test_training_exports_a_model_that_ranks_as_training_scored(banking, tmp_path: Path) -> None:
    _, files = banking
    task = TaskData.load(files)
    summary = train_state_ranker(task, tmp_path / "model", StateConfig(epochs=1))
    dev = task.split("dev")
    answers = best_answers(SavedModelRanker(tmp_path / "model"), dev)
    assert round(100.0 * np.mean([a == e.answer for a, e in zip(answers, dev, strict=True)]), 2) == \
        summary["dev_per_response_accuracy"]


def test_an_unknown_feature_group_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown feature groups \\['filling'\\]"):
        StateConfig(removed=("filling",))


def test_training_drops_the_last_turns_words_and_keeps_the_earlier_turns(monkeypatch) -> None:
    """The last user turn's words (their embeddings and their pretrained vectors) are left out at ``word_dropout``;
    the earlier turns' at ``history_dropout``, none by default (the opening's intent word is kept); at ranking
    nothing is left out."""
    examples = _examples()
    _, _, features, scorer = build_state_ranker(examples, CANDIDATES, StateConfig(dim=8, filler_units=4))
    inputs = scorer_inputs(features, {key: tf.constant(value)
                                      for key, value in cached_facts(features, examples, size=3).items()})
    bag, rates = scorer._bag, []

    def recorded(rows, ids, training, rate, seed):  # noqa: ANN001, ANN202
        rates.append((rows.shape[-1], training, rate))
        return bag(rows, ids, training, rate, seed)

    monkeypatch.setattr(scorer, "_bag", recorded)
    scorer(inputs, training=True)  # the query's embeddings (8 wide), its pretrained vectors (64), the history's
    assert rates[-3:] == [(8, True, 0.5), (64, True, 0.5), (8, True, 0.0)]
    ids = tf.ones([4, 50], tf.int32)  # every row the same word, 50 times
    rows = scorer.words(ids)
    whole = np.tile(50 * scorer.words(tf.constant([1]))[0].numpy(), (4, 1))
    for rate, training in ((0.0, True), (0.5, False)):
        np.testing.assert_allclose(bag(rows, ids, training, rate, 0).numpy(), whole, rtol=1e-5)
    assert not np.allclose(bag(rows, ids, True, 0.5, 0).numpy(), whole, rtol=1e-5)
    for name in ("word_dropout", "history_dropout"):
        with pytest.raises(ValueError, match=f"{name} must be a rate in \\[0, 1\\)"):
            StateConfig(**{name: 1.0})


def test_a_word_no_training_turn_used_gets_the_pretrained_vector_of_its_kind() -> None:
    """The last user turn's words are looked up in the pretrained vectors (entities first made their slot type,
    which the vectors do not hold); "nope", never said in training, is nearer "no" than "account" is; without the
    group every id is 0 and the package is not read."""
    from models.word_vectors import word_vectors

    known, vectors = word_vectors()
    index = {word: i for i, word in enumerate(known)}
    assert vectors.shape == (len(known), 64) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    similarity = lambda a, b: float(vectors[index[a]] @ vectors[index[b]])  # noqa: E731
    assert similarity("nope", "no") > similarity("nope", "account") + 0.2
    assert similarity("thanks", "thank") > similarity("thanks", "transfer") + 0.2
    examples = _examples()
    lexicon = SlotLexicon.learn(examples)
    facts = {}
    for removed in ((), ("word_vectors",)):
        features = StateFeatures(lexicon, CANDIDATES, ["yes"], removed)
        facts[removed] = features.facts(tf.constant([["to megan"]]), tf.constant([["user"]]),
                                        tf.constant(["nope , megan please"]))["vector_words"].numpy()[0]
    assert [known[i - 1] if i else None for i in facts[()]] == ["nope", None, None, "please"]
    assert not facts[("word_vectors",)].any() and features.vectors.shape == (1, 64)


def test_a_turn_that_gives_no_value_reads_what_it_means_and_the_act_term_alone_reads_it() -> None:
    """The sentence encoder's vector of the last user turn, zero for a turn that gives a value (the tracked state
    reads that one) and without the group no column at all; the act term reads it, the template term does not."""
    examples = _examples()
    lexicon = SlotLexicon.learn(examples)
    memory, speaker = tf.constant([["to megan"], ["to megan"]]), tf.constant([["user"], ["user"]])
    query = tf.constant(["nope", "to megan please"])
    sentence = StateFeatures(lexicon, CANDIDATES, ["yes"]).facts(memory, speaker, query)["sentence"].numpy()
    assert sentence.shape == (2, 384) and np.isclose(np.linalg.norm(sentence[0]), 1.0) and not sentence[1].any()
    removed = StateFeatures(lexicon, CANDIDATES, ["yes"], ("sentence_vector",)).facts(memory, speaker, query)
    assert removed["sentence"].shape == (2, 0)
    _, _, features, scorer = build_state_ranker(examples, CANDIDATES, StateConfig(dim=8, filler_units=4))
    inputs = scorer_inputs(features, {key: tf.constant(value)
                                      for key, value in cached_facts(features, examples, size=3).items()})
    scorer(inputs)  # builds the weights
    assert scorer.hidden.kernel.shape[0] + 384 == scorer.act_hidden.kernel.shape[0]


def test_a_development_row_is_scored_once_and_counted_for_every_example_it_stands_for() -> None:
    """Training's accuracy after each epoch is over every development example: a row of facts and answer several
    examples share is scored once and counted as many times, the same facts with another answer are another row,
    and each row carries the act mask of its facts."""
    examples = _examples()  # the pretrained features left out: what is counted is the rows, not what they hold
    _, _, features, scorer = build_state_ranker(examples, CANDIDATES, StateConfig(
        dim=8, filler_units=4, removed=("word_vectors", "sentence_vector")))
    repeated = [*examples, examples[0], examples[0], examples[1]]
    facts = cached_facts(features, repeated, size=3)
    every = {key: tf.constant(value) for key, value in facts.items()}
    allowed = tf.constant(np.random.default_rng(0).random((features.situations,
                                                           len(features.acts) * VALUE_PATTERNS)) > 0.5)
    every_allow = allowed_at(features, allowed, every).numpy()
    first = tf.argmax(masked(features, allowed, every, scorer(scorer_inputs(features, every))), axis=1).numpy()
    # Right but for examples[0] with another answer (a row of its own) and two single rows answered wrong.
    answers = first.copy()
    answers[[2, 3, len(examples) + 1]] = (first[[2, 3, len(examples) + 1]] + 1) % len(CANDIDATES)
    batches = development_batches(facts, answers, lambda batch: allowed_at(features, allowed, batch), size=2)
    counts = np.concatenate([count.numpy() for _, _, count, _ in batches])
    assert counts.tolist() == [2, 2, *[1] * (len(examples) - 2), 1]
    rows = [(batch["last_line"][i].numpy().tobytes(), int(answer[i]), allow[i].numpy().tobytes())
            for batch, answer, _, allow in batches for i in range(len(answer))]
    assert rows == [(facts["last_line"][k].tobytes(), int(answers[k]), every_allow[k].tobytes())
                    for k in (*range(len(examples)), len(examples) + 1)]
    assert sum(int(answered_right(features, scorer, *batch)) for batch in batches) == int((first == answers).sum())
