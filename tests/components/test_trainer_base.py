"""What a Trainer leaves behind it in the process the local runner runs every component in."""

from __future__ import annotations

import ctypes.util

import psutil
import pytest

from components.trainer_base import release_freed_memory

GLIBC = ctypes.util.find_library("c") is not None and hasattr(ctypes.CDLL(ctypes.util.find_library("c")),
                                                              "malloc_trim")


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_memory_freed_between_blocks_still_in_use_goes_back_to_the_system() -> None:
    process = psutil.Process()
    blocks = [bytes(2000) for _ in range(150_000)]  # 300 MB in blocks malloc serves (past Python's small objects)
    kept = blocks[::50]  # every fiftieth stays: the heap cannot shrink from its top alone
    del blocks
    held = process.memory_info().rss
    release_freed_memory()
    assert held - process.memory_info().rss > 100e6, len(kept)


@pytest.mark.parametrize("fails", [False, True])
def test_a_trainer_gives_back_what_its_fit_freed_whether_it_ends_well_or_not(fails: bool, tmp_path,
                                                                            monkeypatch) -> None:
    from tfx.components.trainer.fn_args_utils import FnArgs

    from components import trainer_base

    calls = []
    monkeypatch.setattr(trainer_base, "release_freed_memory", lambda: calls.append("released"))

    def fit(*_: object) -> dict:
        calls.append("fit")
        if fails:
            raise RuntimeError("the fit failed")
        return {"best_epoch": 1}

    args = FnArgs(custom_config={trainer_base.EXAMPLES_URI_KEY: str(tmp_path / "examples")},
                  serving_model_dir=str(tmp_path / "model"), model_run_dir=str(tmp_path / "run"))
    if fails:
        with pytest.raises(RuntimeError, match="the fit failed"):
            trainer_base.run_on_workers(args, "Trainer", fit)
    else:
        assert trainer_base.run_on_workers(args, "Trainer", fit) == {"best_epoch": 1}
    assert calls == ["fit", "released"]
