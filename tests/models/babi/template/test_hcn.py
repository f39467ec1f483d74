"""Hybrid Code Networks: the template ranker with an LSTM over the utterances as its template model (here with
its averaged pretrained word vectors) exports a SavedModel that ranks as the ranker in memory; its action mask
allows a template once the dialog holds a value of every entity kind the template names."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import tensorflow as tf

from models.babi.template.config import TemplateConfig
from models.babi.template.ranker import TemplateRanker
from models.ensemble import SeedEnsemble
from models.examples import TaskData
from models.serving.export import export
from models.serving.ranker import SavedModelRanker


@pytest.fixture(scope="module")
def hcn(task6, tmp_path_factory: pytest.TempPathFactory) -> tuple[TemplateRanker, dict, Path, TaskData]:
    files, trn, _ = task6
    data = TaskData.load(files)
    out = tmp_path_factory.mktemp("hcn") / "model"
    config = TemplateConfig(encoder="lstm", hidden=8, embedding_dim=8, epochs=1, fill_epochs=1, action_mask=True,
                            word_vectors=True)
    ranker, summary = TemplateRanker.fit_examples(data.candidates, data.facts, trn, data.split("dev"), config, out)
    return ranker, summary, out, data


def test_the_template_lstm_exports_a_model_that_ranks_as_the_ranker(hcn) -> None:
    ranker, summary, out, data = hcn
    assert summary["template_model"]["config"]["model"] == "recurrent"
    assert summary["action_mask"] == {t: list(kinds) for t, kinds in ranker.waits.items()} != {}
    dev = data.split("dev")
    assert SavedModelRanker(out).rank(dev) == ranker.rank(dev)


def test_the_action_mask_allows_a_template_once_the_dialog_holds_a_value_of_each_kind_it_names(hcn, task6) -> None:
    ranker, _, _, _ = hcn
    trn = task6[1]
    templates = list(ranker.template_spec.candidates)
    phone = templates.index(next(t for t in templates if "<phone>" in t.split(" ")))
    plain = templates.index(next(t for t in templates if "<" not in t))
    restaurant = next(e for e in trn if any(" R_phone " in line for line in e.memory))
    before = restaurant.memory[:1]  # the greeting alone: no phone number said yet
    memory = tf.constant([before + ("",) * (len(restaurant.memory) - 1), restaurant.memory])
    allowed = ranker.module.allowed(memory, tf.constant([restaurant.query] * 2)).numpy()
    assert allowed[:, plain].all() and not allowed[0, phone] and allowed[1, phone]
    first = ranker.rank([replace(restaurant, memory=before, memory_speaker=restaurant.memory_speaker[:1])], 1)[0][0]
    assert "_phone" not in first


def test_an_ensemble_over_seeds_exports_a_model_that_ranks_as_the_ranker(hcn, tmp_path: Path) -> None:
    ranker, _, _, data = hcn
    trn, dev = data.split("trn"), data.split("dev")
    config = TemplateConfig(encoder="lstm", hidden=8, embedding_dim=8, epochs=1, fill_epochs=1, action_mask=True,
                            word_vectors=True)
    seeded, members = ranker.with_seeds(trn, dev, config, 2)
    assert isinstance(seeded.template_model, SeedEnsemble) and len(members) == 1
    assert seeded.template_model.members[0] is ranker.template_model and seeded.filler is ranker.filler
    export(seeded.module, tmp_path / "model")
    assert SavedModelRanker(tmp_path / "model").rank(dev) == seeded.rank(dev)


def test_the_word_vectors_are_an_input_of_the_lstm_alone() -> None:
    with pytest.raises(ValueError, match="word_vectors is HCN's input"):
        TemplateConfig(word_vectors=True)
