"""Auto-ATT training splits from an explicit held-out voice list or a clip's own ``split`` field (real
ATT voices keep their names), and ``validate att`` with a preset (the zero-shot column)."""

import json

import pytest
import soundfile as sf
from conftest import speechlike

from trainer.benchmarks.att.protocol import PAPER_TEST_VOICES, ProtocolError, labelled_rows, split_of

VOICES = {"CosyVoice": ["longshuo", "longxiaochun"], "Seed-TTS": ["Alvin", "Moon"]}
DIMS = ["code_switching", "classical_poetry_prose"]


def _corpus(root, split_field: dict | None = None):
    """Two families x two voices x two dimensions, one clip each, plus traps; every clip judged by
    one valid batch (voice ``k`` of a family Human when k = 1)."""
    (root / "audio").mkdir(parents=True)
    clips, labels = [], {}
    for fam, voices in VOICES.items():
        for k, v in enumerate(voices):
            for d in DIMS:
                cid = f"{v}-{d}"
                row = {"id": cid, "audio": f"audio/{cid}.wav", "kind": "eval", "family": fam, "voice": v,
                       "dimension": d}
                if split_field and v in split_field:
                    row["split"] = split_field[v]
                clips.append(row)
                labels[cid] = "Human" if k else "Machine"
    for cid, kind in (("f", "flawed_trap"), ("h", "human_trap")):
        clips.append({"id": cid, "audio": f"audio/{cid}.wav", "kind": kind})
        labels[cid] = "Machine" if kind == "flawed_trap" else "Human"
    for i, c in enumerate(clips):
        sf.write(root / c["audio"], speechlike(0.5, seed=i), 16000)
    (root / "clips.jsonl").write_text("".join(json.dumps(c) + "\n" for c in clips))
    (root / "judgements.jsonl").write_text("".join(
        json.dumps({"listener": "L", "batch": "B", "clip_id": c, "label": lab}) + "\n" for c, lab in labels.items()))
    return root


def test_split_by_voice_list(tmp_path):
    rows, _ = labelled_rows(_corpus(tmp_path / "c"), held_out_voice=["longxiaochun", "Moon"])
    split = {r["id"]: r["split"] for r in rows}
    assert split["Moon-code_switching"] == split["Moon-classical_poetry_prose"] == "test"
    assert split["Alvin-code_switching"] == "train" and split["Alvin-classical_poetry_prose"] == "unused"  # OOD
    assert split["f"] == split["h"] == "trap"
    assert {r["target"] for r in rows if r["voice"] == "Moon"} == {1.0}
    assert "Moon" in PAPER_TEST_VOICES and "longxiaochun" in PAPER_TEST_VOICES
    with pytest.raises(ProtocolError, match="Mooon"):
        labelled_rows(tmp_path / "c", held_out_voice=["Mooon"])


def test_split_field_decides_first(tmp_path):
    rows, _ = labelled_rows(_corpus(tmp_path / "c", {"Alvin": "test", "longshuo": "unused"}),
                            held_out_voice=["Moon"])
    split = {r["id"]: r["split"] for r in rows}
    assert split["Alvin-code_switching"] == "test" and split["longshuo-code_switching"] == "unused"
    assert split["Moon-code_switching"] == "test" and split["longxiaochun-code_switching"] == "train"
    with pytest.raises(ProtocolError, match="split 'dev'"):
        split_of({"id": "x", "kind": "eval", "voice": "v", "dimension": "d", "split": "dev"})
    # the synthetic corpus's voice index still works
    assert split_of({"id": "x", "kind": "eval", "voice": "famA_v3", "dimension": "code_switching"}, 3) == "test"


def test_validate_att_accepts_a_preset(tmp_path, monkeypatch):
    from evaluators.judges.verbalizer import VerbalizerJudge
    from trainer.benchmarks.att import validation

    real = VerbalizerJudge.from_preset.__func__
    used = []

    def offline(cls, preset, backbone=None, base=None, **kw):  # the tiny random backbone: no download
        used.append(preset)
        return real(cls, preset, backbone=backbone, base="tiny", **kw)

    monkeypatch.setattr(VerbalizerJudge, "from_preset", classmethod(offline))
    report = validation.validate_folder("auto-att", _corpus(tmp_path / "c"), ["longxiaochun", "Moon"],
                                        out=tmp_path / "v.json")
    assert used == ["auto-att"] and report["n_test_clips"] == 4 and report["test_voices"] == ["Moon", "longxiaochun"]
    assert json.loads((tmp_path / "v.json").read_text())["n_trap_clips"] == 2


def test_held_out_voices_by_name_in_the_config_and_the_validate_command(tmp_path):
    from evaluators.config_input import FieldError
    from trainer.benchmarks import TASKS
    from trainer.benchmarks.att.settings import AttHlsSettings

    task = TASKS["att"]
    rows, _ = task.load_rows(_corpus(tmp_path / "c"), AttHlsSettings(held_out_voices=["longxiaochun", "Moon"]))
    assert {r["voice"] for r in rows if r["split"] == "test"} == {"longxiaochun", "Moon"}
    for bad in ([], ["ok", ""], "Moon"):
        with pytest.raises(FieldError, match="held_out_voices"):
            AttHlsSettings(held_out_voices=bad)
    import argparse

    from evaluators.option_types import add_options

    parser = argparse.ArgumentParser()
    add_options(parser, task.commands.validate_options)
    assert parser.parse_args(["--held-out-voices", "Moon, longxiaochun"]).held_out_voices == ["Moon", "longxiaochun"]
