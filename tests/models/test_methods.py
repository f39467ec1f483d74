"""The one method protocol and registry: names are unique, unknown names get the choices, a fitted method ranks as
its ranker, and ``Among`` restricts a full ranking to a split's own candidates."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from models import methods
from models.methods import Among, Fitted, Settings, best_answers, first_k, register


class Fixed:
    """Ranks every example the same way over a fixed candidate list."""

    candidates = ("a", "b", "c", "d")

    def order(self, examples: Sequence) -> list[list[int]]:
        return [[3, 1, 0, 2] for _ in examples]

    def rank(self, examples: Sequence, k: int = 10) -> list[list[str]]:
        return first_k(self.candidates, self.order(examples), k)


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> dict:
    registry: dict = {}
    monkeypatch.setattr(methods, "REGISTRY", registry)
    monkeypatch.setattr(methods, "load", lambda paper=None: registry)
    return registry


def test_a_registered_method_is_found_by_name_and_fits(scratch_registry: dict) -> None:
    @register("fixed", "toy", "A fixed ranking")
    def fit(task: object, work_dir: Path, settings: Settings) -> Fitted:
        return Fitted(Fixed(), f"chosen on {settings.chosen_on}", {"epochs": settings.epochs})

    method = methods.get("fixed", "toy")
    fitted = method.fit(None, Path("unused"), Settings(epochs=3))
    assert (method.title, methods.names("toy"), fitted.note, fitted.summary) == (
        "A fixed ranking", ["fixed"], "chosen on dev", {"epochs": 3})
    assert fitted.rank(["x"], 2) == [["d", "b"]] and best_answers(fitted, ["x", "y"]) == ["d", "d"]


def test_names_are_unique_and_unknown_names_list_the_choices(scratch_registry: dict) -> None:
    register("fixed", "toy", "A")(lambda task, work_dir, settings: Fixed())
    with pytest.raises(ValueError, match="registered twice"):
        register("fixed", "other", "B")(lambda task, work_dir, settings: Fixed())
    with pytest.raises(ValueError, match=r"unknown method 'nope'; choose from \['fixed'\]"):
        methods.get("nope", "toy")
    with pytest.raises(ValueError, match="unknown method 'fixed'"):
        methods.get("fixed", "other")  # a name of another paper


def test_among_keeps_only_the_allowed_candidates_in_the_rankers_order() -> None:
    assert Among(Fixed()).rank(["x"], 2) == [["d", "b"]]
    assert Among(Fixed(), among={"a", "c"}).rank(["x"], 2) == [["a", "c"]]
    assert Among(Fixed(), among={"a"}).rank(["x", "y"], 5) == [["a"], ["a"]]


def test_every_paper_registers_its_methods() -> None:
    from models import papers

    for paper in papers.papers():
        assert methods.names(paper), f"{paper} registers no method"
