"""InstructTTSEval judges: the zero-shot drop-in asks the public question (stock-processor path on
the real vocabulary), the trained judge's folder round trip and batch invariance, the scorer's rows,
nulls and resume, and the agreement table's golden values."""

import json
import math

import numpy as np
import pytest
import soundfile as sf
import torch

from evaluators.backbones import AudioLLM
from evaluators.backbones.chat_prompt import conversation
from evaluators.benchmarks.instructttseval.judge import InstructionJudge
from evaluators.benchmarks.instructttseval.metrics import task_scores
from evaluators.benchmarks.instructttseval.prompts import (
    CONSISTENCY_PREFIX,
    PLACEHOLDER,
    public_prompt,
    public_template,
    public_template_for_format,
)
from evaluators.benchmarks.instructttseval.scorer import score_instructttseval
from evaluators.run_options import RunOptions
from evaluators.judges.presets import get_preset
from evaluators.judges.registry import load_judge
from evaluators.judges.verbalizer import VerbalizerJudge
from trainer.benchmarks.instructttseval.validation import agreement_cell, pairs_from_file

from test_hub_layout import stock_processor

INSTRUCTION = "gender: Male.\n\npitch: Mid-range male pitch, slightly elevated at the beginning and then stabilizing."


def _wave(seconds: float, f0: float = 140.0, seed: int = 0) -> np.ndarray:
    t = np.arange(int(seconds * 16000)) / 16000
    rng = np.random.default_rng(seed)
    return (0.3 * np.sin(2 * np.pi * f0 * t) + 0.01 * rng.standard_normal(t.size)).astype(np.float32)


def test_public_template_is_filled_as_the_public_script_fills_it():
    template = public_template()
    assert template.rstrip().endswith(PLACEHOLDER) and template.count(PLACEHOLDER) == 1
    assert '"一致性": true/false' in template  # the reply format the prefix follows
    filled = public_template_for_format().format(instruction=INSTRUCTION + " {braces} stay")
    assert filled == template.replace(PLACEHOLDER, INSTRUCTION + " {braces} stay") == public_prompt(
        INSTRUCTION + " {braces} stay")


def test_drop_in_preset_matches_the_stock_processor_on_the_real_vocabulary(stand_in, monkeypatch):
    """Text before the audio (as the public script sends it), the answer pre-filled up to the
    consistency field, the verdict read as ' true' / ' false' (one token each)."""
    folder = stand_in("qwen2_5_omni")
    judge = VerbalizerJudge.from_preset("instruct-follow", base=str(folder))
    tok = judge.backbone.tokenizer
    assert tok.convert_ids_to_tokens(judge.label_ids.tolist()) == ["Ġtrue", "Ġfalse"]
    proc = stock_processor(folder, "qwen2_5_omni", monkeypatch)
    wave = _wave(2.37)
    chat = conversation(judge.backbone.spec.system_prompt, public_prompt(INSTRUCTION), "")
    text = proc.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) + CONSISTENCY_PREFIX
    stock = proc(text=text, audio=[wave], sampling_rate=16000, return_tensors="pt", padding=True)
    ours = judge.prepare(wave, {"instruction": INSTRUCTION})
    assert ours["input_ids"].tolist() == stock["input_ids"][0].tolist()
    assert tok.decode(ours["input_ids"][-3:]).endswith('"一致性":')
    with torch.no_grad():
        p_stock = torch.softmax(judge.backbone.model(**stock).logits[0, -1, judge.label_ids].double(), -1)
    out = judge.score([{"wave": wave, "fields": {"instruction": INSTRUCTION}}])[0]
    assert abs(out["probs"]["true"] - float(p_stock[0])) <= 1e-5


def test_drop_in_preset_is_bound_to_qwen2_5_omni():
    preset = get_preset("instruct-follow")
    assert preset.backbone == "qwen2_5_omni" and preset.label_texts == (" true", " false")
    assert preset.prompt == "" and PLACEHOLDER not in preset.prompt_before_audio


@pytest.fixture(scope="module")
def tiny_judge():
    backbone = AudioLLM.tiny("qwen2_5_omni", seed=0)
    values = {"gender": ["male", "female"], "pitch": ["low+steady", "mid+steady", "high+rising"],
              "emotion": ["neutral", "happy", "sad", "angry"]}
    return InstructionJudge(backbone, InstructionJudge.new_head(backbone, values, width=32, seed=0),
                            name="tiny-instruct")


def test_instruction_judge_round_trip_and_batch_invariance(tiny_judge, tmp_path):
    inputs = [{"wave": _wave(s, f0, i), "instruction": INSTRUCTION if i % 2 else "音高：低沉。", "lang": "en" if i % 2 else "zh"}
              for i, (s, f0) in enumerate([(1.0, 120), (2.5, 220), (1.7, 150), (3.1, 300)])]
    one = [tiny_judge.score([x], batch_size=1)[0] for x in inputs]
    batched = tiny_judge.score(inputs, batch_size=4)
    for a, b in zip(one, batched):
        assert abs(a["p_true"] - b["p_true"]) < 1e-5 and abs(a["p_true_dimensions"] - b["p_true_dimensions"]) < 1e-5
        assert a["dimensions"] == b["dimensions"] and a["voice_values"] == b["voice_values"]
    out = one[0]
    assert out["dimensions"]["accent"] == "unsupported" and "accent" not in out["dimension_probs"]
    assert set(out["dimensions"]) == {"gender", "pitch", "speed", "volume", "age", "clarity", "fluency", "accent",
                                      "texture", "emotion", "tone", "personality"}
    assert out["voice_values"]["gender"] in ("male", "female") and set(out["voice_values"]) == {"gender", "pitch",
                                                                                                "emotion"}
    assert out["p_true"] == out["p_true_label_tokens"]  # verdict_source label_tokens
    for dim, probs in out["dimension_probs"].items():
        assert abs(sum(probs.values()) - 1.0) < 1e-5, dim
    # P(follows) = prod over dimensions of (1 - P(conflicts))
    expected = np.prod([1 - p["conflicts"] for p in out["dimension_probs"].values()])
    assert abs(out["p_true_dimensions"] - expected) < 1e-5
    # the clear-conflict score: 1 - the largest P(conflicts)
    assert abs(out["p_true_clear_conflict"] - (1 - max(p["conflicts"] for p in out["dimension_probs"].values()))) < 1e-5
    folder = tiny_judge.save_pretrained(tmp_path / "judge")
    cfg = json.loads((folder / "judge_config.json").read_text())
    assert cfg["kind"] == "instruction_follow" and (folder / "dimension_head.safetensors").is_file()
    loaded = load_judge(folder)
    assert isinstance(loaded, InstructionJudge)
    again = loaded.score(inputs, batch_size=2)
    for a, b in zip(batched, again):
        assert abs(a["p_true"] - b["p_true"]) < 1e-6 and a["dimensions"] == b["dimensions"]
    with pytest.raises(ValueError, match="empty instruction"):
        tiny_judge.prepare(_wave(1.0), "  ", "en")
    with pytest.raises(ValueError, match="no prompt for language"):
        tiny_judge.prepare(_wave(1.0), INSTRUCTION, "fr")


def _items(tmp_path, n=3):
    rows = []
    for k in range(n):
        rows.append({"id": f"en_{k}", "text": "Hello there.",
                     **{t: {"instruction": INSTRUCTION if not (k == 2 and t == "RP") else "",
                            "gen_path": f"gen_wav/en_{k}_{t}.wav"} for t in ("APS", "DSD", "RP")}})
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def test_scorer_rows_nulls_and_resume(tiny_judge, tmp_path):
    items = _items(tmp_path)
    outputs = tmp_path / "sysA"
    (outputs / "gen_wav").mkdir(parents=True)
    for k in range(3):
        for t in ("APS", "DSD", "RP"):
            if (k, t) == (1, "DSD"):
                continue  # missing output
            path = outputs / "gen_wav" / f"en_{k}_{t}.wav"
            if (k, t) == (0, "RP"):
                path.write_bytes(b"RIFF not audio")  # unreadable
            else:
                sf.write(path, _wave(1.0 + k, 150 + 30 * k, k), 16000)
    out = tmp_path / "results"
    result = score_instructttseval(tiny_judge, items, outputs, out, n_resamples=200, run=RunOptions(batch_size=4))
    rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 9
    nulls = {(r["id"], r["task"]): r["error"] for r in rows if r["judge_score"] is None}
    assert set(nulls) == {("en_1", "DSD"), ("en_0", "RP"), ("en_2", "RP")}
    assert "no output" in nulls[("en_1", "DSD")] and "empty instruction" in nulls[("en_2", "RP")]
    results = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert results[0]["APS"]["gen_path"] == "gen_wav/en_0_APS.wav"  # the item row as given, plus verdicts
    assert isinstance(results[0]["APS"]["judge_score"], bool) and "dimensions" in results[0]["APS"]
    assert results[1]["DSD"]["judge_score"] is None and "no output" in results[1]["DSD"]["judge_error"]
    table = {k: v for k, v in result["table"].items() if k != "dimensions"}
    silent = table.pop("n_no_speech")  # judged outputs the VAD heard no speech in, counted beside the table
    assert table == task_scores(results, field="judge_score", n_resamples=200)  # one metric code
    assert silent == sum(bool(r.get("no_speech")) for r in result["rows"])
    assert result["table"]["tasks"]["RP"]["n_null"] == 2 and result["table"]["tasks"]["APS"]["n_valid"] == 3
    assert (out / "table.md").read_text().startswith("| system | APS | DSD | RP | Avg |")
    assert (out / "dimension_failures.png").is_file()
    # inputs prepared by two data-loader workers: the same rows
    score_instructttseval(tiny_judge, items, outputs, tmp_path / "workers", n_resamples=200,
                          run=RunOptions(batch_size=4, num_workers=2))
    in_workers = [json.loads(x) for x in (tmp_path / "workers" / "scores.jsonl").read_text().splitlines()]
    assert [(r["id"], r["task"], r["judge_score"], r.get("error")) for r in in_workers] == \
        [(r["id"], r["task"], r["judge_score"], r.get("error")) for r in rows]
    for a, b in zip(in_workers, rows):  # the model's thread count differs: float sums may too
        assert a.get("p_true", 0.0) == pytest.approx(b.get("p_true", 0.0), abs=1e-6)
    # rerun with the output still missing: no new row
    score_instructttseval(tiny_judge, items, outputs, out, n_resamples=200, run=RunOptions(batch_size=4))
    assert len((out / "scores.jsonl").read_text().splitlines()) == 9
    # rerun: nothing recomputed but the missing output, which has appeared since
    sf.write(outputs / "gen_wav" / "en_1_DSD.wav", _wave(2.0), 16000)
    score_instructttseval(tiny_judge, items, outputs, out, n_resamples=200, run=RunOptions(batch_size=4))
    rows2 = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows2) == 10 and rows2[-1]["id"] == "en_1" and isinstance(rows2[-1]["judge_score"], bool)
    results = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert isinstance(results[1]["DSD"]["judge_score"], bool)
    # another judge never resumes these rows
    from evaluators.rows_file import ResumeMismatchError

    tiny_judge.name, name = "another-judge", tiny_judge.name
    try:
        with pytest.raises(ResumeMismatchError, match="another judge"):
            score_instructttseval(tiny_judge, items, outputs, out, n_resamples=200, run=RunOptions(batch_size=4))
    finally:
        tiny_judge.name = name


def test_agreement_cell_golden_values():
    # labels T T F F; verdicts T F F null -> hits 1 0 1 0 = 50%; the null counts as a miss.
    # kappa over the 3 pairs with a verdict: verdicts (T, F, F) vs labels (T, T, F): p_o = 2/3,
    # p_e = 1/3 * 2/3 + 2/3 * 1/3 = 4/9, kappa = (2/3 - 4/9) / (1 - 4/9) = 0.4
    cell = agreement_cell([True, True, False, False], [True, False, False, None],
                          ["matched", "matched", "near_miss", "other_item"], n_resamples=500)
    assert cell["agreement"] == 50.0 and cell["n"] == 4 and cell["n_null"] == 1
    assert math.isclose(cell["kappa"], 0.4)
    assert cell["agreement_matched"] == 50.0 and cell["agreement_mismatched"] == 50.0
    assert cell["ci95"][0] <= 50.0 <= cell["ci95"][1]


def test_pairs_file_takes_labels_or_votes(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"id": "a", "audio": "a.wav", "instruction": "x", "lang": "en", "task": "APS",
                                "votes": [True, False, True]}) + "\n"
                    + json.dumps({"id": "b", "audio": "b.wav", "instruction": "x", "lang": "zh", "task": "RP",
                                  "label": False, "kind": "near_miss"}) + "\n")
    pairs = pairs_from_file(path)
    assert [p["label"] for p in pairs] == [True, False] and pairs[0]["kind"] == "matched"
    assert pairs[0]["path"] == str(tmp_path / "a.wav")
    path.write_text(json.dumps({"id": "c", "audio": "c.wav", "instruction": "x", "lang": "en", "task": "APS"}) + "\n")
    with pytest.raises(ValueError, match=r"pairs.jsonl:1: needs 'label'"):
        pairs_from_file(path)


def test_outcomes_from_voice_and_stated_values_golden():
    """Two values + "not stated": P_text = (0.5, 0.25 | none 0.25), P_audio = (0.8, 0.2) ->
    matches = 0.5*0.8 + 0.25*0.2 = 0.45, not mentioned 0.25, conflicts 0.30; two such dimensions
    -> P(follows) = 0.7 * 0.7 = 0.49."""
    from evaluators.benchmarks.instructttseval.attribute_head import follow_probability, outcome_probs

    audio = torch.log(torch.tensor([[[0.8, 0.2], [0.8, 0.2]]]))
    text = torch.log(torch.tensor([[[0.5, 0.25, 0.25], [0.5, 0.25, 0.25]]]))
    out = outcome_probs(audio, text)
    assert torch.allclose(out[0, 0], torch.tensor([0.45, 0.30, 0.25]), atol=1e-6)
    assert abs(float(follow_probability(out)[0]) - 0.49) < 1e-6


def test_clear_conflict_score_golden():
    """Conflicts 0.30, 0.10, 0.05 -> 1 - 0.30 = 0.70 (the product rule: 0.7 * 0.9 * 0.95 = 0.5985)."""
    from evaluators.benchmarks.instructttseval.attribute_head import follow_probability, no_clear_conflict_score

    outcomes = torch.tensor([[[0.6, 0.30, 0.10], [0.9, 0.10, 0.0], [0.0, 0.05, 0.95]]])
    assert abs(float(no_clear_conflict_score(outcomes)[0]) - 0.70) < 1e-6
    assert abs(float(follow_probability(outcomes)[0]) - 0.5985) < 1e-6


class _ScoreTable:
    """A stand-in judge (an engine model) whose verdict score is looked up by instruction."""

    verdict_source, threshold = "clear_conflict", 0.5

    def __init__(self, table):
        self.table = table

    def prepare_input(self, x):
        return x["instruction"]

    def score_examples(self, examples, batch_size=8):
        return [{"p_true": self.table[x]} for x in examples]


def test_choose_threshold_golden(tmp_path):
    """Followed scores 0.9, 0.3, 0.015; unfollowed 0.001, 0.004, 0.3. Balanced agreement: at 0.005
    and 0.01 (3/3 + 2/3) / 2 = 83.3%, the best; the tie goes to the one nearer 0.5 (0.01). At 0.02:
    (2/3 + 2/3) / 2."""
    from trainer.benchmarks.instructttseval.validation import choose_threshold

    sf.write(tmp_path / "a.wav", _wave(0.5), 16000)
    scores = {"f1": 0.9, "f2": 0.3, "f3": 0.015, "u1": 0.001, "u2": 0.004, "u3": 0.3}
    rows = [{"path": str(tmp_path / "a.wav"), "instruction": k, "lang": "en", "label": k[0] == "f"} for k in scores]
    judge = _ScoreTable(scores)
    out = choose_threshold(judge, rows)
    assert out["threshold"] == judge.threshold == 0.01
    by_t = {s["threshold"]: s for s in out["sweep"]}
    assert by_t[0.01]["balanced"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    assert by_t[0.005]["balanced"] == pytest.approx(by_t[0.01]["balanced"])
    assert by_t[0.02]["agreement_followed"] == pytest.approx(200 / 3)
    assert by_t[0.001]["agreement_unfollowed"] == 0.0
    with pytest.raises(ValueError, match="followed and unfollowed"):
        choose_threshold(judge, [r for r in rows if r["label"]])
    with pytest.raises(ValueError, match="1 of 7 items failed; first gone"):  # the engine's failure rule
        choose_threshold(judge, rows + [{"id": "gone", "path": str(tmp_path / "gone.wav"), "instruction": "f1",
                                         "lang": "en", "label": True}])
