"""Supervised embeddings and MemN2N on Movie Dialog text: with task 4's replies among the candidates, the model
orders every candidate, so that each split is ranked among its own file."""

from __future__ import annotations

from models.methods import Among
from models.movie.neural import MovieRanker
from models.movie.text import prepare_text
from models.training import EmbeddingsConfig


def test_a_model_with_replies_orders_every_candidate_and_ranks_a_split_among_its_file(data, tmp_path) -> None:
    trn, dev, test = (data.examples(4, split)[:40] for split in ("train", "dev", "test"))
    sentences = list(dict.fromkeys([*(a for e in trn for a in e.answers), *data.candidates("dev"),
                                    *data.candidates("test")]))
    config = EmbeddingsConfig(embedding_dim=16, epochs=1, negatives=10, batch_size=32)
    model = MovieRanker.fit(data.entities, trn, dev, config, tmp_path / "model", top_k=10, sentences=sentences)
    # Every candidate, each once in the dictionary's tokens: replies whose words the 40 training examples never
    # say read alike, and are one candidate.
    _, tokens = prepare_text(data.entities, trn, sentences)
    assert len(model.candidates) == len(tokens) and set(model.candidates) <= {*data.entities, *sentences}
    assert set(data.candidates("test")) & set(model.candidates)
    order = model.order(test[:4])
    assert all(sorted(row) == list(range(len(model.candidates))) for row in order.tolist())
    assert all(len(row) == 10 for row in model.rank(test[:4], 10))
    ranked = Among(model, among=data.candidates("test")).rank(test[:4], 10)
    assert all(len(row) == 10 and set(row) <= set(data.candidates("test")) for row in ranked)
