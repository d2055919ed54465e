"""InstructTTSEval judge from plain true/false pairs: the verdict loss without attribute targets
(values by hand), the pairs.jsonl reader, the config checks, the data check, and a short CPU run
train -> validate on a corpus that has no clips.jsonl."""

import csv
import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import speechlike
from trainer.benchmarks.instructttseval.loss import judge_loss
from trainer.benchmarks.instructttseval.training_pairs import IGNORE, training_rows
from trainer.synth.corpus_io import write_wav


def _targets(verdict, voice, stated, follows=None):
    return {"verdict": torch.tensor(verdict), "voice": torch.tensor(voice), "stated": torch.tensor(stated),
            "follows": torch.tensor(follows if follows is not None else [1.0 - v for v in verdict])}


def _logits():
    verdict = torch.tensor([[2.0, 0.0], [0.0, 1.0]])  # (B=2, true/false)
    audio = torch.tensor([[[1.0, 0.0]], [[0.0, 3.0]]])  # (B, D=1, V=2)
    text = torch.tensor([[[0.0, 0.0, 0.0]], [[5.0, 0.0, 0.0]]])  # (B, D, V + 1)
    return verdict, audio, text


# CE by hand: -log softmax(target)
CE_VERDICT = (math.log(1 + math.exp(-2)) + math.log(1 + math.exp(1))) / 2  # both rows target "true" (0)
CE_VOICE_ROW0 = math.log(1 + math.exp(-1))  # logits (1, 0), target 0
CE_STATED_ROW0 = math.log(3)  # uniform over 3, target 2 ("not stated")


def test_verdict_only_batch_gives_the_verdict_ce_not_nan():
    verdict, audio, text = _logits()
    ignored = _targets([0, 0], [[IGNORE], [IGNORE]], [[IGNORE], [IGNORE]])
    for weight in (0.0, 1.0):  # all targets ignored: the attribute terms are left out, no 0/0
        loss = judge_loss(verdict, audio, text, ignored, dimension_weight=weight, follow_weight=0.0)
        assert loss.item() == pytest.approx(CE_VERDICT, rel=1e-6)
    # dimension_weight 0 ignores attribute targets even where a row has them
    labelled = _targets([0, 0], [[0], [1]], [[2], [0]])
    assert judge_loss(verdict, audio, text, labelled, 0.0, 0.0).item() == pytest.approx(CE_VERDICT, rel=1e-6)


def test_mixed_batch_averages_the_attribute_ce_over_known_targets_only():
    verdict, audio, text = _logits()
    mixed = _targets([0, 0], [[0], [IGNORE]], [[2], [IGNORE]])  # row 1: a verdict-only pair
    loss = judge_loss(verdict, audio, text, mixed, dimension_weight=0.5, follow_weight=0.0)
    assert loss.item() == pytest.approx(CE_VERDICT + 0.5 * (CE_VOICE_ROW0 + CE_STATED_ROW0), rel=1e-6)


def test_fully_labelled_batch_is_bitwise_the_attribute_trained_loss():
    """The attribute-trained recipe's loss (and so its loss curve) is unchanged."""
    g = torch.Generator().manual_seed(0)
    verdict, audio, text = torch.randn(4, 2, generator=g), torch.randn(4, 3, 5, generator=g), torch.randn(4, 3, 6, generator=g)
    t = _targets([0, 1, 0, 1], [[0, 1, 4], [2, 3, 0], [1, 1, 1], [4, 0, 2]], [[5, 1, 0], [2, 5, 5], [0, 1, 2], [3, 4, 5]])
    want = F.cross_entropy(verdict, t["verdict"]) + 1.0 * (
        F.cross_entropy(audio.reshape(-1, 5), t["voice"].reshape(-1), ignore_index=IGNORE)
        + F.cross_entropy(text.reshape(-1, 6), t["stated"].reshape(-1), ignore_index=IGNORE))
    assert torch.equal(judge_loss(verdict, audio, text, t, 1.0, 0.0), want)


def _plain_corpus(root, rows, n_audio=8):
    root.mkdir(parents=True, exist_ok=True)
    (root / "audio").mkdir(exist_ok=True)
    for i in range(n_audio):
        write_wav(root / "audio" / f"c{i}.wav", speechlike(0.6, seed=i), 16000)
    (root / "pairs.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return root


def _plain_rows():
    """Per split: each clip with its own instruction (true) and another clip's (false), two tasks."""
    texts = {"APS": ["A deep male voice, slow.", "A high female voice, fast.", "An old man, soft.", "A young girl, loud."],
             "DSD": ["Speak calmly and slowly.", "Speak angrily and fast.", "Whisper sadly.", "Shout happily."]}
    rows = []
    for i in range(8):
        split = "train" if i < 4 else ("val" if i < 6 else "test")
        for task in ("APS", "DSD"):
            lang = "en" if i % 2 == 0 else "zh"
            rows.append({"id": f"c{i}_{task}_own", "audio": f"audio/c{i}.wav", "instruction": texts[task][i % 4],
                         "lang": lang, "task": task, "label": True, "split": split, "speaker": f"s{i}"})
            rows.append({"id": f"c{i}_{task}_other", "audio": f"audio/c{i}.wav",
                         "instruction": texts[task][(i + 1) % 4], "lang": lang, "task": task,
                         "votes": [False, True, False], "split": split, "speaker": f"s{i}"})
    return rows


def test_plain_pairs_read_without_clips_file(tmp_path):
    corpus = _plain_corpus(tmp_path / "c", _plain_rows())
    rows = training_rows(corpus)
    assert len(rows) == 32
    assert all(r["voice_codes"] == [IGNORE] * len(r["voice_codes"]) == r["stated_codes"] for r in rows)
    own, other = rows[0], rows[1]
    assert (own["label"], own["kind"], other["label"], other["kind"]) == (1, "matched", 0, "mismatched")
    assert own["path"] == str(corpus / "audio" / "c0.wav")


@pytest.mark.parametrize("change, message", [
    ({"split": "dev"}, "split 'dev'"), ({"task": "XYZ"}, "task 'XYZ'"), ({"label": "yes"}, "needs 'label'"),
    ({"lang": "fr"}, "lang 'fr'"), ({"clip_id": "nope", "described": {}, "outcomes": {}}, "clip_id 'nope'")])
def test_bad_pair_names_file_and_line(tmp_path, change, message):
    rows = _plain_rows()
    rows[2] = {**rows[2], **change}
    corpus = _plain_corpus(tmp_path / "c", rows, n_audio=0)
    with pytest.raises(ValueError, match=rf"pairs.jsonl:3: .*{message}"):
        training_rows(corpus)


def test_mixed_corpus_keeps_attribute_targets_of_synthetic_pairs(tmp_path):
    from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig, build_instruct_corpus

    corpus = build_instruct_corpus(InstructCorpusConfig(seed=0, speakers=(1, 0, 1), clips_per_speaker=2,
                                                        languages=("en",)), tmp_path / "c")
    synthetic = training_rows(corpus)
    write_wav(corpus / "mine.wav", speechlike(0.5), 16000)
    with open(corpus / "pairs.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "mine", "audio": "mine.wav", "instruction": "Speak slowly.", "lang": "en",
                            "task": "DSD", "label": False, "split": "train"}) + "\n")
    rows = training_rows(corpus)
    assert rows[:-1] == synthetic and all(IGNORE not in r["voice_codes"] for r in synthetic)
    assert rows[-1]["voice_codes"] == [IGNORE] * len(rows[-1]["voice_codes"]) and rows[-1]["label"] == 0


def test_val_metrics_skip_unknown_voice_values():
    from trainer.benchmarks.instructttseval.attributes import dimension_values
    from trainer.benchmarks.instructttseval.task import InstructFollowTask

    values = dimension_values()
    first = {d: v[0] for d, v in values.items()}
    rows = [{"task": "APS", "label": 1, "voice_codes": [0] * len(values)},
            {"task": "APS", "label": 0, "voice_codes": [IGNORE] * len(values)}]
    preds = [{"p_true_label_tokens": 0.9, "p_true_dimensions": 0.9, "p_true_clear_conflict": 0.9, "voice_values": first}] * 2
    out = InstructFollowTask().val_metrics(rows, preds)
    assert out["val/voice_value_accuracy"] == 1.0  # row 0 only
    assert out["val/agreement/label_tokens/APS"] == 0.5


def test_head_verdict_without_a_trained_head_is_refused(tmp_path):
    from evaluators.config_input import FieldError
    from trainer.benchmarks.instructttseval.settings import InstructFollowSettings
    from trainer.benchmarks.instructttseval.task import InstructFollowTask

    with pytest.raises(FieldError, match="verdict_source.*label_tokens"):
        InstructFollowSettings(dimension_weight=0.0, verdict_source="clear_conflict")
    corpus = _plain_corpus(tmp_path / "c", _plain_rows(), n_audio=0)
    with pytest.raises(ValueError, match="no training pair has attribute targets"):
        InstructFollowTask().load_rows(corpus, InstructFollowSettings(verdict_source="clear_conflict"))
    _, summary = InstructFollowTask().load_rows(corpus, InstructFollowSettings(verdict_source="label_tokens"))
    assert summary["attribute_head"]["trained"] is False and summary["train"]["APS"] == {
        "pairs": 8, "followed": 4, "with_attributes": 0}


def test_data_check_accepts_plain_pairs_and_names_missing_audio(tmp_path):
    from trainer.data_check import check_corpus

    corpus = _plain_corpus(tmp_path / "c", _plain_rows())
    assert check_corpus(corpus, "instructttseval") == []
    (corpus / "audio" / "c7.wav").unlink()
    kinds = {(p.kind, p.line) for p in check_corpus(corpus, "instructttseval")}
    assert kinds == {("missing-audio", n) for n in (29, 30, 31, 32)}


def test_verdict_only_recipe_trains_and_validates_on_plain_pairs(tmp_path):
    """configs/instructttseval/tiny_verdict_only.yaml on a pairs.jsonl without clips.jsonl (tiny byte
    backbone, a few steps): a finite loss, a threshold chosen on the val pairs, the card says the
    head is untrained, and `validate` reports the corpus's test split."""
    from evaluators.cli import main
    from trainer.config import load_config
    from trainer.train import train

    corpus = _plain_corpus(tmp_path / "c", _plain_rows())
    cfg = load_config("configs/instructttseval/tiny_verdict_only.yaml",
                      {"data.corpus_dir": str(corpus), "data.synthesize_if_missing": False,
                       "out_dir": str(tmp_path / "run"), "backbone.source": "tiny", "optim.max_epochs": 1,
                       "optim.warmup_steps": 1, "data.batch_size": 4, "logging.log_every_n_steps": 1})
    run = train(cfg)
    assert not (corpus / "clips.jsonl").exists()  # the pairs were read, nothing synthesised over them
    with next((run / "logs").glob("version_*/metrics.csv")).open(newline="") as f:
        losses = [float(r["train/loss"]) for r in csv.DictReader(f) if r.get("train/loss")]
    judge_cfg = json.loads((run / "final" / "judge_config.json").read_text())
    assert judge_cfg["verdict_source"] == "label_tokens"
    assert judge_cfg["training"]["calibration"]["chosen_on"].startswith("8 validation pairs (4 followed)")
    assert judge_cfg["training"]["labels"]["attribute_head"]["trained"] is False
    from trainer.benchmarks.instructttseval.card import card_sections

    assert any("dimension head was not trained" in line for line in card_sections(judge_cfg, None))
    out = tmp_path / "v.json"
    assert main(["validate", "instructttseval", "--judge", str(run / "final"), "--corpus", str(corpus),
                 "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["protocol"].startswith("test_split") and report["agreement"]["all"]["all"]["n"] == 8
    assert "voice_value_accuracy" not in report
    assert losses and all(np.isfinite(losses))
