"""Hybrid Code Networks: the template ranker with an LSTM over the utterances as its template model exports a
SavedModel that ranks as the ranker in memory."""

from __future__ import annotations

from pathlib import Path

from models.babi.template.ranker import TemplateRanker
from models.examples import TaskData
from models.serving.ranker import SavedModelRanker
from models.training import TemplateConfig


def test_the_template_lstm_exports_a_model_that_ranks_as_the_ranker(task6, tmp_path: Path) -> None:
    files, trn, _ = task6
    data = TaskData.load(files)
    config = TemplateConfig(encoder="lstm", hidden=8, embedding_dim=8, epochs=1, fill_epochs=1)
    ranker, summary = TemplateRanker.fit_examples(data.candidates, data.facts, trn, data.split("dev"), config,
                                                  tmp_path / "hcn")
    assert summary["template_model"]["config"]["model"] == "recurrent"
    dev = data.split("dev")
    assert SavedModelRanker(tmp_path / "hcn").rank(dev) == ranker.rank(dev)
