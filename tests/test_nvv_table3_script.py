"""scripts/nvv_table3.py without models: per-(task, system) item subsets, the score command each stage
runs, and the Table 3 / verifier tables it writes from score nvv's files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "nvv_table3.py"


@pytest.fixture(scope="module")
def t3():
    spec = importlib.util.spec_from_file_location("nvv_table3", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _work(tmp_path: Path) -> Path:
    (tmp_path / "dataset").mkdir()
    items = [{"id": f"zh_{i}", "text": "你好", "text_with_mark": "你<laughing>好", "caption_with_nvb": "c",
              "non_verbal_events": ["laughing"]} for i in range(1, 6)]
    (tmp_path / "dataset" / "nvbench_data_zh.json").write_text(json.dumps(items, ensure_ascii=False))
    (tmp_path / "zh-tag").mkdir()
    rows = [{"id": "zh_4", "system": "Cosyvoice2", "audio": "/a/zh_4.wav"},
            {"id": "zh_2", "system": "Cosyvoice2", "audio": "/a/zh_2.wav"},
            {"id": "zh_3", "system": "gpt_4o", "audio": "/b/zh_3.wav"}]
    (tmp_path / "zh-tag" / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_subset_keeps_one_systems_outputs_and_only_their_items(t3, tmp_path):
    work = _work(tmp_path)
    dest = work / "x"
    assert t3.subset(work, "zh-tag", "Cosyvoice2", dest) == 2
    rows = [json.loads(line) for line in (dest / "outputs" / "manifest.jsonl").open()]
    assert [r["id"] for r in rows] == ["zh_4", "zh_2"] and {r["system"] for r in rows} == {"Cosyvoice2"}
    items = json.loads((dest / "items.json").read_text())
    assert [it["id"] for it in items] == ["zh_2", "zh_4"]  # dataset order, every field kept
    assert items[0]["text_with_mark"] == "你<laughing>好"
    assert t3.subset(work, "zh-tag", "bark", work / "y") == 0 and not (work / "y").exists()
    assert t3.subset(work, "zh-tag", "Cosyvoice2", work / "z", limit=1) == 1
    assert [it["id"] for it in json.loads((work / "z" / "items.json").read_text())] == ["zh_4"]


def test_score_commands_per_stage(t3):
    cmd = t3.score_command("en-prompt", Path("i.json"), Path("o"), Path("r"), ["wer", "dnsmos", "asr=whisper-base"],
                           None)
    assert cmd[:2] == ["score", "nvv"] and cmd[cmd.index("--measure") + 1] == "wer,dnsmos"
    assert cmd[cmd.index("--asr") + 1] == "whisper-base" and "--judge" not in cmd
    cmd = t3.score_command("zh-tag", Path("i.json"), Path("o"), Path("r"), ["dnsmos"],
                           {"judge": "J", "aligner": "whisper-base"})
    assert "--asr" not in cmd and cmd[cmd.index("--aligner-language") + 1] == "zh"
    assert cmd[cmd.index("--judge") + 1] == "J" and cmd[cmd.index("--aligner") + 1] == "whisper-base"
    assert "--measure" not in t3.score_command("zh-tag", Path("i"), Path("o"), Path("r"), [], {"judge": "J",
                                                                                                "aligner": "a"})


def test_paper_tasks_tag_based_for_table2_systems_else_prompt(t3):
    assert t3.paper_tasks("Cosyvoice2") == ["en-tag", "zh-tag"]  # CosyVoice 2 of Table 2
    assert t3.paper_tasks("gpt_4o") == ["en-prompt", "zh-prompt"]


def test_table3_markdown_marks_what_cannot_run(t3):
    v = lambda x: {"mean": x, "std": 0.0, "n": 1}  # noqa: E731
    rows = [{"system": "gpt_4o", "task": "zh-prompt", "wer": None, "sig": v(3.5), "bak": v(4.0), "ovrl": v(3.2),
             "n_dnsmos": 141},
            {"system": "Cosyvoice2", "task": "en-tag", "wer": v(3.816), "sig": v(3.6), "bak": v(4.1), "ovrl": v(3.4),
             "coverage": v(0.18), "precision": v(0.5), "recall": v(0.4), "f1": v(0.44), "ntd": v(0.01),
             "n_wer": 24, "n_dnsmos": 24, "n_verified": 24}]
    lines = t3.table3_markdown(rows).splitlines()
    assert lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    cosy, gpt = lines[2], lines[3]
    assert "| 3.82 |" in cosy and "| 0.440 |" in cosy and "24 / 24 / 24" in cosy and "| - |" in cosy  # no CLAP on tag
    assert "needs paraformer-zh weights" in gpt and "needs msclap 2023 weights" in gpt
    assert gpt.count("| - |") >= 2  # no verifier columns for a prompt task


def test_verifier_summary_reads_tables_and_predictions(t3, tmp_path):
    run = tmp_path / "en-tag" / "gpt_4o" / "run"
    (run / "predictions").mkdir(parents=True)
    (run / "table.json").write_text(json.dumps([{"system": "gpt_4o", "n_scored": 3, "coverage": 1.0, "precision": 0.5,
                                                 "recall": 0.25, "f1": 1 / 3, "ntd": None, "n_errors": 1}]))
    preds = [{"system": "gpt_4o", "present": True}, {"system": "gpt_4o", "present": False},
             {"system": "gpt_4o", "present": True}, {"system": "gpt_4o", "present": False, "error": "x"}]
    (run / "predictions" / "gpt_4o.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    lines = t3.verifier_summary(tmp_path)
    assert lines[2] == "| en-tag | gpt_4o | 3 | 0.667 | 1.000 | 0.500 | 0.250 | 0.333 | - | 1 |"


def test_verifier_all_runs_each_system_on_at_most_per_system_outputs(t3, tmp_path, monkeypatch):
    work = _work(tmp_path)
    for task in ("en-prompt", "en-tag", "zh-prompt"):
        (work / task).mkdir()
        (work / task / "manifest.jsonl").write_text("")
    ran = []
    monkeypatch.setattr(t3, "run", ran.append)
    args = type("Args", (), {"work": work, "judge": "J", "aligner": "whisper-base", "verifier_per_system": 1,
                              "tasks": list(t3.TASKS)})()
    t3.stage_verifier_all(args)
    assert [c[c.index("--outputs") + 1] for c in ran] == [str(work / "verifier" / "zh-tag" / s / "outputs")
                                                         for s in ("Cosyvoice2", "gpt_4o")]
    assert all(c[c.index("--judge") + 1] == "J" for c in ran)
    kept = (work / "verifier" / "zh-tag" / "Cosyvoice2" / "outputs" / "manifest.jsonl").read_text().splitlines()
    assert len(kept) == 1  # 2 outputs, at most 1 per system
    ran.clear()
    args.tasks = ["zh-tag", "en-tag"]  # --tasks: only these folders, in this order
    t3.stage_verifier_all(args)
    assert len(ran) == 2
