"""``dialog train`` on each paper's corpus: that paper's models, with their own settings, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import main


def test_train_takes_the_models_of_the_corpus_paper(tmp_path: Path) -> None:
    """Banking trains its own models (SMN with Majumdar et al.'s settings, the state ranker with its own config);
    Movie Dialog its networks, by the streamed trainer, into a SavedModel; an option a model has not is refused by
    name before any training."""
    from data.banking.generation import BankingPlan
    from data.banking.generation import generate as generate_banking
    from data.movie.tasks import MoviePlan
    from data.movie.tasks import generate as generate_movies

    runner = CliRunner()
    banking = tmp_path / "banking"
    generate_banking(BankingPlan(seed=2, train_dialogs=1, dev_dialogs=1, test_dialogs=1), banking)
    smn = runner.invoke(main, ["train", "--data", str(banking), "--task", "7", "--model", "smn", "--epochs", "1",
                               "--out", str(tmp_path / "smn")])
    assert smn.exit_code == 0, smn.output
    config = json.loads(smn.stdout)["config"]
    assert (config["embedding_dim"], config["learning_rate"], config["batch_size"], config["hops"],
            config["max_memory"]) == (128, 0.001, 32, 3, 40)
    ours = runner.invoke(main, ["train", "--data", str(banking), "--task", "7", "--epochs", "1",
                                "--out", str(tmp_path / "ours")])  # the paper's first model: the state ranker
    assert ours.exit_code == 0, ours.output
    assert json.loads(ours.stdout)["task"] == 7 and (tmp_path / "ours" / "saved_model.pb").is_file()
    hops = runner.invoke(main, ["train", "--data", str(banking), "--task", "7", "--model", "state_ranker", "--hops",
                                "2", "--out", str(tmp_path / "hops")])
    assert hops.exit_code == 1 and "state_ranker has no setting hops" in hops.output
    assert not (tmp_path / "hops").exists()

    movies = tmp_path / "movies"
    generate_movies(MoviePlan(seed=0, scale="tiny"), movies)
    joint = runner.invoke(main, ["train", "--data", str(movies), "--model", "joint_memn2n", "--epochs", "1",
                                 "--out", str(tmp_path / "joint")])
    assert joint.exit_code == 0, joint.output
    assert json.loads(joint.stdout)["tasks"] == [1, 2, 3, 4] and (tmp_path / "joint" / "saved_model.pb").is_file()
    for arguments, message in ((["--model", "memn2n"], "memn2n trains on one task: give --task"),
                               (["--model", "memn2n", "--task", "1", "--hops", "2"],
                                "the Movie Dialog networks have no setting hops")):
        refused = runner.invoke(main, ["train", "--data", str(movies), *arguments, "--out", str(tmp_path / "m")])
        assert refused.exit_code == 1 and message in refused.output, refused.output
    assert "banking self-play (Majumdar et al.): state_ranker (ours), smn" in " ".join(
        runner.invoke(main, ["train", "--help"]).output.split())
