"""Per-hop attention of an exported MemN2N over a dialog's memories, as in Tables 3-6 of Bordes et al. (2017); for
the template ranker, its template model's attention, and the template and entities it chose."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from data.atomic import atomic_output
from models.examples import TurnExample, pad_batch
from models.serving.ranker import SavedModelRanker


@dataclass
class TurnAttention:
    example: TurnExample
    predicted: str
    attention: np.ndarray  # [hops, len(memory)], oldest memory first
    template: str | None = None  # a template ranker's chosen template (other models have none)

    @property
    def entities(self) -> list[tuple[str, str]]:
        """The (type, word) the template's slots were filled with, in order."""
        if self.template is None:
            return []
        return [(slot[1:-1], word) for slot, word in zip(self.template.split(" "), self.predicted.split(" "),
                                                           strict=False)
                if slot.startswith("<") and slot.endswith(">") and slot != word]

    @property
    def correct(self) -> bool:
        return self.predicted == self.example.answer


def explain_turns(ranker: SavedModelRanker, examples: Sequence[TurnExample]) -> list[TurnAttention]:
    """Each turn's prediction and attention, with the model's slots (most recent first) put back in time order."""
    import tensorflow as tf

    turns = []
    for example in examples:
        memory, speaker, query = (tf.constant(a, tf.string) for a in pad_batch([example]))
        result = ranker.serve(memory=memory, memory_speaker=speaker, query=query)
        slots = result["attention"].numpy()[0]  # [hops, memory_size]
        count = len(example.memory)
        attention = np.zeros((slots.shape[0], count))
        kept = min(count, slots.shape[1])
        attention[:, count - kept:] = slots[:, :kept][:, ::-1]  # slot j = j memories ago
        template = result["template"].numpy()[0].decode("utf-8") if "template" in result else None
        turns.append(TurnAttention(example, result["responses"].numpy()[0, 0].decode("utf-8"), attention, template))
    return turns


def explain_movie_exchanges(model_dir: str | Path, exchanges: Sequence[tuple[str, Sequence[str], str, str]],
                            ) -> list[TurnAttention]:
    """A Movie Dialog model's attention over its memories (the KB sentences its long-term memory found, then the
    dialog's texts) for ``(name, history, message, gold)`` exchanges, through its ``serving_default`` signature:
    each memory as the model holds it (KB sentences in its tokens), oldest first, the KB's as the "kb" speaker.
    Nothing for a model exported before its signatures gave the memories."""
    import tensorflow as tf

    from models.serving.ranker import load_model

    serve = load_model(model_dir)[1].signatures["serving_default"]
    if "memories" not in serve.structured_outputs:
        return []
    turns = []
    for name, history, message, gold in exchanges:
        result = serve(memory=tf.constant([list(history) or [""]]), query=tf.constant([message]))
        slots = [m.decode("utf-8") for m in result["memories"].numpy()[0]]
        used = [j for j, text in enumerate(slots) if text]
        order = used[::-1]  # slot j is j memories before the message: oldest first
        kb = max(0, len(used) - len(history))  # the KB sentences come first in the memory, the dialog after
        example = TurnExample(name, "movie", "dev", len(history) // 2, tuple(slots[j] for j in order),
                              tuple("kb" if i < kb else ("user", "bot")[(i - kb) % 2] for i in range(len(order))),
                              message, gold)
        attention = result["attention"].numpy()[0][:, order]
        turns.append(TurnAttention(example, result["responses"].numpy()[0, 0].decode("utf-8"), attention))
    return turns


def format_turn(turn: TurnAttention) -> str:
    hops = turn.attention.shape[0]
    width = max([len(text) for text in turn.example.memory] + [14])
    header = f"{'Time':>4}  {'Locutor':<7}  {'Dialog history':<{width}}  " + "  ".join(
        f"Hop #{h + 1}" for h in range(hops))
    lines = [f"Bot turn {turn.example.turn} of {turn.example.dialog_id}", header, "-" * len(header)]
    for i, (text, speaker) in enumerate(zip(turn.example.memory, turn.example.memory_speaker, strict=True)):
        weights = "  ".join(f"{turn.attention[h, i]:6.3f}" for h in range(hops))
        lines.append(f"{i + 1:>4}  {speaker.capitalize():<7}  {text:<{width}}  {weights}")
    lines += [f"User input:       {turn.example.query}", f"Correct answer:   {turn.example.answer}",
              f"Predicted answer: {turn.predicted}  [{'Correct' if turn.correct else 'Incorrect'}]"]
    if turn.template is not None:
        filled = ", ".join(f"{kind}={word}" for kind, word in turn.entities) or "none"
        lines += [f"Template:         {turn.template}", f"Entities:         {filled}"]
    return "\n".join(lines)


def write_heat_map(turn: TurnAttention, path: str | Path) -> None:
    """The turn's attention as a PNG file (:func:`heat_map_png`)."""
    with atomic_output(path) as handle:
        handle.write(heat_map_png(turn))


def heat_map_png(turn: TurnAttention) -> bytes:
    """The turn's attention as PNG bytes: one row per memory, one column per hop."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    memory = turn.example.memory
    height = max(2.0, 0.28 * len(memory) + 1.5)
    figure, axes = plt.subplots(figsize=(8, height))
    # Scaled to the turn's largest weight, not to 1: over many memories a hop's weights are all small, and on a 0-1
    # scale the lines it attends to were as white as the rest. The colour bar gives the scale.
    largest = float(turn.attention.max()) if memory and turn.attention.size else 0.0
    image = axes.imshow(turn.attention.T if memory else np.zeros((1, turn.attention.shape[0])), aspect="auto",
                        cmap="Blues", vmin=0.0, vmax=largest if largest > 0 else 1.0)
    axes.set_xticks(range(turn.attention.shape[0]), [f"hop {h + 1}" for h in range(turn.attention.shape[0])])
    axes.set_yticks(range(len(memory)), [f"{i + 1} {s[0].upper()}: {t[:60]}" for i, (t, s) in
                                         enumerate(zip(memory, turn.example.memory_speaker, strict=True))],
                    fontsize=7)
    verdict = "correct" if turn.correct else f"wrong (gold: {turn.example.answer})"
    axes.set_title(f"{turn.example.dialog_id}, bot turn {turn.example.turn}: {turn.predicted} [{verdict}]",
                   fontsize=8)
    figure.colorbar(image, ax=axes, fraction=0.04)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120)
    plt.close(figure)
    return buffer.getvalue()
