"""Judges on checkpoints in the real hub layouts with the real Qwen vocabulary, against the stock
processors: identical input ids, identical features, the same label probabilities; the released
Auto-ATT's public inference loop replayed; backbone detection before loading."""

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, Qwen2_5OmniProcessor, Qwen2AudioProcessor, WhisperFeatureExtractor
from transformers.image_processing_utils import ImageProcessingMixin
from transformers.processing_utils import ProcessorMixin

from evaluators.backbones import AudioLLM, BackboneMismatchError, detect_backbone
from evaluators.backbones.chat_prompt import conversation
from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.judges.label_words import LabelTokenWarning, first_token_ids
from evaluators.judges.preset import JudgePreset
from evaluators.judges.verbalizer import VerbalizerJudge

#: Good, Fair, Bad on the real Qwen vocabulary, as the released Auto-ATT's inference code reads them.
RELEASED_IDS = [15216, 60795, 17082]
CLIP_SECONDS = (1.0, 2.37, 5.02 + 1 / 16000, 29.9, 31.0)
PROMPT = "Listen to the speech clip. Answer with one word: Good, Fair or Bad."


def last_logits(llm, examples: list[dict], ids: torch.Tensor) -> torch.Tensor:
    """(B, n) LM-head logits of ``ids`` at each example's last prompt position (what a verbalizer reads)."""
    return llm.token_logits(llm.last_hidden_state(**llm.collate(examples))[:, -1, :], ids)


def _wave(seconds: float, seed: int = 0) -> np.ndarray:
    n = int(round(seconds * 16000))
    t = np.arange(n) / 16000
    rng = np.random.default_rng(seed)
    return (0.3 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t)) + 0.02 * rng.standard_normal(n)
            ).astype(np.float32)


def stock_processor(folder, backbone: str, monkeypatch):
    """The processor ``AutoProcessor`` would build. The Omni processor's image and video
    processors need torchvision, which stays out of the environment: audio-only inputs never call
    them, so stubs stand in and the class check is skipped for those two arguments only."""
    tok = AutoTokenizer.from_pretrained(folder)
    fe = WhisperFeatureExtractor.from_pretrained(folder)
    if backbone == "qwen2_audio":
        return Qwen2AudioProcessor(feature_extractor=fe, tokenizer=tok, chat_template=tok.chat_template)

    class StubImageProcessor(ImageProcessingMixin):
        pass

    check = ProcessorMixin.check_argument_for_proper_class
    monkeypatch.setattr(Qwen2_5OmniProcessor, "check_argument_for_proper_class",
                        lambda self, name, arg: None if name in ("image_processor", "video_processor")
                        else check(self, name, arg))
    template = json.loads((folder / "chat_template.json").read_text())["chat_template"]
    return Qwen2_5OmniProcessor(image_processor=StubImageProcessor(), video_processor=object(), feature_extractor=fe,
                                tokenizer=tok, chat_template=template)


def test_real_vocabulary_golden_ids(stand_in):
    llm_tok = AutoTokenizer.from_pretrained(stand_in("qwen2_audio"))
    assert [llm_tok(w, add_special_tokens=False)["input_ids"] for w in ("Good", "Fair", "Bad")] == [[i] for i in
                                                                                                    RELEASED_IDS]
    ids = llm_tok.convert_tokens_to_ids
    assert (ids("<|endoftext|>"), ids("<|im_start|>"), ids("<|im_end|>"), ids("<|AUDIO|>"), ids("<|audio_bos|>"),
            ids("<|audio_eos|>"), ids("user")) == (151643, 151644, 151645, 151646, 151647, 151648, 872)


@pytest.mark.parametrize("backbone", ["qwen2_audio", "qwen2_5_omni"])
def test_inputs_and_probabilities_match_the_stock_processor(stand_in, backbone, monkeypatch):
    folder = stand_in(backbone)
    llm = AudioLLM.from_pretrained(folder)
    assert llm.spec.name == backbone
    proc = stock_processor(folder, backbone, monkeypatch)
    ids = torch.tensor(RELEASED_IDS)
    expected_tokens = {1.0: 25, 2.37: 59, 31.0: 750 if backbone == "qwen2_audio" else 775}
    for seconds in CLIP_SECONDS:
        wave = _wave(seconds)
        text = proc.apply_chat_template(conversation(llm.spec.system_prompt, "", PROMPT), add_generation_prompt=True,
                                        tokenize=False)
        stock = proc(text=text, audio=[wave], sampling_rate=16000, return_tensors="pt", padding=True)
        ours = llm.prepare(wave, PROMPT)
        assert ours["input_ids"].tolist() == stock["input_ids"][0].tolist(), seconds
        n_audio = int((stock["input_ids"][0] == 151646).sum())
        assert n_audio == expected_tokens.get(seconds, n_audio)
        if seconds == CLIP_SECONDS[2]:
            assert n_audio == 126  # ceil: 80321 samples are 503 frames, not 502
        assert ours["n_frames"] == int(stock["feature_attention_mask"].sum())
        width = ours["input_features"].shape[1]
        np.testing.assert_allclose(ours["input_features"], stock["input_features"][0, :, :width].numpy(), atol=1e-5)
        with torch.no_grad():
            p_stock = torch.softmax(llm.model(**stock).logits[0, -1, ids].double(), -1)
            p_ours = torch.softmax(last_logits(llm, [ours], ids)[0].double(), -1)
        assert torch.max(torch.abs(p_stock - p_ours)).item() <= 1e-5, seconds


def test_qwen2_audio_prompt_has_the_audio_number_and_newline(stand_in):
    llm = AudioLLM.from_pretrained(stand_in("qwen2_audio"))
    prompt = llm.prompt("Rate it.")
    assert prompt.before.endswith("<|im_start|>user\nAudio 1: <|audio_bos|>")
    assert prompt.after == "<|audio_eos|>\nRate it.<|im_end|>\n<|im_start|>assistant\n"


def test_released_auto_att_replays_the_public_inference_loop(stand_in, monkeypatch):
    """The public loop: apply_chat_template, processor with padding, generate(max_new_tokens=1),
    softmax over the Good/Fair/Bad ids of the first generated position, 3/2/1."""
    folder = stand_in("qwen2_audio")
    judge = VerbalizerJudge.from_preset("auto-att-released", base=str(folder))
    assert judge.backbone.spec.name == "qwen2_audio" and judge.preset.prompt == RELEASED_PROMPT
    proc = stock_processor(folder, "qwen2_audio", monkeypatch)
    model = judge.backbone.model
    waves = [_wave(s, seed=i) for i, s in enumerate((1.3, 4.0, 7.7))]
    ours = [o["score"] for o in judge.score([{"wave": w} for w in waves], batch_size=3)]
    for wave, score in zip(waves, ours):
        chat = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": [{"type": "audio", "audio_url": "clip.wav"},
                                             {"type": "text", "text": RELEASED_PROMPT}]}]
        text = proc.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        inputs = proc(text=text, audio=wave, sampling_rate=16000, return_tensors="pt", padding=True)
        out = model.generate(**inputs, max_new_tokens=1, do_sample=False, output_logits=True,
                             return_dict_in_generate=True)
        probs = torch.softmax(torch.gather(out.logits[0][0], -1, torch.tensor(RELEASED_IDS)), -1)
        hls = float(torch.sum(probs * torch.tensor([3.0, 2.0, 1.0])))
        assert score == pytest.approx(hls, abs=1e-6)


def test_backbone_comes_from_config_and_a_mismatch_is_refused_before_loading(stand_in, monkeypatch):
    omni, audio = stand_in("qwen2_5_omni"), stand_in("qwen2_audio")
    assert detect_backbone(omni) == "qwen2_5_omni" and detect_backbone(audio) == "qwen2_audio"
    from evaluators.backbones import BACKBONES

    def never(*a, **k):
        raise AssertionError("weights were loaded")

    for spec in BACKBONES.values():
        monkeypatch.setattr(spec.model_class, "from_pretrained", never)
    with pytest.raises(BackboneMismatchError, match="qwen2_audio.*--backbone"):
        AudioLLM.from_pretrained(audio, backbone="qwen2_5_omni")
    with pytest.raises(BackboneMismatchError, match="qwen2_audio"):
        VerbalizerJudge.from_preset("auto-att-released", base=str(omni))


def test_training_on_flash_attention_that_cannot_run_is_one_line(stand_in, monkeypatch):
    """``train --set backbone.attn_implementation=flash_attention_2`` on a real checkpoint where
    flash-attn cannot run: transformers' ImportError came out of the load as a traceback, exit 1."""
    import transformers.utils

    from trainer.config import load_config
    from trainer.lora import load_backbone

    monkeypatch.setattr(transformers.utils, "is_flash_attn_2_available", lambda: False)
    cfg = load_config(Path(__file__).resolve().parents[1] / "configs/att/tiny.yaml", {"backbone.source": str(stand_in("qwen2_5_omni")),
                                                       "backbone.attn_implementation": "flash_attention_2"})
    with pytest.raises(ValueError, match="backbone.attn_implementation flash_attention_2: flash-attn"):
        load_backbone(cfg)

def test_multi_token_labels_warn_once_and_collisions_are_refused(stand_in):
    tok = AutoTokenizer.from_pretrained(stand_in("qwen2_5_omni"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ids = first_token_ids(tok, ("Human", "Unclear", "Machine"))
    label_warnings = [w for w in caught if issubclass(w.category, LabelTokenWarning)]
    assert len(label_warnings) == 1 and "'Unclear' = 'Unc' + 'lear'" in str(label_warnings[0].message)
    assert ids[1] == tok.convert_tokens_to_ids("Unc")
    with pytest.raises(ValueError, match="share a first token"):
        first_token_ids(tok, ("Unclear", "Uncertain"))


def test_judge_folder_records_label_token_ids_and_refuses_another_tokenizer(stand_in, tmp_path):
    preset = JudgePreset(name="hub-test", labels=("Good", "Fair", "Bad"), values=(3.0, 2.0, 1.0), prompt=PROMPT)
    judge = VerbalizerJudge.from_preset(preset, base=str(stand_in("qwen2_5_omni")))
    judge.save_pretrained(tmp_path / "j")
    cfg = json.loads((tmp_path / "j" / "judge_config.json").read_text())
    assert cfg["label_token_ids"] == {"Good": [15216], "Fair": [60795], "Bad": [17082]}
    # the template the judge was saved with travels with it and renders its prompts
    assert (tmp_path / "j" / "chat_template.jinja").read_text() == judge.backbone.chat_template
    assert cfg["chat_template_source"].endswith("chat_template.json")
    again = VerbalizerJudge.from_pretrained(tmp_path / "j")
    wave = _wave(2.0)
    assert again.score([{"wave": wave}])[0]["score"] == pytest.approx(judge.score([{"wave": wave}])[0]["score"], abs=1e-6)
    assert again.backbone.template_source.endswith("chat_template.jinja")
    cfg["label_token_ids"]["Good"] = [1]
    (tmp_path / "j" / "judge_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="encodes label words differently"):
        VerbalizerJudge.from_pretrained(tmp_path / "j")


def test_score_cli_takes_presets_on_hub_checkpoints_with_no_other_flag(stand_in, tmp_path, capsys):
    import soundfile as sf

    from evaluators.cli import main

    audio = tmp_path / "audio"
    audio.mkdir()
    for i, s in enumerate((1.2, 2.5)):
        sf.write(audio / f"clip{i}.wav", _wave(s, seed=i), 16000)
    assert main(["score", "audio", "--judge", "auto-att-released", "--base", str(stand_in("qwen2_audio")),
                 "--audio", str(audio), "--out", str(tmp_path / "released.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "released.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(1.0 <= r["score"] <= 3.0 for r in rows)
    assert rows[0]["dtype"] == "float32" and rows[0]["device"] == "cpu"
    assert main(["score", "audio", "--judge", "auto-att", "--base", str(stand_in("qwen2_5_omni")),
                 "--audio", str(audio), "--out", str(tmp_path / "omni.jsonl")]) == 0
    capsys.readouterr()
    assert main(["score", "audio", "--judge", "auto-att-released", "--base", str(stand_in("qwen2_5_omni")),
                 "--audio", str(audio), "--out", str(tmp_path / "refused.jsonl")]) == 2
    assert re.search("qwen2_5_omni.*qwen2_audio|qwen2_audio.*qwen2_5_omni", capsys.readouterr().err)
    assert main(["score", "audio", "--judge", "auto-att", "--backbone", "qwen2_5_omni", "--base", str(stand_in("qwen2_audio")),
                 "--audio", str(audio), "--out", str(tmp_path / "refused2.jsonl")]) == 2
    assert "drop --backbone" in capsys.readouterr().err
    assert not (tmp_path / "refused.jsonl").exists()


def test_tiny_backbone_with_the_real_vocabulary_rebuilds_exactly(tmp_path):
    """``backbone.source: tiny-qwen-vocab``: the tiny random model over the real Qwen vocabulary
    (words are single tokens); its judge folder's ``base/`` is the same model."""
    llm = AudioLLM.tiny("qwen2_5_omni", seed=3, vocab="qwen")
    assert llm.tiny_vocab == "qwen" and llm.source.endswith(":qwen-vocab")
    assert [llm.tokenizer(w, add_special_tokens=False)["input_ids"] for w in ("Good", "Fair", "Bad")] == \
        [[i] for i in RELEASED_IDS]
    assert llm.tokenizer.convert_tokens_to_ids("<|AUDIO|>") == llm.audio_token_id == 151646
    judge = VerbalizerJudge(llm, JudgePreset(name="p", labels=("Good", "Bad"), values=(1.0, 0.0), prompt=PROMPT))
    folder = judge.save_pretrained(tmp_path / "judge")
    again = VerbalizerJudge.from_pretrained(folder)
    assert again.backbone.tokenizer.convert_tokens_to_ids("Good") == RELEASED_IDS[0]
    wave = _wave(1.5)
    assert again.score([{"wave": wave}])[0]["probs"] == pytest.approx(judge.score([{"wave": wave}])[0]["probs"], abs=1e-6)
    with pytest.raises(ValueError, match="tiny vocabulary"):
        AudioLLM.tiny("qwen2_5_omni", vocab="words")
