"""Movie Dialog text as the project's models read it (appendix A of Dodge et al.): appendix A's dictionary, each KB
entity one token (its words joined by ``_``), and the long-term memory of KB sentences found by a hash lookup.

Shared by the supervised embeddings and MemN2N (``models.movie.neural``) and the LSTM (``models.movie.lstm``).
An example with several correct answers is trained once per answer (at most ``MAX_ANSWERS``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from data.movie.reader import EntityDictionary, Triple
from models.examples import TurnExample
from models.movie.examples import MovieExample, turn_examples

MAX_ANSWERS = 3


class EntityText:
    """Text in the dictionary's tokens, one whitespace token per entity; with KB triples, the long-term memory."""

    def __init__(self, dictionary: EntityDictionary, entities: Sequence[str], triples: Sequence[Triple] = (),
                 max_frequency: int = 100, max_kb: int = 30) -> None:
        self.dictionary = dictionary
        self.token_of = {e: self(e) for e in entities}
        self.entity_of = {token: e for e, token in self.token_of.items()}
        self.kb = [f"{self.token_of.get(t.subject, self(t.subject))} {t.relation} "
                   f"{self.token_of.get(t.value, self(t.value))}" for t in triples]
        self.index: dict[str, list[int]] = defaultdict(list)
        for i, sentence in enumerate(self.kb):
            for word in set(sentence.split()):
                self.index[word].append(i)
        self.max_frequency, self.max_kb = max_frequency, max_kb

    def long_term(self, message: str) -> list[str]:
        """KB sentences holding a word of ``message`` (hash lookup), most shared words first."""
        hits: Counter[int] = Counter()
        for word in set(message.split()):
            found = self.index.get(word, ())
            if len(found) <= self.max_frequency:
                hits.update(found)
        return [self.kb[i] for i, _ in sorted(hits.items(), key=lambda item: (-item[1], item[0]))[:self.max_kb]]

    def __call__(self, text: str) -> str:
        return " ".join(t.replace(" ", "_") for t in self.dictionary.tokenize(text)) or "<empty>"

    def examples(self, examples: Sequence[MovieExample], all_answers: bool) -> list[TurnExample]:
        """In the dictionary's tokens, with the long-term memory (KB sentences read as user-side memories, as the KB
        results of bAbI) before the history; every answer (up to ``MAX_ANSWERS``) or the first."""
        return turn_examples(examples, text=self, answer_text=lambda a: self.token_of.get(a, self(a)),
                             long_term=self.long_term if self.kb else None,
                             answers=MAX_ANSWERS if all_answers else 1)


def prepare_text(entities: Sequence[str], trn: Sequence[MovieExample], sentences: Sequence[str] = (),
                 triples: Sequence[Triple] = ()) -> tuple[EntityText, list[str]]:
    """The dictionary built on the training texts, and the candidates in its tokens: the entities, then the
    reply ``sentences``; ``EntityText.entity_of`` maps each candidate back to its text in the corpus."""
    texts = [e.query for e in trn] + [h for e in trn for h in e.history]
    text = EntityText(EntityDictionary(entities, texts), entities, triples)
    tokens = {original: text.token_of.get(original) or text(original)
              for original in dict.fromkeys([*entities, *sentences])}
    text.entity_of.update({token: original for original, token in tokens.items() if original not in text.token_of})
    return text, list(dict.fromkeys(tokens.values()))
