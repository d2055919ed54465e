"""Backbone registry, offline tokenizer, VerbalizerJudge maths and batch-size invariance."""

import numpy as np
import pytest
import torch
from conftest import speechlike

from evaluators.backbones import BACKBONES, AudioLLM, audio_token_count
from evaluators.judges.presets import PRESETS, JudgePreset, get_preset
from evaluators.backbones.tiny_tokenizer import SINGLE_TOKEN_WORDS, build_tiny_tokenizer
from evaluators.judges.verbalizer import VerbalizerJudge, label_token_ids


def test_every_preset_label_is_one_tiny_token():
    tok = build_tiny_tokenizer()
    for preset in PRESETS.values():
        for word in preset.labels:
            assert len(tok(word, add_special_tokens=False)["input_ids"]) == 1, (preset.name, word)
    assert {"Human", "Unclear", "Machine", "Good", "Fair", "Bad"} <= set(SINGLE_TOKEN_WORDS)


def test_audio_token_count_is_25_per_second():
    assert audio_token_count(200) == 50   # 2 s
    assert audio_token_count(3000) == 750  # 30 s


@pytest.mark.parametrize("name", ["qwen2_5_omni", "qwen2_audio", "qwen3_omni"])
def test_features_under_a_training_loops_cpu_autocast(name):
    """``train --set hardware.precision=bf16-mixed`` runs validation under CPU bfloat16 autocast: the
    Whisper extractor's torch STFT came out bfloat16 and ``.numpy()`` crashed (``Got unsupported
    ScalarType BFloat16``); the features are the float32 ones outside it."""
    llm = AudioLLM.tiny(name)
    wave = speechlike(0.7)
    want, n = llm.features(wave)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, m = llm.features(wave)
    assert got.dtype == np.float32 and m == n and np.array_equal(got, want)


@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_every_backbone_builds_tiny_and_runs(name, tmp_path):
    llm = AudioLLM.tiny(name)
    assert isinstance(llm.model, BACKBONES[name].model_class)
    ex = llm.prepare(speechlike(1.5), "Is this human?")
    n_audio = int((torch.as_tensor(ex["input_ids"]) == llm.tokenizer.convert_tokens_to_ids(llm.audio_token)).sum())
    # 1.5 s = 150 frames: 25 tokens per second (Qwen2-Audio, Qwen2.5-Omni), 13 + 7 on Qwen3-Omni
    assert n_audio == llm.audio_token_count(150) == {"qwen3_omni": 20}.get(name, audio_token_count(150))
    with torch.no_grad():
        out = llm(**llm.collate([ex]))
    assert out.logits.shape[-1] == llm.model.config.get_text_config().vocab_size
    llm.save_pretrained(tmp_path / name)
    again = AudioLLM.from_pretrained(tmp_path / name)  # backbone read from the folder, offline
    with torch.no_grad():
        assert torch.allclose(again(**again.collate([ex])).logits, out.logits, atol=1e-6)


def test_expected_score_golden(tiny_omni):
    judge = VerbalizerJudge(tiny_omni, get_preset("auto-att"))
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.2]]))
    # 0.5 * 1 + 0.3 * 0.5 + 0.2 * 0 = 0.65
    assert judge.expected_score(logits).item() == pytest.approx(0.65, abs=1e-6)
    released = VerbalizerJudge(tiny_omni, get_preset("auto-att-released"))
    # Good 3 / Fair 2 / Bad 1: 0.5 * 3 + 0.3 * 2 + 0.2 * 1 = 2.3
    assert released.expected_score(logits).item() == pytest.approx(2.3, abs=1e-6)


def test_score_matches_manual_softmax_at_last_position(tiny_omni):
    judge = VerbalizerJudge(tiny_omni, get_preset("auto-att"))
    wave = speechlike(1.2, seed=3)
    out = judge.score([{"wave": wave}])[0]
    batch = tiny_omni.collate([judge.prepare(wave)])
    with torch.no_grad():
        logits = tiny_omni(**batch).logits[0, -1]
    ids = label_token_ids(tiny_omni.tokenizer, ("Human", "Unclear", "Machine"))
    p = torch.softmax(logits[ids].double(), -1).numpy()
    assert out["score"] == pytest.approx(p[0] + 0.5 * p[1], abs=1e-6)
    assert sum(out["probs"].values()) == pytest.approx(1.0, abs=1e-9)
    # the read position is the "\n" that ends the assistant header
    assert tiny_omni.tokenizer.decode(batch["input_ids"][0, -1:]) == "\n"


def test_scores_do_not_depend_on_batch_size(tiny_omni):
    judge = VerbalizerJudge(tiny_omni, get_preset("auto-att"))
    waves = [speechlike(0.5 + 0.23 * i, seed=i) for i in range(16)]
    inputs = [{"wave": w} for w in waves]
    one = np.array([judge.score([x], batch_size=1)[0]["score"] for x in inputs])
    sixteen = np.array([o["score"] for o in judge.score(inputs, batch_size=16)])
    four = np.array([o["score"] for o in judge.score(inputs[::-1], batch_size=4)])[::-1]
    assert np.max(np.abs(one - sixteen)) <= 1e-5
    assert np.max(np.abs(one - four)) <= 1e-5


def test_long_clip_policies(tiny_omni):
    from evaluators.audio_io import LongClipWarning

    long = np.concatenate([speechlike(2.0, seed=1), speechlike(1.0, seed=2)])
    trunc = VerbalizerJudge(tiny_omni, get_preset("auto-att"), long_clip_policy="truncate", max_seconds=2.0)
    with pytest.warns(LongClipWarning):
        t = trunc.score([{"wave": long}])[0]
    assert t["score"] == pytest.approx(trunc.score([{"wave": long[:32000]}])[0]["score"], abs=1e-6)
    win = VerbalizerJudge(tiny_omni, get_preset("auto-att"), long_clip_policy="windows", max_seconds=2.0)
    w = win.score([{"wave": long}])[0]
    a, b = win.score([{"wave": long[:32000]}, {"wave": long[32000:]}])
    assert w["score"] == pytest.approx((2 * a["score"] + 1 * b["score"]) / 3, abs=1e-6)


def test_prompt_fields_and_preset_validation(tiny_omni):
    judge = VerbalizerJudge(tiny_omni, get_preset("style"))
    assert "storytelling" in judge.user_text({"style": "storytelling"})[1]
    with pytest.raises(ValueError, match="style"):
        judge.user_text({})
    # the InstructTTSEval drop-in reads ' true' / ' false': one token each on the real Qwen vocabulary,
    # the same first byte on the tiny byte-level one, so it is refused there instead of misread
    with pytest.raises(ValueError, match="share a first token"):
        VerbalizerJudge(tiny_omni, get_preset("instruct-follow"))
    with pytest.raises(ValueError):
        JudgePreset(name="bad", labels=("a", "b"), values=(1.0,), prompt="x")
    with pytest.raises(KeyError, match="known"):
        get_preset("nope")
