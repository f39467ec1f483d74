"""Each component's window and seconds in a run, from the stamps the metadata store keeps."""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.summary import component_seconds, component_windows


class _Store:
    """The two calls of an ML Metadata store that the windows read: node contexts and their executions (ms)."""

    def __init__(self, executions: dict[str, list[tuple[int, int, int]]]) -> None:
        self.executions = executions

    def get_contexts_by_type(self, type_name: str) -> list[SimpleNamespace]:
        assert type_name == "node"
        return [SimpleNamespace(id=name, name=f"dialog.{name}") for name in self.executions]

    def get_executions_by_context(self, context_id: str) -> list[SimpleNamespace]:
        return [SimpleNamespace(id=i, create_time_since_epoch=c, last_update_time_since_epoch=u)
                for i, c, u in self.executions[context_id]]


def test_a_window_runs_from_the_previous_components_stamp_to_its_own_newest_execution() -> None:
    store = _Store({"Trainer": [(3, 11_000, 15_000)],  # in run order by the stamps, not by name
                    "ExampleGen": [(1, 1_000, 4_000), (2, 9_000, 10_500)],  # a rerun: the newest one counts
                    "Evaluator": [(4, 15_000, 15_000)]})  # cached: ~0 s
    assert component_windows(store) == [("ExampleGen", 9.0, 10.5), ("Trainer", 10.5, 15.0),
                                        ("Evaluator", 15.0, 15.0)]
    assert component_seconds(store) == {"ExampleGen": 1.5, "Trainer": 4.5, "Evaluator": 0.0}
