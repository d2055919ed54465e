"""The InstructTTSEval head's log-mel statistics (``instructttseval.mel_statistics``, optionally
``mel_standardise``d, read alone by the ``mel_only`` dimensions): golden per-bin mean/std, padding
invariance, level reaching the head,
batch-norm standardisation (batch statistics while training, running ones when scoring), and the
judge folder round trip keeping the statistics input (``docs/instructttseval.md``, "What the tower
hears")."""

import json

import numpy as np
import pytest
import torch

from evaluators.backbones import AudioLLM
from evaluators.benchmarks.instructttseval.attribute_head import AttributeHead, mel_statistics
from evaluators.benchmarks.instructttseval.judge import InstructionJudge
from evaluators.judges.registry import load_judge

VALUES = {"gender": ["male", "female"], "volume": ["soft", "normal", "loud"]}


def _wave(seconds: float, amplitude: float, seed: int = 0) -> np.ndarray:
    t = np.arange(int(seconds * 16000)) / 16000
    rng = np.random.default_rng(seed)
    return (amplitude * (np.sin(2 * np.pi * 150 * t) + 0.05 * rng.standard_normal(t.size))).astype(np.float32)


def test_mel_statistics_golden_and_padding_invariant():
    feats = torch.tensor([[[1.0, 3.0, 9.0, 9.0], [0.0, 0.0, 5.0, 5.0]]])  # (1, 2 mels, 4 frames)
    mask = torch.tensor([[1, 1, 0, 0]])
    stats = mel_statistics(feats, mask)
    assert stats.shape == (1, 4)
    assert torch.allclose(stats, torch.tensor([[2.0, 0.0, 1.0, 0.0]]))
    assert torch.allclose(mel_statistics(feats[..., :2], mask[:, :2]), stats)  # padding frames left out


def test_head_reads_statistics_only_when_built_to():
    head = AttributeHead(16, VALUES, width=8, mel_bins=3)
    hidden, audio_mask = torch.randn(2, 6, 16), torch.tensor([[0, 1, 1, 1, 0, 0]] * 2, dtype=torch.bool)
    text_mask = ~audio_mask
    with pytest.raises(ValueError, match="6 log-mel statistics"):
        head(hidden, audio_mask, text_mask)
    a1, _ = head(hidden, audio_mask, text_mask, torch.zeros(2, 6))
    a2, _ = head(hidden, audio_mask, text_mask, torch.full((2, 6), 3.0))
    assert not torch.allclose(a1, a2)  # the statistics move the voice logits
    plain = AttributeHead(16, VALUES, width=8)
    assert plain.mel_bins == 0 and plain.audio_proj[0].in_features == 32


def test_judge_round_trip_keeps_statistics_and_hears_level(tmp_path):
    backbone = AudioLLM.tiny("qwen2_5_omni", seed=0)
    judge = InstructionJudge(backbone, InstructionJudge.new_head(backbone, VALUES, width=16, seed=0,
                                                                 read_mel_statistics=True), name="tiny-level")
    assert judge.head.mel_bins == backbone.mel_bins
    inputs = [{"wave": _wave(1.5, amp), "instruction": "Speak loudly.", "lang": "en"} for amp in (0.01, 0.5)]
    scored = judge.score(inputs, batch_size=2)
    one = [judge.score([x], batch_size=1)[0] for x in inputs]
    for a, b in zip(one, scored):
        assert abs(a["p_true_dimensions"] - b["p_true_dimensions"]) < 1e-5
    folder = judge.save_pretrained(tmp_path / "judge")
    head_cfg = json.loads((folder / "judge_config.json").read_text())["head"]
    assert head_cfg["mel_bins"] == backbone.mel_bins and head_cfg["mel_standardised"] is False
    loaded = load_judge(folder)
    assert loaded.head.mel_bins == backbone.mel_bins and loaded.head.mel_norm is None
    for a, b in zip(scored, loaded.score(inputs, batch_size=2)):
        assert abs(a["p_true_dimensions"] - b["p_true_dimensions"]) < 1e-6
    # a level change alone changes the statistics the head reads (the tower's output need not)
    feats = [judge.prepare(x["wave"], x["instruction"], "en") for x in inputs]
    batch = backbone.collate(feats)
    stats = mel_statistics(batch["input_features"], batch["feature_attention_mask"])
    assert float((stats[1, :backbone.mel_bins] - stats[0, :backbone.mel_bins]).mean()) > 0.5


def test_statistics_are_standardised_by_batch_while_training_and_by_running_values_when_scoring():
    torch.manual_seed(0)
    head = AttributeHead(16, VALUES, width=8, mel_bins=3, standardise_mel=True)
    assert head.mel_norm is not None and head.training
    hidden, audio_mask = torch.randn(4, 6, 16), torch.tensor([[0, 1, 1, 1, 0, 0]] * 4, dtype=torch.bool)
    stats = torch.randn(4, 6) * 0.1 + 0.5  # small spread around an offset, as in log-mel statistics
    head(hidden, audio_mask, ~audio_mask, stats)  # a training step: batch statistics, running ones updated
    assert torch.allclose(head.mel_norm.running_mean, 0.1 * stats.mean(0))
    standardised = head._standardise(stats)  # grad enabled, training, 4 clips: the batch's own statistics
    assert torch.allclose(standardised.mean(0), torch.zeros(6), atol=1e-5)
    assert torch.allclose(standardised.std(0, unbiased=False), torch.ones(6), atol=1e-2)
    with torch.no_grad():  # scoring: running statistics, whatever the batch
        together = head(hidden, audio_mask, ~audio_mask, stats)[0]
        alone = torch.cat([head(hidden[i:i + 1], audio_mask[i:i + 1], ~audio_mask[i:i + 1], stats[i:i + 1])[0]
                           for i in range(4)])
    assert torch.allclose(together, alone, atol=1e-5)
    one = head(hidden[:1], audio_mask[:1], ~audio_mask[:1], stats[:1])  # one clip in a training step: no error
    assert one[0].shape == (1, 2, 3)


def test_standardised_head_round_trips_and_a_folder_without_the_key_loads_unscaled(tmp_path):
    backbone = AudioLLM.tiny("qwen2_5_omni", seed=0)
    head = InstructionJudge.new_head(backbone, VALUES, width=16, seed=0, read_mel_statistics=True,
                                     standardise_mel=True)
    head.mel_norm.running_mean.fill_(0.3)  # as after training: the running statistics are saved and read back
    judge = InstructionJudge(backbone, head, name="tiny-standardised")
    folder = judge.save_pretrained(tmp_path / "judge")
    cfg = json.loads((folder / "judge_config.json").read_text())
    assert cfg["head"]["mel_standardised"] is True
    loaded = load_judge(folder)
    assert loaded.head.mel_norm is not None and torch.allclose(loaded.head.mel_norm.running_mean,
                                                               torch.full_like(loaded.head.mel_norm.running_mean, 0.3))
    inputs = [{"wave": _wave(1.0, 0.1), "instruction": "Speak loudly.", "lang": "en"}]
    assert abs(judge.score(inputs)[0]["p_true_dimensions"] - loaded.score(inputs)[0]["p_true_dimensions"]) < 1e-6
    # a folder saved before the option existed (no key, no batch-norm tensors) loads as it was saved
    plain = InstructionJudge(backbone, InstructionJudge.new_head(backbone, VALUES, width=16, seed=0,
                                                                 read_mel_statistics=True), name="tiny-old")
    old = plain.save_pretrained(tmp_path / "old")
    cfg = json.loads((old / "judge_config.json").read_text())
    del cfg["head"]["mel_standardised"]
    (old / "judge_config.json").write_text(json.dumps(cfg))
    assert load_judge(old).head.mel_norm is None


def test_mel_only_dimensions_ignore_the_llm_states_and_the_others_read_them():
    torch.manual_seed(0)
    head = AttributeHead(16, VALUES, width=8, mel_bins=3, mel_only=("volume",))
    audio_mask = torch.tensor([[0, 1, 1, 1, 0, 0]] * 2, dtype=torch.bool)
    stats = torch.randn(2, 6)
    a1, _ = head(torch.randn(2, 6, 16), audio_mask, ~audio_mask, stats)
    a2, _ = head(torch.randn(2, 6, 16), audio_mask, ~audio_mask, stats)
    k_vol, k_gen = head.dims.index("volume"), head.dims.index("gender")
    assert torch.allclose(a1[:, k_vol], a2[:, k_vol])          # volume: the statistics alone
    assert not torch.allclose(a1[:, k_gen], a2[:, k_gen])      # gender: the states too
    a3, _ = head(torch.randn(2, 6, 16), audio_mask, ~audio_mask, stats + 1.0)
    assert not torch.allclose(a1[:, k_vol], a3[:, k_vol])      # and the statistics do move volume
    with pytest.raises(ValueError, match="needs the log-mel statistics"):
        AttributeHead(16, VALUES, width=8, mel_only=("volume",))
    with pytest.raises(ValueError, match="unknown dimensions"):
        AttributeHead(16, VALUES, width=8, mel_bins=3, mel_only=("pich",))


def test_mel_only_round_trips_and_older_folders_read_the_states(tmp_path):
    backbone = AudioLLM.tiny("qwen2_5_omni", seed=0)
    head = InstructionJudge.new_head(backbone, VALUES, width=16, seed=0, read_mel_statistics=True,
                                     mel_only=("volume",))
    judge = InstructionJudge(backbone, head, name="tiny-mel-only")
    folder = judge.save_pretrained(tmp_path / "judge")
    cfg = json.loads((folder / "judge_config.json").read_text())
    assert cfg["head"]["mel_only"] == ["volume"]
    loaded = load_judge(folder)
    assert loaded.head.mel_only == ("volume",)
    inputs = [{"wave": _wave(1.0, 0.1), "instruction": "Speak loudly.", "lang": "en"}]
    assert abs(judge.score(inputs)[0]["p_true_dimensions"] - loaded.score(inputs)[0]["p_true_dimensions"]) < 1e-6
    del cfg["head"]["mel_only"]
    (folder / "judge_config.json").write_text(json.dumps(cfg))
    assert load_judge(folder).head.mel_only == ()


def test_mel_only_setting_is_checked_at_config_load():
    from evaluators.config_input import FieldError
    from trainer.benchmarks.instructttseval.settings import InstructFollowSettings

    assert InstructFollowSettings(mel_statistics=True, mel_only=["pitch", "volume"]).mel_only == ["pitch", "volume"]
    with pytest.raises(FieldError, match="mel_statistics"):
        InstructFollowSettings(mel_only=["pitch"])
    with pytest.raises(FieldError, match="unknown dimensions"):
        InstructFollowSettings(mel_statistics=True, mel_only=["pich"])
