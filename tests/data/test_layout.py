"""File names of the public layout, and the one reader of task lists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from data.layout import dialog_file_name, discover_names, parse_tasks


@given(st.lists(st.integers(min_value=0, max_value=99)))
def test_a_task_list_reads_back_sorted_and_once(tasks: list[int]) -> None:
    assert parse_tasks(", ".join(map(str, tasks))) == tuple(sorted(set(tasks)))


@pytest.mark.parametrize("text", ["1,a", "1;2", "-1", "1.5"])
def test_anything_but_task_numbers_is_named(text: str) -> None:
    with pytest.raises(ValueError, match=f"expected task numbers separated by commas, got {text!r}"):
        parse_tasks(text)


def test_the_names_written_are_the_names_discovered() -> None:
    names = [dialog_file_name(task, split) for task in (1, 5) for split in ("trn", "dev", "tst", "tst-OOV")]
    found = discover_names([*names, "dialog-babi-candidates.txt"])
    assert sorted(found) == [1, 5] and set(found[5].splits) == {"trn", "dev", "tst", "tst-OOV"}
