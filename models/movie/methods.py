"""The methods of Dodge et al.'s Table 6, registered in the one registry (``models.methods``) in the table's row
order: the task-specific baselines (KB QA, SVD, IR), the models trained on each task alone (LSTM, supervised
embeddings, MemN2N), then one joint model of each kind trained on every task at once.

Each is ``fit(task, work_dir, settings) -> Ranker`` on a :class:`MovieTask`: the corpus read once and the tasks to
train on (one, or every learned task for the joint models); ``settings.epochs`` replaces each model's own epochs.
With ``MovieTask.streamed`` the LSTM, MemN2N and supervised embeddings rows train with the pipeline's streamed trainer
(:mod:`models.movie.streamed_fit`), the one that fits the paper's scale. A
fit reads ``train`` and ``dev`` only, and what it chooses (one or two dictionaries, IR's input) it chooses on
``dev`` and says in its note. The learned models rank over every candidate they know (the entities, and task 4's
replies) and give their whole order, so that a split is ranked among its own candidates (:func:`ranked_among`);
the streamed ones rank each example among its own candidates inside their SavedModel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from data.movie.reader import MovieCorpus
from models.methods import Among, Fitted, NotApplicable, Ranker, Settings, register, unwrapped
from models.metrics import hits_at_k
from models.movie.baselines import DiscussionIr, KbQa, SvdRecommender
from models.movie.examples import MovieData, MovieExample
from models.movie.lstm import LstmConfig, MovieLstm
from models.movie.neural import MovieRanker
from models.movie.paper import PAPER_K
from models.movie.streamed import (
    STREAMED_EMBEDDINGS,
    STREAMED_JOINT_EMBEDDINGS,
    STREAMED_JOINT_MEMN2N,
    STREAMED_LSTM,
    StreamedConfig,
)
from models.movie.streamed_fit import MODEL_DIR, RECORDS, fit_streamed
from models.training import EmbeddingsConfig, MemN2NConfig, TrainConfig, TrainingDiverged

PAPER = "movie"

# Adam, 8 epochs (stopping after 3 without dev progress), margin ranking with 100 sampled negatives, history;
# batches of 32, as Table 6 was measured with.
EMBEDDINGS_CONFIG = EmbeddingsConfig(embedding_dim=64, learning_rate=0.01, epochs=8, negatives=100, margin=0.1,
                                     use_history=True, patience=3, batch_size=32)
# Adam, softmax over the entities, 8 epochs (patience 3), memory of 40: up to 30 KB sentences and the history.
MEMN2N_CONFIG = MemN2NConfig(embedding_dim=64, learning_rate=0.005, epochs=8, patience=3, max_memory=40,
                             batch_size=32)
# The joint models: two dictionaries; 2 hops with input, memory and output dictionaries (appendix A).
JOINT_EMBEDDINGS_CONFIG = replace(EMBEDDINGS_CONFIG, shared_embeddings=False)
JOINT_MEMN2N_CONFIG = replace(MEMN2N_CONFIG, hops=2, dictionaries=3)

# Appendix B: d = 100 and these learning rates (task 4's d = 512 is left at 100 on this 2-core machine).
LSTM_CONFIG = LstmConfig(embedding_dim=100, epochs=8, patience=3)
LSTM_LEARNING_RATES = {1: 0.001, 2: 0.01, 3: 0.001, 4: 0.01}


@dataclass(frozen=True)
class MovieTask:
    """What a Movie Dialog method fits on: the corpus, read once for every method, and the tasks to train on."""

    data: MovieData
    tasks: tuple[int, ...]
    streamed: bool = False  # the LSTM, MemN2N and embeddings rows by the streamed trainer

    def examples(self, split: str) -> list[MovieExample]:
        """The split's examples of every task, task by task."""
        return [e for t in self.tasks for e in self.data.examples(t, split)]

    def sentences(self) -> list[str]:
        """Task 4's reply candidates when it is among the tasks: the training replies, then both candidate files
        (so that one model can rank dev and test, each among its own file)."""
        if 4 not in self.tasks:
            return []
        replies = [a for e in self.data.examples(4, "train") for a in e.answers]
        return list(dict.fromkeys([*replies, *(c for split in ("dev", "test") for c in self.data.candidates(split))]))


def learned_tasks(corpus: MovieCorpus) -> list[int]:
    """The tasks the learning models train on: those with train, dev and test files (and, for task 4, the dev
    and test candidate files)."""
    return [t for t in (1, 2, 3, 4) if t in corpus.tasks and {"train", "dev", "test"} <= set(corpus.tasks[t])
            and (t != 4 or {"dev", "test"} <= set(corpus.candidates))]


def candidates_of(data: MovieData, task: int, split: str) -> list[str]:
    """What a task's split is ranked among: the KB entities (tasks 1-3) or the split's candidate file (task 4)."""
    return data.candidates(split) if task == 4 else data.entities


def ranked_among(ranker: Ranker, data: MovieData, task: int, split: str) -> Ranker:
    """``ranker`` ranking a task's split among that split's candidates. A learned model orders every candidate it
    knows and is restricted (:class:`~models.methods.Among`); a baseline already ranks only its own."""
    ranker = unwrapped(ranker)
    return Among(ranker, candidates_of(data, task, split)) if hasattr(ranker, "order") else ranker


def hits(ranker: Ranker, data: MovieData, task: int, split: str) -> tuple[float, list[list[str]]]:
    """hits@k of a task's split with the paper's k, each example ranked among the split's candidates, and the
    rankings."""
    k, examples = PAPER_K[task], data.examples(task, split)
    ranked = ranked_among(ranker, data, task, split).rank(examples, k)
    return hits_at_k(examples, ranked, k), ranked


def _only_task(task: MovieTask) -> int:
    if len(task.tasks) != 1:
        raise ValueError(f"trains on one task at a time, not {list(task.tasks)} (the joint methods train on several)")
    return task.tasks[0]


def _learned_task(task: MovieTask) -> int:
    number = _only_task(task)
    if number not in learned_tasks(task.data.corpus):
        raise NotApplicable(f"task {number} lacks a train, dev or test file (or task 4 its candidate files)")
    return number


def _streamed(task: MovieTask, config: StreamedConfig, work_dir: Path, settings: Settings, name: str) -> Fitted:
    """``task`` trained by the streamed trainer with ``config`` (its epochs replaced by ``settings.epochs``)."""
    config = replace(config, epochs=settings.epochs or config.epochs, seed=settings.seed)
    ranker, summary = fit_streamed(task.data, task.tasks, config, work_dir, settings.memo.get(RECORDS),
                                   settings.memo.get(MODEL_DIR))
    shape = (f"the last {config.context} messages and the query, up to {config.max_tokens} words, d = "
             f"{config.embedding_dim}, Adam {config.learning_rate}" if config.encoder == "lstm"
             else f"{config.hops} hop(s), {config.dictionaries} dictionaries")
    return Fitted(ranker, f"{name}, streamed trainer ({shape}, "
                          f"batches of {config.batch_size}, softmax over the batch's answers and {config.sampled} "
                          f"sampled entities): best epoch {summary['best_epoch']}/{config.epochs}, dev hits@k "
                          f"{summary['dev_hits']}, training {summary['train_seconds']} s", summary)


@register("movie_qa", PAPER, "QA system")
def qa(task: MovieTask, work_dir: Path, settings: Settings) -> Fitted:
    """Task 1 answered from the KB: the relation each question pattern asks for, learned on train."""
    data = task.data
    if _only_task(task) != 1 or data.corpus.kb is None:
        raise NotApplicable("the QA system answers task 1 from the KB")
    return Fitted(KbQa(data.triples, data.entities, data.examples(1, "train")))


@register("movie_svd", PAPER, "SVD")
def svd(task: MovieTask, work_dir: Path, settings: Settings) -> Fitted:
    """Task 2: the movies of the training dialogs factorised, each test user folded in from the movies it names."""
    data = task.data
    if _only_task(task) != 2 or data.corpus.kb is None:
        raise NotApplicable("SVD recommends the KB's movies on task 2")
    movies = sorted({t.subject for t in data.triples})
    return Fitted(SvdRecommender(movies, data.entities, data.examples(2, "train")))


@register("movie_ir", PAPER, "IR")
def ir(task: MovieTask, work_dir: Path, settings: Settings) -> Fitted:
    """Task 4 by TF-IDF: the query alone or with the history, chosen on dev (the history without a dev file)."""
    data = task.data
    if _only_task(task) != 4 or "test" not in data.corpus.candidates:
        raise NotApplicable("IR ranks task 4's replies from its candidate files")
    training = data.examples(4, "train")
    variants = {history: DiscussionIr(data.candidates, training, history) for history in (True, False)}
    use_history = True
    if "dev" in data.corpus.candidates:
        use_history = hits(variants[True], data, 4, "dev")[0] >= hits(variants[False], data, 4, "dev")[0]
    return Fitted(variants[use_history], f"IR input: {'query and history' if use_history else 'query'} (chosen on dev)")


@register("movie_lstm", PAPER, "LSTM")
def lstm(task: MovieTask, work_dir: Path, settings: Settings) -> Fitted:
    """One task on its own: a message as the mean of the LSTM's hidden states (appendix A)."""
    number = _learned_task(task)
    if task.streamed:
        return _streamed(task, STREAMED_LSTM, work_dir, settings, f"LSTM task {number}")
    config = replace(LSTM_CONFIG, learning_rate=LSTM_LEARNING_RATES[number],
                     epochs=settings.epochs or LSTM_CONFIG.epochs)
    model = MovieLstm.fit(task.data.entities, task.examples("train"), task.examples("dev"), config,
                          sentences=task.sentences())
    return Fitted(model, f"LSTM task {number}: learning rate {config.learning_rate}, best epoch "
                         f"{model.summary['best_epoch']}/{config.epochs}", model.summary)


@register("movie_embeddings", PAPER, "Supervised embeddings")
def embeddings(task: MovieTask, work_dir: Path, settings: Settings) -> Fitted:
    """One task on its own, with one dictionary or two, whichever has the better hits@k on dev (streamed: two, as
    the pipeline's; choosing on dev would train twice at the paper's scale)."""
    number = _learned_task(task)
    if task.streamed:
        return _streamed(task, STREAMED_EMBEDDINGS, work_dir, settings,
                         f"Supervised embeddings task {number} (two dictionaries)")
    k = PAPER_K[number]
    fitted: dict[bool, tuple[float, MovieRanker]] = {}
    diverged: dict[bool, str] = {}
    for shared in (True, False):
        config = replace(EMBEDDINGS_CONFIG, shared_embeddings=shared,
                         epochs=settings.epochs or EMBEDDINGS_CONFIG.epochs)
        try:
            model = MovieRanker.fit(task.data.entities, task.examples("train"), task.examples("dev"), config,
                                    work_dir / ("one" if shared else "two"), top_k=k, sentences=task.sentences())
        except TrainingDiverged as error:  # a variant that diverges is not chosen; the other may still train
            diverged[shared] = str(error).split(";")[0]
            continue
        fitted[shared] = (hits(model, task.data, number, "dev")[0], model)
    if not fitted:
        raise TrainingDiverged(f"Supervised embeddings task {number}: both variants diverged ({diverged[True]}; "
                               f"{diverged[False]})")
    shared = max(fitted, key=lambda s: fitted[s][0])
    model = fitted[shared][1]
    scores = ", ".join(f"{fitted[s][0]} {name}" if s in fitted else f"{name} {diverged[s]}"
                       for s, name in ((True, "one"), (False, "two")))
    return Fitted(model, f"Supervised embeddings task {number}: {'one dictionary' if shared else 'two dictionaries'} "
                         f"(dev hits@{k}: {scores})", model.summary)


@register("movie_memn2n", PAPER, "MemN2N")
def memn2n(task: MovieTask, work_dir: Path, settings: Settings) -> Fitted:
    """One task on its own, with long-term KB memory (hash lookup) and the dialog history as memories."""
    number = _learned_task(task)
    if task.data.corpus.kb is None:
        raise NotApplicable("MemN2N's long-term memory is the KB")
    # appendix B: 1 hop, 2-3 for task 3
    if task.streamed:
        return _streamed(task, replace(StreamedConfig(), hops=2 if number == 3 else 1,
                                       dictionaries=MEMN2N_CONFIG.dictionaries), work_dir, settings,
                         f"MemN2N task {number}")
    config = replace(MEMN2N_CONFIG, hops=2 if number == 3 else 1, epochs=settings.epochs or MEMN2N_CONFIG.epochs)
    model = MovieRanker.fit(task.data.entities, task.examples("train"), task.examples("dev"), config, work_dir,
                            top_k=PAPER_K[number], triples=task.data.triples, sentences=task.sentences())
    return Fitted(model, f"MemN2N task {number}: {config.hops} hop(s), best epoch {model.summary['best_epoch']}/"
                         f"{config.epochs}, memory {model.summary['memory_size']}", model.summary)


def _joint(default: TrainConfig, streamed: StreamedConfig, name: str) -> Callable[[MovieTask, Path, Settings], Fitted]:
    """One model trained on every task of ``task`` together (the joint task), to be scored per task."""

    def fit(task: MovieTask, work_dir: Path, settings: Settings) -> Fitted:
        data = task.data
        if not task.tasks or not set(task.tasks) <= set(learned_tasks(data.corpus)):
            raise NotApplicable("the joint models train on tasks with train, dev and test files")
        if default.model == "memn2n" and data.corpus.kb is None:
            raise NotApplicable("MemN2N's long-term memory is the KB")
        if task.streamed:
            return _streamed(task, streamed, work_dir, settings,
                             f"{name}: one model on tasks {', '.join(map(str, task.tasks))}")
        config = replace(default, epochs=settings.epochs or default.epochs)
        model = MovieRanker.fit(data.entities, task.examples("train"), task.examples("dev"), config, work_dir,
                                top_k=max(PAPER_K[t] for t in task.tasks), triples=data.triples,
                                sentences=task.sentences())
        return Fitted(model, f"{name}: one model on tasks {', '.join(map(str, task.tasks))}, best epoch "
                             f"{model.summary['best_epoch']}/{config.epochs}", model.summary)

    return fit


register("movie_joint_embeddings", PAPER, "Joint supervised embeddings")(
    _joint(JOINT_EMBEDDINGS_CONFIG, STREAMED_JOINT_EMBEDDINGS, "Joint supervised embeddings (two dictionaries)"))
register("movie_joint_memn2n", PAPER, "Joint MemN2N")(
    _joint(JOINT_MEMN2N_CONFIG, STREAMED_JOINT_MEMN2N,
           "Joint MemN2N (2 hops; input, memory and output dictionaries, appendix A)"))

# The methods that train once on every learned task rather than on each task alone.
JOINT = ("movie_joint_embeddings", "movie_joint_memn2n")
