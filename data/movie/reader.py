"""The public Movie Dialog layout (Dodge et al., 2016): tasks, knowledge base, entity list, candidates.

A corpus directory (``movie_dialog_dataset/``) holds:

* ``task1_qa/task1_qa_{train,dev,test}.txt`` (also ``task1_qa_pipe_*``, answers separated by ``|``),
  ``task2_recs/task2_recs_*.txt``, ``task3_qarecs/task3_qarecs_*.txt`` and ``task4_reddit/task4_reddit_*.txt``
  (the release nests it once more, ``task4_reddit/task4_reddit/``), with ``task4_reddit_cand-{valid,test}.txt``;
* ``entities.txt``, one KB entity per line (the candidates of tasks 1-3);
* ``movie_kb.txt``, the knowledge base: ``ID movie relation value, value, ...`` lines without a TAB.

Dialog lines are ``ID text<TAB>answers`` as in bAbI: IDs start at 1 in a dialog and go up by one, one exchange per
ID (several in tasks 3-4), and a reset to 1 starts a new dialog. Answers are comma-separated; since titles may hold
a comma ("Good Morning, Miss Dove"), pieces are joined back when together they make a known entity.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from data.atomic import FileSystem
from data.babi_format import FormatError, read_text

TASK_DIRECTORIES = {1: "task1_qa", 2: "task2_recs", 3: "task3_qarecs", 4: "task4_reddit"}
SPLITS = ("train", "dev", "test")
CANDIDATE_SPLITS = {"dev": "valid", "test": "test"}  # task 4's candidate files
RELATIONS = ("directed_by", "written_by", "starred_actors", "release_year", "has_genre", "has_tags",
             "has_imdb_rating", "has_imdb_votes", "in_language", "has_plot")
_LINE = re.compile(r"(\d+) (.*)")


@dataclass(frozen=True)
class Exchange:
    id: int
    text: str
    answers: tuple[str, ...]


@dataclass
class MovieDialog:
    exchanges: list[Exchange] = field(default_factory=list)


@dataclass(frozen=True)
class Triple:
    subject: str
    relation: str
    value: str


@dataclass
class MovieCorpus:
    """Paths of a corpus in the public layout; ``tasks[task][split]`` is a dialog file. ``fs``: the file system they
    are read through (None: the local disk, and the paths are ``Path``s; else strings, ``gs://...``)."""

    root: Path | str
    tasks: dict[int, dict[str, Path | str]]
    entities: Path | str | None
    kb: Path | str | None
    candidates: dict[str, Path | str]  # task 4: split -> candidate file
    fs: FileSystem | None = None

    def entity_list(self) -> list[str]:
        return read_entities(self.entities, self.fs) if self.entities else []


class _Files:
    """Paths under a corpus root and whether a file is there: ``Path``s on the local disk, strings joined with
    ``/`` through ``fs`` otherwise."""

    def __init__(self, root: str | Path, fs: FileSystem | None) -> None:
        self.fs = fs
        self.root: Path | str = Path(root) if fs is None else str(root).rstrip("/")

    def at(self, *parts: str) -> Path | str:
        return self.root.joinpath(*parts) if isinstance(self.root, Path) else posixpath.join(self.root, *parts)

    def is_file(self, path: Path | str) -> bool:
        """Whether the corpus has an entry of that name: on the local disk any entry, a directory, a named pipe or a
        dangling link included, so that reading it names what it is rather than the file being taken as absent."""
        if self.fs is None:
            return os.path.lexists(path)
        return self.fs.exists(str(path)) and not self.fs.isdir(str(path))


def _task_file(files: _Files, task: int, split: str, pipe: bool) -> Path | str | None:
    name = TASK_DIRECTORIES[task]
    stem = f"{name}_pipe_" if pipe else f"{name}_"
    for directory in ((name,), (name, name), ()):
        path = files.at(*directory, f"{stem}{split}.txt")
        if files.is_file(path):
            return path
    return None


def discover_movie_corpus(root: str | Path, fs: FileSystem | None = None) -> MovieCorpus:
    """The files of a Movie Dialog corpus directory (on the local disk, or through ``fs``); the ``_pipe_`` task-1
    files are preferred (no comma ambiguity). Raises ValueError naming the directory when it holds no task file."""
    files = _Files(root, fs)
    tasks: dict[int, dict[str, Path | str]] = {}
    candidates: dict[str, Path | str] = {}
    for task in TASK_DIRECTORIES:
        for split in SPLITS:
            path = _task_file(files, task, split, pipe=True) or _task_file(files, task, split, pipe=False)
            if path is not None:
                tasks.setdefault(task, {})[split] = path
    for split, suffix in CANDIDATE_SPLITS.items():
        for directory in (("task4_reddit",), ("task4_reddit", "task4_reddit"), ()):
            path = files.at(*directory, f"task4_reddit_cand-{suffix}.txt")
            if files.is_file(path):
                candidates[split] = path
                break
    if not tasks:
        raise ValueError(f"{root}: no Movie Dialog task file (e.g. task1_qa/task1_qa_train.txt)")
    kb = next((p for p in (files.at("movie_kb.txt"), files.at("knowledge_base", "kb.txt")) if files.is_file(p)), None)
    entities = files.at("entities.txt")
    return MovieCorpus(files.root, tasks, entities if files.is_file(entities) else None, kb, candidates, fs)


def read_entities(path: str | Path, fs: FileSystem | None = None) -> list[str]:
    return [line.strip() for line in read_text(path, fs).splitlines() if line.strip()]


def pieces_per_entity(known: Iterable[str], separator: str = ", ") -> int:
    """The most pieces a known entity falls into when split on ``separator`` (1 when none holds it)."""
    return 1 + max((entity.count(separator) for entity in known), default=0)


def split_answers(text: str, known: set[str], separator: str = ", ", longest: int | None = None) -> tuple[str, ...]:
    """Answers of a comma-separated list; adjacent pieces are joined back when they form a known entity.

    ``longest``: the most pieces an entity spans (``pieces_per_entity``; computed when not given), which keeps
    a long answer list linear."""
    if separator == "|":
        return tuple(piece.strip() for piece in text.split("|") if piece.strip())
    pieces = text.split(separator)
    longest = pieces_per_entity(known, separator) if longest is None else longest
    answers: list[str] = []
    i = 0
    while i < len(pieces):
        for j in range(min(len(pieces), i + longest), i, -1):  # longest known join first
            joined = separator.join(pieces[i:j])
            if j == i + 1 or joined in known:
                answers.append(joined.strip())
                i = j
                break
    return tuple(a for a in answers if a)


def read_dialogs(path: str | Path, entities: Iterable[str] = ()) -> list[MovieDialog]:
    """Dialogs of a task file; a malformed line is a FormatError naming file and line."""
    return list(iter_dialogs(read_text(path).splitlines(), path, entities))


def iter_dialogs(lines: Iterable[str], path: str | Path, entities: Iterable[str] = ()) -> Iterator[MovieDialog]:
    """Dialogs of a task file's lines (``path`` names it in errors and says whether answers are ``|``-separated),
    one at a time: a paper-scale training file is read as a stream, never held whole."""
    known = set(entities)
    separator = "|" if "_pipe_" in posixpath.basename(str(path)) else ", "
    longest = pieces_per_entity(known, separator)
    dialog: MovieDialog | None = None
    for number, raw in enumerate(lines, start=1):
        raw = raw.rstrip("\r\n")
        if not raw.strip():
            continue
        match = _LINE.fullmatch(raw)
        if match is None:
            raise FormatError(path, number, f"expected 'ID text<TAB>answers': {raw[:80]!r}")
        line_id, rest = int(match.group(1)), match.group(2)
        text, tab, answers = rest.partition("\t")
        if not tab:
            raise FormatError(path, number, "no TAB between the text and its answers")
        if line_id == 1:
            if dialog is not None:
                yield dialog
            dialog = MovieDialog()
        elif dialog is None or line_id != dialog.exchanges[-1].id + 1:
            expected = dialog.exchanges[-1].id + 1 if dialog is not None else 1
            raise FormatError(path, number, f"ID {line_id} where {expected} was expected")
        dialog.exchanges.append(Exchange(line_id, text, split_answers(answers, known, separator, longest)))
    if dialog is not None:
        yield dialog


def read_kb(path: str | Path, entities: Iterable[str] = (), fs: FileSystem | None = None) -> list[Triple]:
    """Triples of ``movie_kb.txt``: ``ID movie relation value, value`` (one line per movie and relation)."""
    known = set(entities)
    longest = pieces_per_entity(known)
    pattern = re.compile(r"(\d+) (.+?) (" + "|".join(RELATIONS) + r") (.+)")
    triples = []
    for number, raw in enumerate(read_text(path, fs).splitlines(), start=1):
        if not raw.strip():
            continue
        match = pattern.fullmatch(raw)
        if match is None:
            raise FormatError(path, number, f"expected 'ID movie relation values' with a known relation: {raw[:80]!r}")
        subject, relation = match.group(2), match.group(3)
        values = split_answers(match.group(4), known, ", ", longest) if relation != "has_plot" else (match.group(4),)
        triples.extend(Triple(subject, relation, value) for value in values)
    return triples


def read_candidates(path: str | Path, fs: FileSystem | None = None) -> list[str]:
    """Task 4 candidates: one per line, with or without a leading ``1 ``."""
    return [re.sub(r"^\d+ ", "", line) for line in read_text(path, fs).splitlines() if line.strip()]


def text_words(text: str) -> list[str]:
    """Words and punctuation marks (an entity is matched on the same split, "miss dove , the" style)."""
    return re.findall(r"[\w'.-]+|[^\w\s]", text)


class EntityDictionary:
    """Appendix A's dictionary: KB entities are single tokens, other words unigrams kept when frequent enough;
    text is lower-cased and parsed left to right, taking the longest entity n-gram at each step."""

    def __init__(self, entities: Iterable[str], texts: Iterable[str] = (), min_count: int = 5) -> None:
        self.entities = {" ".join(text_words(e.lower())) for e in entities if e.strip()}
        self.max_words = max((len(e.split()) for e in self.entities), default=1)
        counts: dict[str, int] = {}
        for text in texts:
            for token in self._parse(text.lower()):
                if token not in self.entities:
                    counts[token] = counts.get(token, 0) + 1
        self.words = {w for w, n in counts.items() if n >= min_count}

    def _parse(self, text: str) -> list[str]:
        words = text_words(text)
        tokens: list[str] = []
        i = 0
        while i < len(words):
            for n in range(min(self.max_words, len(words) - i), 0, -1):
                gram = " ".join(words[i:i + n])
                if n == 1 or gram in self.entities:
                    tokens.append(gram)
                    i += n
                    break
        return tokens

    def tokenize(self, text: str) -> list[str]:
        """Entities and known words of ``text``; rare words are dropped (not entities)."""
        return [t for t in self._parse(text.lower()) if t in self.entities or t in self.words]

    def __len__(self) -> int:
        return len(self.entities) + len(self.words)


def answers_of(dialogs: Sequence[MovieDialog]) -> list[tuple[str, ...]]:
    return [exchange.answers for dialog in dialogs for exchange in dialog.exchanges]
