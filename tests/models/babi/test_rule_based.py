"""The rule-based system follows the simulator's policy from the text alone: 100% on generated tasks 1-5."""

from __future__ import annotations

from dataclasses import replace

import pytest

from data.babi.generation import GenerationPlan, generate
from data.layout import discover
from models.babi.rule_based import RuleBasedSystem
from models.examples import TaskData, split_examples
from models.metrics import accuracy_report


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("corpus")
    generate(GenerationPlan(seed=11, dialogs_per_split=40), out, runner="local")
    return discover(out)


@pytest.mark.parametrize("task", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("split", ["tst", "tst-OOV"])
def test_rule_based_scores_100(corpus, task: int, split: str) -> None:
    system = RuleBasedSystem.fit(TaskData.load(corpus[task]))
    examples = split_examples(corpus[task], split)
    result = accuracy_report(examples, [system.predict(e) for e in examples])
    assert result["per_response_accuracy"] == result["per_dialog_accuracy"] == 100.0


def test_unseen_answers_to_an_option_fall_back_to_keywords(corpus) -> None:
    system = RuleBasedSystem.fit(TaskData.load(corpus[3]))
    assert system._accepts("let's do it") and not system._accepts("no this does not work for me")  # learned
    assert system._accepts("sounds wonderful") and not system._accepts("i want another one")  # never seen


def test_replies_after_the_last_api_call_are_learned_as_the_public_task_2_has_them(corpus, tmp_path) -> None:
    """The public task 2 goes on after its last API call ("thank you" -> "you're welcome"); ours stops there. The
    rules learn the reply from training, and give it to thanks worded as training never did."""
    files = corpus[2]

    def thanked(source, said: tuple[str, ...]):
        dialogs = source.read_text().strip().split("\n\n")
        ended = []
        for i, dialog in enumerate(dialogs):
            last = int(dialog.splitlines()[-1].split(" ", 1)[0])
            ended.append(f"{dialog}\n{last + 1} {said[i % len(said)]}\tyou're welcome")
        target = tmp_path / source.name
        target.write_text("\n\n".join(ended) + "\n\n")
        return target

    splits = {"trn": thanked(files.splits["trn"], ("thank you", "you rock")),
              "tst": thanked(files.splits["tst"], ("thank you", "many thanks indeed"))}
    task = TaskData.load(replace(files, splits=splits), splits=["trn", "tst"])
    system = RuleBasedSystem.fit(task)
    examples = task.split("tst")
    result = accuracy_report(examples, [system.predict(e) for e in examples])
    assert result["per_response_accuracy"] == result["per_dialog_accuracy"] == 100.0


def test_every_option_turned_down_or_no_result_is_an_answer_not_an_error() -> None:
    from data.babi.patterns import BOT_LOOKING, BOT_OPTION
    from models.babi.rule_based import _History

    results = {"resto_a": {"R_rating": "3"}, "resto_b": {"R_rating": "7"}}
    assert RuleBasedSystem._next_option(_History(results=results, proposed=["resto_b"])) == \
        BOT_OPTION.format(restaurant="resto_a")
    # a user who turned both down (or one restaurant listed twice) hears the best again
    assert RuleBasedSystem._next_option(_History(results=results, proposed=["resto_b", "resto_a"])) == \
        BOT_OPTION.format(restaurant="resto_b")
    assert RuleBasedSystem._next_option(_History()) == BOT_LOOKING
