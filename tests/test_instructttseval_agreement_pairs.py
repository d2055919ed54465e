"""The Table 4 agreement pairs drawn from the benchmark's items and reference audio: balanced per
language and task, seeded, mismatches from another item of the same task, read back by validation."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
import soundfile as sf

from evaluators.benchmarks.instructttseval.agreement_pairs import draw_agreement_pairs, write_agreement_pairs
from evaluators.benchmarks.instructttseval.items import load_items


def make_benchmark(tmp_path, n_en=8, n_zh=5):
    rows = []
    audio = tmp_path / "reference"
    audio.mkdir()
    for lang, n in (("en", n_en), ("zh", n_zh)):
        for k in range(n):
            iid = f"{lang}_{k}"
            row = {"id": iid, "text": f"text {iid}",
                   **{t: {"instruction": f"{t} instruction of {iid}", "gen_path": f"gen_wav/{iid}_{t}.wav"}
                      for t in ("APS", "DSD", "RP")}}
            if (lang, k) == ("en", 1):
                row["RP"]["instruction"] = ""  # no RP pair for en_1
            if (lang, k) == ("en", 2):
                row["reference_audio"] = "clips/en_two.flac"  # named by a field
                (audio / "clips").mkdir()
                sf.write(audio / "clips" / "en_two.flac", np.zeros(1600, np.float32), 16000)
            elif (lang, k) != ("en", 7):  # en_7 has no reference audio
                sf.write(audio / f"{iid}.wav", np.zeros(1600, np.float32), 16000)
            rows.append(row)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return items, audio


def test_pairs_are_balanced_seeded_and_mismatched_within_the_task(tmp_path):
    items_path, audio = make_benchmark(tmp_path)
    items = load_items(items_path)
    pairs, summary = draw_agreement_pairs(items, audio, per_class=3, seed=7)
    assert summary["no_reference_audio"] == ["en_7"]
    # en: 7 items with audio (6 for RP: en_1 has no RP instruction); zh: 5 -> short, split 3 + 2
    assert summary["en/APS"] == {"eligible": 7, "matched": 3, "mismatched": 3, "short": False}
    assert summary["en/RP"]["eligible"] == 6
    assert summary["zh/DSD"] == {"eligible": 5, "matched": 3, "mismatched": 2, "short": True}
    cells = Counter((p["lang"], p["task"], p["kind"]) for p in pairs)
    assert cells[("en", "DSD", "matched")] == cells[("en", "DSD", "mismatched")] == 3
    for p in pairs:
        assert p["label"] is (p["kind"] == "matched") and p["votes"] == []
        assert p["instruction"] == f"{p['task']} instruction of {p['instruction_from']}"
        assert (p["instruction_from"] == p["item_id"]) is (p["kind"] == "matched")
        assert p["instruction_from"].startswith(p["lang"])
        assert p["item_id"] != "en_7" and not (p["item_id"] == "en_1" and p["task"] == "RP")
    # 50 distinct reference audios per cell in the paper: no audio is both matched and mismatched
    per_cell = Counter((p["lang"], p["task"], p["item_id"]) for p in pairs)
    assert max(per_cell.values()) == 1
    # a short cell uses every eligible item: en_2's audio is the one its row names
    everything, _ = draw_agreement_pairs(items, audio, per_class=10, seed=7)
    en2 = [p for p in everything if p["item_id"] == "en_2"]
    assert len(en2) == 3 and all(p["audio"].endswith("clips/en_two.flac") for p in en2)
    again, _ = draw_agreement_pairs(items, audio, per_class=3, seed=7)
    assert again == pairs
    other, _ = draw_agreement_pairs(items, audio, per_class=3, seed=8)
    assert other != pairs
    # a cell's draw does not depend on the other language's items
    en_only = [it for it in items if it.lang == "en"]
    assert [p for p in pairs if p["lang"] == "en"] == draw_agreement_pairs(en_only, audio, per_class=3, seed=7)[0]


def test_written_pairs_are_what_validation_reads(tmp_path):
    from trainer.benchmarks.instructttseval.validation import pairs_from_file

    items_path, audio = make_benchmark(tmp_path)
    out = tmp_path / "annotate" / "pairs.jsonl"
    summary = write_agreement_pairs(items_path, audio, out, per_class=2, seed=0)
    assert summary["n_pairs"] == 2 * 3 * 4 and out.is_file()
    read = pairs_from_file(out)
    assert len(read) == summary["n_pairs"]
    assert all((tmp_path / "annotate" / json.loads(line)["audio"]).resolve().is_file()
               for line in out.read_text().splitlines())
    assert [r["label"] for r in read] == [r["kind"] == "matched" for r in read]
    with pytest.raises(FileExistsError, match="exists"):
        write_agreement_pairs(items_path, audio, out)
    # annotators' votes replace the construction's label
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[0]["votes"] = [False, False, True]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert rows[0]["label"] is True and pairs_from_file(out)[0]["label"] is False


def test_no_reference_audio_is_a_clear_error(tmp_path):
    items_path, _ = make_benchmark(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no item has both"):
        draw_agreement_pairs(load_items(items_path), tmp_path / "empty")
    with pytest.raises(ValueError, match="at least 1"):
        draw_agreement_pairs(load_items(items_path), tmp_path / "empty", per_class=0)


def test_synth_command_draws_the_pairs(tmp_path, capsys):
    from evaluators.cli import main

    items_path, audio = make_benchmark(tmp_path)
    assert main(["synth", "instructttseval", "--out", str(tmp_path / "ann"), "--from-items", str(items_path),
                 "--reference-audio", str(audio), "--pairs-per-class", "2", "--seed", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_pairs"] == 24 and (tmp_path / "ann" / "agreement_pairs.jsonl").is_file()
    assert main(["synth", "instructttseval", "--out", str(tmp_path / "ann"), "--from-items", str(items_path),
                 "--reference-audio", str(audio)]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["synth", "instructttseval", "--out", str(tmp_path / "b"), "--from-items", str(items_path)]) == 2
    assert "--reference-audio" in capsys.readouterr().err
