"""Our MemN2N against a public Keras one (candoz/memn2n-dialog-babi-keras), one training epoch each, one JSON line each.

    .venv/bin/python benchmarks/peer_memn2n.py --peer PEER --data DIR [--task 5] [--batch 16] [--steps 200] [--rounds 3]

``PEER`` holds the peer's ``custom_network_sections.py`` (its three layers); ``DIR`` the public tasks 1-5 ``trn`` and
``dev`` files (no test file is read, by either model). Both train on the task's ``trn`` turns at the same settings
(batch ``--batch``, embeddings of 32, 3 hops, no match type), in one process, taking turns: ``--rounds`` times an
epoch of ``--steps`` batches each. A step's milliseconds are the median of its rounds, and an epoch's seconds that
times the steps of a whole pass over ``trn``.

- The peer as its ``main.py`` composes it (a memory of dense bags of words [memory, vocabulary] in uint8, cast to
  float in the network; RMSprop at 0.01; softmax probabilities and sparse cross-entropy), on Keras 2 (``tf_keras``,
  which it was written for: ``TF_USE_LEGACY_KERAS`` is set before TensorFlow loads). Its input is built as its
  ``data_utils.py`` builds it (lower case, its stop words and punctuation out, ``$u`` / ``$r`` and ``#<turn>`` on
  the memory lines; every line of the dialog kept), by this script, from ``trn`` and ``dev`` alone: the peer's own
  vocabulary also counts its test file's words. Twice: ``peer_words``, its tokens as on the Python it was written
  for, and ``peer_characters``, as its code splits on Python 3.7 and later (:data:`SPLITS`), a vocabulary of
  characters.
- Ours: Table 2's MemN2N row without match type (``models.babi.methods``: unseen words at zero, a gradient row per
  word occurrence), Keras 3 and the project's loop of training steps (``models.training.loop_training_steps``).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
import numpy as np

from data.babi_format import read_candidates, read_dialogs  # no TensorFlow: the peer's Keras is chosen in main()
from data.corpus import Turn

REPOSITORY = Path(__file__).resolve().parent.parent
PEER_STOP_WORDS = {"a", "an", "the", ".", "?", "!"}  # data_utils.TOKENS_TO_EXCLUDE
EMBEDDING_DIM, HOPS = 32, 3


# Why two splits: the peer splits on ``(\W+)?``, an optional pattern. The Python it was written for skipped the
# pattern's empty matches (words, punctuation kept as tokens); the Python here splits at them too (every character
# a token). ``words`` is the first, ``characters`` what the peer's code does here.
SPLITS = {"words": r"(\W+)", "characters": r"(\W+)?"}


def peer_tokens(text: str, split: str = "words") -> list[str]:
    """The peer's tokeniser: lower case, split (:data:`SPLITS`), its stop words out; an empty line is silence."""
    words = [part.strip() for part in re.split(SPLITS[split], text.lower())
             if part and part.strip() and part.strip() not in PEER_STOP_WORDS]
    return words or ["<silence>"]


def peer_turns(path: Path, split: str) -> list[tuple[list[list[str]], list[str], str]]:
    """(memory lines, user utterance, gold answer) per bot turn, the memory as the peer keeps it (the file read by
    the project's parser: its turns and KB results)."""
    turns = []
    for dialog in read_dialogs(path).dialogs:
        memory: list[list[str]] = []
        for line in dialog.lines:
            if isinstance(line, Turn):
                said = peer_tokens(line.user, split)
                turns.append(([*memory], said, line.bot))
                memory += [said + ["$u", f"#{line.id}"], peer_tokens(line.bot, split) + ["$r", f"#{line.id}"]]
            else:
                memory.append(peer_tokens(line.text, split) + ["$r", f"#{line.id}"])
    return turns


def bag(words: list[str], index: dict[str, int], size: int) -> np.ndarray:
    counts = np.zeros(size, np.uint8)
    np.add.at(counts, [index[word] for word in words], 1)
    return counts


def peer_inputs(candidates_file: Path, trn: Path, dev: Path, count: int, split: str
                ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, int]:
    """The peer's inputs for the first ``count`` training turns (tokens by ``split``), its candidate matrix [V, C],
    their labels, and how many training turns there are."""
    candidates = read_candidates(candidates_file).candidates
    answer_of = {candidate: i for i, candidate in enumerate(candidates)}
    train, development = peer_turns(trn, split), peer_turns(dev, split)
    vocabulary = sorted({word for memory, user, _ in train + development for line in [*memory, user] for word in line}
                        | {word for candidate in candidates for word in peer_tokens(candidate, split)})
    index = {word: i for i, word in enumerate(vocabulary)}
    size, lines = len(vocabulary), max(len(memory) for memory, _, _ in train + development)
    chosen = train[:count]
    memory = np.zeros((len(chosen), lines, size), np.uint8)
    for row, (turn_memory, _, _) in enumerate(chosen):
        for line, words in enumerate(turn_memory):
            memory[row, line] = bag(words, index, size)
    user = np.stack([bag(words, index, size) for _, words, _ in chosen])
    matrix = np.stack([bag(peer_tokens(candidate, split), index, size) for candidate in candidates], axis=1)
    labels = np.array([answer_of[answer] for _, _, answer in chosen], np.float32)
    return {"memories": memory, "user": user}, matrix, labels, len(train)


def peer_model(sections: object, lines: int, size: int, matrix: np.ndarray) -> object:
    """The peer's network as its main.py composes it, on Keras 2."""
    import tensorflow as tf
    from tensorflow.keras import Input, Model  # tf_keras here (TF_USE_LEGACY_KERAS)
    from tensorflow.keras import backend as K
    from tensorflow.keras.optimizers import RMSprop

    memories, user = Input(name="memories", shape=(lines, size)), Input(name="user", shape=(size,))
    embed = sections.EmbeddingMatrixA(output_dim=EMBEDDING_DIM)
    embedded_memories, state = embed(K.cast_to_floatx(memories)), embed(K.cast_to_floatx(user))
    for _ in range(HOPS):
        state = sections.MatchingSection(output_dim=EMBEDDING_DIM)([embedded_memories, state])
    answer = sections.FinalSection(output_dim=matrix.shape[1], candidates_matrix=tf.constant(matrix, tf.float32))(state)
    model = Model(inputs=[memories, user], outputs=answer)
    model.compile(loss="sparse_categorical_crossentropy", optimizer=RMSprop(learning_rate=0.01), metrics=["accuracy"])
    return model


def peer_epoch(model: object, x: dict[str, np.ndarray], y: np.ndarray, batch: int) -> Callable[[], object]:
    """An epoch of the peer over ``x``, as its main.py fits (arrays in memory; no shuffle here, for equal rounds)."""
    return lambda: model.fit([x["memories"], x["user"]], y, batch_size=batch, epochs=1, shuffle=False, verbose=0)


@click.command()
@click.option("--peer", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="A checkout of candoz/memn2n-dialog-babi-keras (its custom_network_sections.py is imported).")
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True,
              help="The public tasks 1-5 trn/dev files (dialog-bAbI layout).")
@click.option("--task", type=int, default=5, show_default=True)
@click.option("--batch", type=int, default=16, show_default=True)
@click.option("--steps", type=int, default=200, show_default=True, help="Training steps timed per round.")
@click.option("--rounds", type=int, default=3, show_default=True)
def main(peer: Path, data: Path, task: int, batch: int, steps: int, rounds: int) -> None:
    if "tensorflow" in sys.modules:
        raise click.UsageError("TensorFlow is loaded already: the peer needs Keras 2 chosen before it loads")
    os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.keras is then tf_keras (Keras 2); `import keras` stays Keras 3
    sys.path[:0] = [str(REPOSITORY), str(peer)]
    import custom_network_sections as sections
    import keras

    from data.layout import discover
    from models import training
    from models.babi.presets import paper_config
    from models.examples import TaskData
    from models.features import Featurizer, build_spec

    files = discover(data)[task]
    loaded = TaskData.load(files, splits=("trn", "dev"))
    trn = loaded.split("trn")
    config = paper_config(task, embedding_dim=EMBEDDING_DIM, hops=HOPS, batch_size=batch, only_learned_words=True,
                          per_occurrence_gradient=True)
    spec = build_spec(loaded, memory_size=training.memory_size_for(config, trn))
    features = training.featurize(Featurizer(spec), trn)
    labels = training.answer_indices(spec, trn)
    keras.utils.set_random_seed(0)
    ours = training.compiled_model(spec, config, features, labels)
    features = training.with_constant_inputs(ours, features)
    training.loop_training_steps(ours, features, training.STEPS_PER_CALL)

    count = batch * steps
    if count > len(labels):
        raise click.BadParameter(f"{steps} steps of {batch} need {count} turns; trn has {len(labels)}",
                                 param_hint="--steps")
    our_batches = training.training_batches({key: value[:count] for key, value in features.items()}, labels[:count],
                                            batch)
    runs = {"ours": lambda: ours.fit(our_batches, epochs=1, verbose=0)}
    turns = {"ours": len(labels)}
    shapes = {"ours": {"memory": spec.memory_size, "vocabulary": len(spec.vocabulary)}}
    for split in SPLITS:
        x, matrix, y, turns[f"peer_{split}"] = peer_inputs(files.candidates, files.splits["trn"], files.splits["dev"],
                                                           count, split)
        model = peer_model(sections, x["memories"].shape[1], x["memories"].shape[2], matrix)
        runs[f"peer_{split}"] = peer_epoch(model, x, y, batch)
        shapes[f"peer_{split}"] = {"memory": int(x["memories"].shape[1]), "vocabulary": int(x["memories"].shape[2])}
    for run in runs.values():
        run()  # traces
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - started)
    epochs = {}
    for name in runs:
        step = statistics.median(seconds[name]) / steps
        epochs[name] = step * -(-turns[name] // batch)
        print(json.dumps({"model": name, "task": task, "batch": batch, "steps": steps, **shapes[name],
                          "ms_per_step": round(1000 * step, 3), "trn_turns": turns[name],
                          "epoch_seconds": round(epochs[name], 2),
                          "rounds_ms": [round(1000 * s / steps, 3) for s in seconds[name]]}), flush=True)
    print(json.dumps({f"{name}_epoch_over_ours": round(epochs[name] / epochs["ours"], 2) for name in runs
                      if name != "ours"}), flush=True)


if __name__ == "__main__":
    main()
