"""The methods of Bordes et al.'s Table 2, registered in the one registry (``models.methods``), in the table's
column order: the paper's baselines and networks, then ours (the template ranker) and its ablations.

Each is ``fit(task, work_dir, settings) -> Ranker`` on a :class:`~models.examples.TaskData`. Without
``settings.config`` a method follows the table's recipe for the task (Tables 8-9's sizes, its variant or epoch
chosen on ``dev``); with it (``dialog train``, the TFX Trainer) it trains exactly that config and writes its
SavedModel at ``work_dir``. A note says how each variant was chosen, naming the split it was chosen on
(``settings.chosen_on``: dev, or a fold of trn for task 6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from models.babi.presets import HCN_TEMPLATE, OOV_DEV_STEP, SEED_ENSEMBLE, paper_config
from models.babi.rule_based import RuleBasedSystem
from models.babi.rule_based_dstc2 import DSTC2RuleBased
from models.babi.template.config import TemplateConfig
from models.babi.template.filling import POLICY_FEATURES
from models.babi.template.ranker import LEARNED_FILL_DEPTH, RankedFilling, TemplateRanker
from models.examples import TaskData, TurnExample
from models.features import kb_entity_types
from models.ir_baselines import NearestNeighbour, TfIdfMatch
from models.methods import Fitted, NotApplicable, Ranker, Settings, best_answers, register
from models.metrics import accuracy_report
from models.serving.ranker import ExportedRanker
from models.training import OOV_DEV_SPLIT, TrainConfig, oov_dev_examples, train

PAPER = "babi"
DEFAULT_EPOCHS = 30
# Table 2's networks (supervised embeddings, the MemN2N rows) train until PATIENCE epochs in a row beat no best kept
# (models.training.BestOnDev), up to MAX_EPOCHS (or `--epochs`): a fixed budget cut rows short that were still
# learning, and ran on for 29 epochs after rows that peaked at the first. The embeddings' dev accuracy swings by up
# to 30 points from one epoch to the next under Table 8's rates (docs/results.md), so they wait longer.
# Hybrid Code Networks' template LSTM waits less: its dev accuracy levels off within a few epochs of its best and
# then only wavers (the curve is in docs/results.md).
PATIENCE = {"memn2n": 10, "embeddings": 25, "hcn": 5}
MAX_EPOCHS = 100
DSTC2_ASK_ORDERS = (("cuisine", "location", "price"), ("location", "cuisine", "price"),
                    ("location", "price", "cuisine"))
# What ``dialog benchmark`` runs when no method is named: the paper's columns.
PAPER_METHODS = ("rule_based", "tfidf", "tfidf_type", "nearest_neighbour", "embeddings", "memn2n", "memn2n_match")


def epochs_of(settings: Settings) -> int:
    return settings.epochs or DEFAULT_EPOCHS


def budget_of(settings: Settings, model: str) -> dict[str, int]:
    """A Table 2 network's epochs and patience: at most ``--epochs`` when given, else :data:`MAX_EPOCHS`."""
    return {"epochs": settings.epochs or MAX_EPOCHS, "patience": PATIENCE[model]}


def dev_accuracy(ranker: Ranker, dev: Sequence[TurnExample]) -> float:
    return accuracy_report(dev, best_answers(ranker, dev))["per_response_accuracy"]


@register("rule_based", PAPER, "Rule-based", seeded=False)
def rule_based(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
    """Tasks 1-5: the simulator's rules; task 6: the DSTC2 rules, their question order and policy chosen on dev."""
    if task.task == 6:
        variants = [DSTC2RuleBased.fit(task, ask_order=order, learned_policy=learned)
                    for order in DSTC2_ASK_ORDERS for learned in (False, True)]
        best = max(variants, key=lambda system: dev_accuracy(system, task.split("dev")))
        return Fitted(best, f"asks {', '.join(best.ask_order)}; "
                            f"{'learned' if best.learned_policy else 'hand-written'} policy "
                            f"(chosen on {settings.chosen_on})")
    if task.task > 5:
        raise NotApplicable("no rule-based system for this task")
    return Fitted(RuleBasedSystem.fit(task))


def _tfidf(with_types: bool) -> Callable[[TaskData, Path, Settings], Fitted]:
    def fit(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
        trn = task.split("trn")
        documents = [e.query for e in trn] + [e.answer for e in trn] + list(task.candidates)
        types = kb_entity_types(task.facts) if with_types else None
        variants = [TfIdfMatch(task.candidates, documents, types, use_history=h) for h in (False, True)]
        best = max(variants, key=lambda model: dev_accuracy(model, task.split("dev")))
        return Fitted(best, f"input: {'whole history' if best.use_history else 'last utterance'} "
                            f"(chosen on {settings.chosen_on})")

    return fit


register("tfidf", PAPER, "TF-IDF (no type)", seeded=False)(_tfidf(False))
register("tfidf_type", PAPER, "TF-IDF (+ type)", seeded=False)(_tfidf(True))


@register("nearest_neighbour", PAPER, "Nearest neighbour", seeded=False)
def nearest_neighbour(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
    """Word overlap counted, or over the words of either (``NearestNeighbour.normalised``): chosen on dev, a tie
    keeping the count."""
    variants = [NearestNeighbour(task.split("trn"), normalised=n) for n in (False, True)]
    best = max(variants, key=lambda model: dev_accuracy(model, task.split("dev")))
    return Fitted(best, f"overlap: {'shared over either' if best.normalised else 'shared words'} "
                        f"(chosen on {settings.chosen_on})")


def _train(task: TaskData, config: TrainConfig, out: Path, settings: Settings,
           oov_dev: Sequence[TurnExample] | None = None, top_k: int | None = None, oov_out: Path | None = None
           ) -> dict:
    return train(task, config, out=out, verbose=settings.verbose, log_dir=settings.log_dir,
                 top_k=top_k or settings.top_k, oov_dev=oov_dev, oov_out=oov_out)


@register("embeddings", PAPER, "Supervised embeddings")
def embeddings(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
    """Table 8 as it is (its learning rates work with Adam here), with A and B apart and with A = B: "we also
    consider the case of enforcing A = B, which sometimes works better, and optimize the choice on the validation
    set" (section 4.3)."""
    if settings.config:  # `dialog train`, the TFX Trainer: that config, exported at work_dir
        summary = _train(task, settings.config, work_dir, settings)
        return Fitted(ExportedRanker(work_dir), _chosen(settings.config, summary, settings, _embedding_matrices)
                      + f", {summary['train_seconds']} s", summary)
    config = paper_config(task.task, model="embeddings", **budget_of(settings, "embeddings"), seed=settings.seed)
    return _table_row(task, work_dir, settings, [config, replace(config, shared_embeddings=True)],
                      _embedding_matrices, "choice of A and B")


def _embedding_matrices(config: TrainConfig) -> str:
    return "A = B" if config.shared_embeddings else "A and B apart"


def _memn2n_recipe(task: TaskData, settings: Settings, match_type: bool) -> list[TrainConfig]:
    """Table 2's MemN2N row: words no training dialog holds (OOV entities) at a zero embedding, a gradient row per
    word occurrence (``models.memn2n.summed_rows``), the shared defaults' step and
    :data:`~models.babi.presets.OOV_DEV_STEP`, each trained until ``PATIENCE`` epochs in a row beat no best."""
    config = paper_config(task.task, match_type=match_type, **budget_of(settings, "memn2n"), only_learned_words=True,
                          per_occurrence_gradient=True, seed=settings.seed)
    return [config, replace(config, **OOV_DEV_STEP)]


def _memn2n(match_type: bool) -> Callable[[TaskData, Path, Settings], Fitted]:
    def fit(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
        if settings.config:  # `dialog train`, the TFX Trainer: that config, exported at work_dir
            summary = _train(task, settings.config, work_dir, settings)
            return Fitted(ExportedRanker(work_dir), _chosen(settings.config, summary, settings, _memn2n_step)
                          + _memn2n_options(settings.config), summary)
        shared, smaller = _memn2n_recipe(task, settings, match_type)  # the smaller step is for the OOV sets
        return _table_row(task, work_dir, settings, [shared], _memn2n_step, "step", _memn2n_options(shared),
                          oov_only=[smaller])

    return fit


def _table_row(task: TaskData, work_dir: Path, settings: Settings, configs: Sequence[TrainConfig],
               variant: Callable[[TrainConfig], str], differ_in: str, options: str = "",
               oov_only: Sequence[TrainConfig] = ()) -> Fitted:
    """Every variant of ``configs`` trained once (``variant`` names one in the note, ``differ_in`` what they differ
    in), and those of ``oov_only`` where the task has an OOV dev set (``data.oov_dev``) to choose them on. The plain
    splits are scored with the variant and epoch best on dev; where there is an OOV dev set, the OOV splits with the
    variant and epoch best on it, so neither kind of test set pays for the other's choice. A tie keeps the earlier
    variant."""
    oov_dev = oov_dev_examples(task)
    runs = []
    for number, config in enumerate([*configs, *oov_only] if oov_dev else configs):
        directory = work_dir / f"variant{number}"
        summary = _train(task, config, directory / "dev", settings, oov_dev=oov_dev,
                         oov_out=directory / "oov" if oov_dev else None)
        runs.append((number, config, directory, summary))
    number, config, directory, summary = max(runs, key=lambda run: (run[3]["dev_per_response_accuracy"], -run[0]))
    others = f"; each chosen over {len(runs) - 1} other {differ_in}" if len(runs) > 1 else ""
    tail = f"{options}; {sum(run[3]['train_seconds'] for run in runs):.1f} s"
    chosen = _chosen(config, summary, settings, variant)
    if not oov_dev:
        return Fitted(ExportedRanker(directory / "dev"), chosen + others + tail, summary)
    oov_number, oov_config, oov_directory, oov_summary = max(
        runs, key=lambda run: (run[3]["oov_dev_best_per_response_accuracy"], -run[0]))
    oov_ranker = ExportedRanker(oov_directory / "oov")
    note = (f"plain sets: {chosen}; OOV sets: {variant(oov_config)}, best epoch {oov_summary['oov_dev_best_epoch']}/"
            f"{oov_summary['history'][-1]['epoch']} on OOV dev ({oov_summary['oov_dev_best_per_response_accuracy']}%)"
            + others + tail)
    return Fitted(ExportedRanker(directory / "dev"), note, summary,
                  by_split={"tst-OOV": oov_ranker, OOV_DEV_SPLIT: oov_ranker})


def _chosen(config: TrainConfig, summary: dict, settings: Settings, variant: Callable[[TrainConfig], str]) -> str:
    """The variant and the epoch chosen on dev, out of the epochs run."""
    return (f"{variant(config)}, best epoch {summary['best_epoch']}/{summary['history'][-1]['epoch']} on "
            f"{settings.chosen_on} ({summary['dev_per_response_accuracy']}%)")


def _memn2n_step(config: TrainConfig) -> str:
    return f"Adam {config.learning_rate} in batches of {config.batch_size}"


def _memn2n_options(config: TrainConfig) -> str:
    return (("; unseen words zero" if config.only_learned_words else "")
            + ("; a gradient row per word occurrence" if config.per_occurrence_gradient else ""))


register("memn2n", PAPER, "MemN2N (no match type)")(_memn2n(False))
register("memn2n_match", PAPER, "MemN2N (+ match type)")(_memn2n(True))


def _template_config(task: TaskData, settings: Settings, dialog_state: bool, encoder: str,
                     kb_match: bool = True, word_vectors: bool = False) -> TrainConfig:
    """The template ranker's settings in this run (HCN's with ``encoder="lstm"``; ``kb_match=False``: its
    ablation, a state that does not say whether the KB has what it holds; ``word_vectors``: HCN with its averaged
    pretrained word vectors)."""
    if isinstance(settings.config, TemplateConfig):  # a given config, and still the ablation's part removed
        return replace(settings.config, dialog_state=settings.config.dialog_state and dialog_state,
                       kb_match=settings.config.kb_match and kb_match,
                       word_vectors=settings.config.word_vectors or word_vectors)
    model = ({**HCN_TEMPLATE, "patience": PATIENCE["hcn"], "kb_match": kb_match and HCN_TEMPLATE["kb_match"],
              "word_vectors": word_vectors}
             if encoder == "lstm" else {"encoder": encoder})
    return settings.config or paper_config(task.task, model="template", epochs=epochs_of(settings),
                                           dialog_state=dialog_state, seed=settings.seed, **model)


def _template_ranker(task: TaskData, directory: Path, settings: Settings, dialog_state: bool = True,
                     encoder: str = "memn2n", kb_match: bool = True, word_vectors: bool = False
                     ) -> tuple[TemplateRanker, dict, Path]:
    """The template ranker of ``task`` in this run (trained once: the ablations share its template model and
    lexicon, through ``settings.memo``), its summary and the directory of its SavedModel. ``encoder="lstm"``:
    Hybrid Code Networks' recurrent policy as the template model, trained until :data:`PATIENCE` epochs in a row
    beat no best (at most ``--epochs``, else :data:`DEFAULT_EPOCHS`), ranking with HCN's action mask."""
    key = ("template_ranker", id(task), epochs_of(settings), dialog_state, encoder, kb_match, word_vectors,
           settings.seed)
    if key not in settings.memo:
        config = _template_config(task, settings, dialog_state, encoder, kb_match, word_vectors)
        ranker, summary = TemplateRanker.fit(task, config, directory, verbose=settings.verbose,
                                             log_dir=settings.log_dir, evaluate_dev=settings.evaluate_dev)
        settings.memo[key] = (task, ranker, summary, directory)  # the task held, so its id stays its own
    _, ranker, summary, directory = settings.memo[key]
    return ranker, summary, directory


def _template_memn2n(removed: Sequence[str] = (), dialog_state: bool = True, call_action: bool = True,
                     encoder: str = "memn2n", action_mask: bool = True, ensemble: int = 1, kb_match: bool = True,
                     word_vectors: bool = False) -> Callable[[TaskData, Path, Settings], Fitted]:
    """The template ranker, or an ablation: (``removed``) the same template model, the filler without those
    features; (``dialog_state=False``) a template model that does not read the tracked dialog state;
    (``call_action=False``) the same model and filler, the API calls ranked as templates like the others.
    ``encoder="lstm"``: Hybrid Code Networks (the template model an LSTM over the utterances, its action mask);
    (``action_mask=False``) the same HCN ranking without its mask; (``ensemble``) its template model the mean of
    this many, the same one and more trained with the next seeds; (``kb_match=False``) HCN whose tracked state
    does not say whether the KB has what it holds; (``word_vectors``) HCN reading its averaged pretrained word
    vectors too."""
    whole = not removed and dialog_state and call_action and action_mask and ensemble == 1 and kb_match
    name = "template LSTM" if encoder == "lstm" else "template MemN2N"

    def fit(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
        ranker, summary, directory = _template_ranker(task, work_dir if whole else work_dir / "template", settings,
                                                      dialog_state, encoder, kb_match, word_vectors)
        model = summary["template_model"]
        state = summary["dialog_state"]
        note = (f"{summary['templates']} templates; {name} best epoch {model['best_epoch']}/"
                f"{model['history'][-1]['epoch']} on {settings.chosen_on} ({model['dev_per_response_accuracy']}% of "
                f"templates), {model['train_seconds']} s; dialog state: " + (", ".join(state) if state else "none"))
        if not call_action:
            return Fitted(replace(ranker, call_bias=None), "the template ranker above; API calls ranked as templates "
                                                           "like the others (no call action)", summary)
        if not action_mask:
            return Fitted(replace(ranker, waits=None), "the ranker above, without its action mask", summary)
        if ensemble > 1:
            config = _template_config(task, settings, dialog_state, encoder, kb_match, word_vectors)
            seeded, members = ranker.with_seeds(task.split("trn"), task.split("dev"), config, ensemble)
            return Fitted(seeded, f"the ranker above, its {name} the mean of {ensemble} seeds (best epochs "
                          + ", ".join(str(m["best_epoch"]) for m in [model, *members]) + ")", summary)
        if not removed:  # the exported SavedModel: what TF Serving would answer
            return Fitted(ExportedRanker(directory), note + f"; filling trained on {summary['filler']['examples']} "
                                                              "turns", summary)
        ablated, _ = ranker.with_filler(task.split("trn"), [f for f in ranker.features if f not in removed])
        return Fitted(ablated, f"the template model above; filler without {', '.join(removed)}", summary)

    return fit


register("template_memn2n", PAPER, "Template MemN2N + learned filling (ours)")(_template_memn2n())
for _name in POLICY_FEATURES:
    register(f"template_memn2n-no_{_name}", PAPER, f"Template MemN2N without {_name}")(_template_memn2n((_name,)))
register("template_memn2n-no_policy_features", PAPER,
         "Template MemN2N without the three policy features")(_template_memn2n(POLICY_FEATURES))
register("template_memn2n-no_dialog_state", PAPER,
         "Template MemN2N without the tracked dialog state")(_template_memn2n(dialog_state=False))
register("template_memn2n-no_call_action", PAPER,
         "Template MemN2N without the API call as one action")(_template_memn2n(call_action=False))
register("hcn", PAPER, "Hybrid Code Networks (template LSTM, ours)")(_template_memn2n(encoder="lstm"))
register("hcn-no_action_mask", PAPER, "Hybrid Code Networks without the action mask"
         )(_template_memn2n(encoder="lstm", action_mask=False))
register("hcn-ensemble", PAPER, f"Hybrid Code Networks, {SEED_ENSEMBLE} seeds averaged"
         )(_template_memn2n(encoder="lstm", ensemble=SEED_ENSEMBLE))
register("hcn-no_kb_match", PAPER, "Hybrid Code Networks whose state does not say whether the KB has it"
         )(_template_memn2n(encoder="lstm", kb_match=False))
register("hcn-ensemble-no_kb_match", PAPER, f"Hybrid Code Networks, {SEED_ENSEMBLE} seeds averaged, whose state "
         "does not say whether the KB has it")(_template_memn2n(encoder="lstm", ensemble=SEED_ENSEMBLE, kb_match=False))
register("hcn-no_dialog_state", PAPER, "Hybrid Code Networks without the tracked dialog state"
         )(_template_memn2n(dialog_state=False, encoder="lstm"))
register("hcn-word_vectors", PAPER, "Hybrid Code Networks with averaged pretrained word vectors"
         )(_template_memn2n(encoder="lstm", word_vectors=True))


@register("template_memn2n-memn2n_filling", PAPER, "Template MemN2N, filled by a MemN2N (no hand-chosen feature)")
def template_memn2n_learned_filling(task: TaskData, work_dir: Path, settings: Settings) -> Fitted:
    """The template model, its candidates ranked by a MemN2N with match type over every candidate: a filler that
    learns everything (the row beside the feature-based filler and its ablations)."""
    ranker, _, _ = _template_ranker(task, work_dir / "template", settings)
    epochs = epochs_of(settings)
    config = paper_config(task.task, match_type=True, epochs=epochs, only_learned_words=True, seed=settings.seed)
    summary = _train(task, config, work_dir / "filling", settings, top_k=LEARNED_FILL_DEPTH)
    return Fitted(RankedFilling(ranker, ExportedRanker(work_dir / "filling")),
                  f"the template model above; filled by a MemN2N with match type (best epoch {summary['best_epoch']}"
                  f"/{epochs} on {settings.chosen_on}, {summary['dev_per_response_accuracy']}%)", summary)
