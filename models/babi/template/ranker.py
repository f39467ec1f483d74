"""The template ranker: a template model (a MemN2N over delexicalised answers) and a filler, trained in turn and
exported as one SavedModel whose ops rank raw dialogs (:class:`models.babi.template.graph.TemplateServingModule`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from models.babi.dialog_state import StateSpec
from models.babi.template.config import TemplateConfig
from models.babi.template.filling import FILL_FEATURES, FillerBatches, build_filler
from models.babi.template.graph import FillingFeatures, TemplateServingModule
from models.babi.template.lexicon import EntityLexicon, template_examples
from models.ensemble import SeedEnsemble
from models.examples import TaskData, TurnExample, batched_outputs
from models.features import FeatureSpec, spec_from_sentences
from models.methods import Ranker
from models.metrics import percent
from models.serving.export import export, prepare_output
from models.training import fit, memory_size_for

# How deep into a learned ranker's ranking :class:`RankedFilling` looks for the template's candidates.
LEARNED_FILL_DEPTH = 200


@dataclass
class TemplateRanker:
    """The lexicon, the template model and the filler; ranked in TensorFlow ops by :attr:`module`, the module
    that ``fit`` exports as one SavedModel (so the benchmark, ``dialog evaluate`` and TF Serving rank alike)."""

    lexicon: EntityLexicon
    templates: dict[str, list[str]]  # template -> its candidates
    candidates: tuple[str, ...]
    template_spec: FeatureSpec
    template_model: keras.Model
    filler: keras.Model | None
    features: tuple[str, ...] = FILL_FEATURES  # the filling features the filler reads (fewer: an ablation)
    top_k: int = 10
    state: StateSpec | None = None  # the dialog state the template model reads (None: not tracked)
    call_bias: float | None = None  # with a state: log-odds added to the API-call action (None: no such action)
    # HCN's action mask: template -> the entity kinds it waits for (:meth:`learn_waits`); None: no mask.
    waits: dict[str, tuple[str, ...]] | None = None

    @classmethod
    def fit(cls, task: TaskData, config: TemplateConfig, out: str | Path | None = None, fill_epochs: int | None = None,
            verbose: int = 0, features: Sequence[str] = FILL_FEATURES, log_dir: str | None = None,
            evaluate_dev: bool = True) -> tuple[TemplateRanker, dict]:
        """Fit on the task's ``trn``, the template model's best epoch on ``dev``; the SavedModel written to ``out``."""
        return cls.fit_examples(task.candidates, task.facts, task.split("trn"), task.split("dev"), config, out,
                                fill_epochs, verbose, features, log_dir, evaluate_dev)

    @classmethod
    def fit_examples(cls, candidates: Sequence[str], facts: Sequence[tuple[str, str, str]],
                     trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TemplateConfig,
                     out: str | Path | None = None, fill_epochs: int | None = None, verbose: int = 0,
                     features: Sequence[str] = FILL_FEATURES, log_dir: str | None = None,
                     evaluate_dev: bool = True) -> tuple[TemplateRanker, dict]:
        """The entry of ``dialog train --model template`` and the pipeline's TemplateTrainer (``fill_epochs``:
        the config's unless given; ``evaluate_dev``: rank dev with the finished model for the summary, which the
        pipeline leaves to its Evaluator)."""
        if not trn or not dev:
            raise ValueError(f"{len(trn)} training and {len(dev)} dev examples: both are needed")
        if out is not None:
            prepare_output(out)  # before any training: a refused --out costs nothing
        lexicon = EntityLexicon.learn(facts, [e.answer for e in trn])
        templates: dict[str, list[str]] = defaultdict(list)
        for candidate in candidates:
            templates[lexicon.delexicalise(candidate)].append(candidate)
        state = (StateSpec.learn(lexicon.types, trn, facts if config.kb_match else ()) if config.dialog_state
                 else None)
        state = state if state is not None and state.slots else None  # no API call, no slot to track
        trn_t, dev_t = template_examples(lexicon, state, trn), template_examples(lexicon, state, dev)
        sentences = {s for e in trn_t for s in (*e.memory, e.query, e.answer)}
        spec = spec_from_sentences(list(templates), [], sentences, memory_size_for(config, trn_t + dev_t))
        model, summary = fit(spec, trn_t, dev_t, config.template_model(), verbose, log_dir)
        ranker = cls(lexicon, dict(templates), tuple(candidates), spec, model, None, (), state=state,
                     call_bias=config.call_bias,
                     waits=cls.learn_waits(lexicon, list(templates), trn) if config.action_mask else None)
        if config.ensemble > 1:  # the examples above, not delexicalised again
            ranker, members = ranker._seeded(trn_t, dev_t, config, config.ensemble, verbose)
            summary = {**summary, "ensemble": [summary["best_epoch"], *(m["best_epoch"] for m in members)]}
        ranker, fill_summary = ranker.with_filler(trn, features, fill_epochs or config.fill_epochs, config.seed,
                                                  verbose)
        if out is not None:
            export(ranker.module, out)
        result = {"templates": len(templates), "candidates": len(candidates), "template_model": summary,
                  "filler": fill_summary, "dialog_state": list(state.slots) if state is not None else None,
                  "action_mask": ({t: list(kinds) for t, kinds in ranker.waits.items()}
                                  if ranker.waits is not None else None)}
        if evaluate_dev:  # the complete responses, not only the templates
            started = time.perf_counter()
            predicted = [row[0] for row in ranker.rank(dev, 1)]
            accuracy = percent(p == e.answer for p, e in zip(predicted, dev, strict=True))
            result.update(dev_per_response_accuracy=round(accuracy, 2),
                          dev_seconds=round(time.perf_counter() - started, 1))
        return ranker, result

    @cached_property
    def module(self) -> TemplateServingModule:
        if self.filler is None:
            raise ValueError("the template ranker has no filler yet (see with_filler)")
        return TemplateServingModule(self.lexicon.types, self.lexicon.attributes, self.candidates, self.template_spec,
                                     self.template_model, self.filler, self.features, self.top_k, self.state,
                                     self.call_bias, self.waits)

    @staticmethod
    def learn_waits(lexicon: EntityLexicon, templates: Sequence[str], trn: Sequence[TurnExample]
                    ) -> dict[str, tuple[str, ...]]:
        """The action mask, learned: each template waits for the entity kinds it names (``<phone>``) that some line
        of the dialog held a value of at every training turn it answered. A kind the bot brings in itself (the
        prices it lists in a question; "ask", a restaurant, in the greeting) is not waited for."""
        said: dict[str, set[str]] = {}
        for example in trn:
            template = lexicon.delexicalise(example.answer)
            kinds = {f"<{kind}>" for line in (*example.memory, example.query) for kind, _ in lexicon.slots(line)}
            said[template] = said[template] & kinds if template in said else kinds
        named = {t: {w for w in t.split(" ") if w.startswith("<") and w.endswith(">")} for t in templates}
        waits = {t: tuple(sorted(kinds & said.get(t, kinds))) for t, kinds in named.items()}
        return {t: kinds for t, kinds in waits.items() if kinds}

    def with_seeds(self, trn: Sequence[TurnExample], dev: Sequence[TurnExample], config: TemplateConfig,
                   seeds: int, verbose: int = 0) -> tuple[TemplateRanker, list[dict]]:
        """The same ranker, its template model the mean of ``seeds`` (:class:`models.ensemble.SeedEnsemble`): its
        own and ``seeds - 1`` more trained as ``config`` says with the next seeds; the new ones' summaries. The
        filler is kept: it is trained on the gold templates, not on the template model's."""
        return self._seeded(template_examples(self.lexicon, self.state, trn),
                            template_examples(self.lexicon, self.state, dev), config, seeds, verbose)

    def _seeded(self, trn_t: Sequence[TurnExample], dev_t: Sequence[TurnExample], config: TemplateConfig,
                seeds: int, verbose: int) -> tuple[TemplateRanker, list[dict]]:
        """:meth:`with_seeds` on the template model's own examples (``template_examples``)."""
        members, summaries = [self.template_model], []
        for offset in range(1, seeds):
            model, summary = fit(self.template_spec, trn_t, dev_t,
                                 replace(config.template_model(), seed=config.seed + offset), verbose)
            members.append(model)
            summaries.append(summary)
        return replace(self, template_model=SeedEnsemble(members)), summaries

    def with_filler(self, trn: Sequence[TurnExample], features: Sequence[str] = FILL_FEATURES, epochs: int = 10,
                    seed: int = 0, verbose: int = 0) -> tuple[TemplateRanker, dict]:
        """The same lexicon and template model with a filler trained on ``features`` only (the ablations): softmax
        cross-entropy over the candidates of each training turn's gold template."""
        unknown = sorted(set(features) - set(FILL_FEATURES))
        if unknown or not features:
            raise ValueError(f"filling features must be some of {list(FILL_FEATURES)}, got {list(features)}")
        features = tuple(f for f in FILL_FEATURES if f in features)
        gold = [self.lexicon.delexicalise(e.answer) for e in trn]
        chosen = [i for i, t in enumerate(gold)
                  if len(self.templates.get(t, [])) > 1 and trn[i].answer in self.templates[t]]
        filling = FillingFeatures(self.lexicon.types, self.lexicon.attributes, self.candidates, features)
        batches = FillerBatches.of(filling, self.templates, self.candidates, [trn[i] for i in chosen],
                                   [gold[i] for i in chosen], seed=seed)
        keras.utils.set_random_seed(seed)
        filler = build_filler(len(features))
        filler.compile(optimizer=keras.optimizers.Adam(0.01),
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        # No training turn answers with a template of several candidates (a corpus without entities): there is
        # nothing to choose between, so the filler's scores never decide and it is left untrained.
        history = filler.fit(batches, epochs=epochs, verbose=verbose) if chosen else None
        summary = {"examples": len(batches.answers), "features": list(features),
                   "train_accuracy": round(100 * history.history["accuracy"][-1], 2) if history else None}
        return replace(self, filler=filler, features=features), summary

    def outputs(self, examples: Sequence[TurnExample], batch_size: int = 64) -> dict[str, np.ndarray]:
        """The module's ``responses``, ``indices`` and ``template`` of each example, a batch at a time."""
        def call(memory: np.ndarray, speaker: np.ndarray, query: np.ndarray) -> dict[str, tf.Tensor]:
            return self.module.serve_speakers(memory=tf.constant(memory, tf.string),
                                              memory_speaker=tf.constant(speaker, tf.string),
                                              query=tf.constant(query, tf.string))

        return batched_outputs(examples, call, ("responses", "indices", "template"), batch_size)

    def templates_of(self, examples: Sequence[TurnExample]) -> list[str]:
        """The template model's best template for each example."""
        if not examples:
            return []
        return [t.decode("utf-8") for t in self.outputs(examples)["template"]]

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        """The best template's candidates, best filled first, then the others (see :class:`TemplateServingModule`).
        Only the best template competes: letting the next few compete too did not help on task 6's dev."""
        if not examples:
            return []
        return [[r.decode("utf-8") for r in row[:k]] for row in self.outputs(examples)["responses"]]


@dataclass
class RankedFilling:
    """Filling with no hand-chosen feature: the template ranker's template, its candidates in the order another
    ranker (a MemN2N over every candidate) ranks them; the template itself when none of them is in that ranking."""

    template: TemplateRanker
    ranker: Ranker

    def rank(self, examples: Sequence[TurnExample], k: int = 10) -> list[list[str]]:
        if not examples:
            return []
        ranked = self.ranker.rank(examples, LEARNED_FILL_DEPTH)
        rows = []
        for template, row in zip(self.template.templates_of(examples), ranked, strict=True):
            group = set(self.template.templates.get(template, ()))
            rows.append([c for c in row if c in group][:k] or [template])
        return rows
