"""A conversation with an exported model: it keeps the history, answers each user turn, and runs API calls.

When the bot's reply is an API call, the call is looked up in the KB and the results join the history as the
dialogs' API output lines do; the bot then speaks again on ``<SILENCE>``, as in the paper's dialogs, until it
says something that is not an API call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import tensorflow as tf

from data.corpus import SILENCE, KBFact, is_api_call
from data.kb_lookup import lookup
from models.serving.ranker import LONG_TERM_MEMORY, load_model, read_spec
from models.serving.rest import is_text


@dataclass
class ChatSession:
    model_dir: Path
    facts: Sequence[KBFact] = ()
    memory: list[str] = field(default_factory=list)
    max_api_calls: int = 3

    def __post_init__(self) -> None:
        self.model_dir, loaded = load_model(self.model_dir)
        self._serve = loaded.signatures["serving_default"]
        spec = read_spec(self.model_dir) or {}
        # A Movie Dialog model (models.movie.streamed) holds its KB as long-term memory and makes no API calls.
        self.long_term_memory: dict | None = spec.get(LONG_TERM_MEMORY)

    def _reply(self, query: str) -> str:
        memory = tf.constant(np.array(self.memory, dtype=object).reshape(1, len(self.memory)), tf.string)
        outputs = self._serve(memory=memory, query=tf.constant([query]))
        return outputs["responses"][0, 0].numpy().decode("utf-8")

    def respond(self, user: str) -> list[tuple[str, str]]:
        """What this user turn produces, in order: ``("bot", reply)`` and ``("kb", API output line)``.

        A turn that is not valid text (undecodable input) is a ``ValueError``, and the conversation is kept as it
        was."""
        if not is_text(user) or "\0" in user:
            raise ValueError("that line is not valid text (invalid UTF-8 or a NUL byte); the conversation is kept")
        query = user.strip() or SILENCE
        produced: list[tuple[str, str]] = []
        for _ in range(self.max_api_calls + 1):
            reply = self._reply(query)
            self.memory += [query, reply]
            produced.append(("bot", reply))
            if not is_api_call(reply) or not self.facts:
                break
            results = lookup(self.facts, reply)
            self.memory += results
            produced += [("kb", line) for line in results]
            query = SILENCE
        return produced
