"""Training rows asked for another type (trainer/benchmarks/nvv/asked_other.py)."""

from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from trainer.benchmarks.nvv.asked_other import ASKED_OTHER_SEP, asked_other_rows
from trainer.benchmarks.nvv.settings import NvvVerifySettings

TYPES = [t.id for t in load_taxonomy().types]


def _row(i, split, target, position, spurious=(), spurious_pos=()):
    return {"id": f"en_{target}_{i:03d}", "split": split, "target_type": target, "position": position,
            "spurious_types": list(spurious), "spurious_positions": list(spurious_pos), "case": "correct"}


ROWS = [_row(0, "train", "cough", 3), _row(1, "train", "laugh", None),  # absent: nothing to re-ask
        _row(2, "train", "sigh", 1, ["cough"], [5]), _row(3, "val", "gasp", 2), _row(4, "test", "hum", 0)]


def test_copies_are_wrong_type_items_of_training_clips_only():
    out = asked_other_rows(ROWS, TYPES, copies=1, seed=0)
    assert [r["id"].split(ASKED_OTHER_SEP)[0] for r in out] == ["en_cough_000", "en_sigh_002"]
    for r, src in zip(out, (ROWS[0], ROWS[2])):
        assert r["split"] == "train" and r["case"] == "wrong_type" and r["position"] is None
        assert r["target_type"] not in (src["target_type"], *src["spurious_types"])
        assert r["id"].endswith(ASKED_OTHER_SEP + r["target_type"])
        # the rendered target is now a non-target event at its boundary, after the clip's own events
        assert r["spurious_types"] == [*src["spurious_types"], src["target_type"]]
        assert r["spurious_positions"] == [*src["spurious_positions"], src["position"]]
    assert ROWS[0]["position"] == 3 and ROWS[0]["target_type"] == "cough"  # sources untouched


def test_several_copies_ask_distinct_types_and_are_seeded():
    out = asked_other_rows(ROWS, TYPES, copies=5, seed=3)
    asked = [r["target_type"] for r in out if r["id"].startswith("en_cough_000")]
    assert len(asked) == 5 == len(set(asked)) and "cough" not in asked
    assert out == asked_other_rows(ROWS, TYPES, copies=5, seed=3)
    assert out != asked_other_rows(ROWS, TYPES, copies=5, seed=4)
    assert asked_other_rows(ROWS, TYPES, copies=0) == []


def test_setting_is_checked():
    assert NvvVerifySettings().asked_other_copies == 0
    try:
        NvvVerifySettings(asked_other_copies=45)
    except Exception as e:  # a FieldError naming the key
        assert "asked_other_copies" in str(e)
    else:
        raise AssertionError("45 copies (more than the other types) must be refused")


def test_task_adds_the_copies_to_the_training_rows(monkeypatch):
    import trainer.benchmarks.nvv.task as task_module

    monkeypatch.setattr(task_module, "load_nvv_rows", lambda corpus: [dict(r) for r in ROWS])
    task = task_module.NvvVerifyTask()
    rows, summary = task.load_rows("unused", NvvVerifySettings(asked_other_copies=2))
    assert len(rows) == len(ROWS) + 4 and summary["train"]["asked_other_copies"] == 4
    assert summary["val"]["items"] == 1 and summary["test"]["items"] == 1  # held-out splits untouched
    rows, summary = task.load_rows("unused", NvvVerifySettings())
    assert len(rows) == len(ROWS) and summary["train"]["asked_other_copies"] == 0
