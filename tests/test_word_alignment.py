"""Word timestamps -> one span per transcript word, the aligned head's span arithmetic (golden values),
the Whisper aligner (on a tiny random Whisper) and how its errors reach the benchmark scorers' rows."""

import json

import numpy as np
import pytest
import soundfile as sf
import torch

from evaluators.word_alignment import AlignerSetupError, WhisperAligner, transcript_word_times
from evaluators.judges.slot_head import WordHead, WordHeadConfig, span_token_ranges


def test_exact_match_is_copied():
    timed = [("Hello,", 0.0, 0.5), ("world.", 0.6, 1.0)]
    assert transcript_word_times(timed, ["hello", "World"]) == [[0.0, 0.5], [0.6, 1.0]]


def test_missed_word_is_interpolated_between_neighbours():
    timed = [("the", 0.0, 0.2), ("cat", 0.5, 0.8)]
    assert transcript_word_times(timed, ["the", "big", "cat"]) == [[0.0, 0.2], [0.2, 0.5], [0.5, 0.8]]


def test_missed_last_word_runs_to_the_clip_end():
    timed = [("a", 0.0, 0.2), ("b", 0.2, 0.4)]
    out = transcript_word_times(timed, ["a", "b", "c", "d"], duration_s=1.0)
    assert out[2] == [0.4, pytest.approx(0.7)] and out[3] == [pytest.approx(0.7), 1.0]


def test_chinese_chunks_split_into_characters():
    timed = [("今天", 0.0, 0.4), ("很好。", 0.5, 0.9)]
    out = transcript_word_times(timed, ["今天", "很", "好"])
    assert out[0] == [0.0, 0.4]
    assert out[1] == pytest.approx([0.5, 0.7]) and out[2] == pytest.approx([0.7, 0.9])


def test_nothing_recognised_spreads_words_evenly():
    assert transcript_word_times([("zzz", 0.0, 1.0)], ["a", "b"]) == [[0.0, 0.5], [0.5, 1.0]]
    assert transcript_word_times([], ["a", "b"], duration_s=2.0) == [[0.0, 1.0], [1.0, 2.0]]
    with pytest.raises(ValueError, match="no recognised words"):
        transcript_word_times([], ["a"])


def test_punctuation_only_word_gets_a_zero_length_span():
    out = transcript_word_times([("hi", 0.0, 0.3), ("there", 0.4, 0.8)], ["hi", "—", "there"])
    assert out == [[0.0, 0.3], [0.3, 0.3], [0.4, 0.8]]


def test_span_token_ranges_golden():
    # 25 tokens/s: [0, 0.1] s -> tokens 0..2 (ceil 2.5 = 3); a zero-length span at 0.1 s -> token 2;
    # a span past the clip end is clipped to the last token.
    out = span_token_ranges([[0.0, 0.1], [0.1, 0.1], [0.5, 9.0]], n_audio_tokens=20)
    assert out.tolist() == [[0, 3], [2, 3], [12, 20]]
    with pytest.raises(ValueError, match="end >= start"):
        span_token_ranges([[0.5, 0.4]], 10)


def test_span_fields_follow_the_backbones_own_audio_token_rate():
    from evaluators.backbones.specs import get_backbone_spec
    from evaluators.judges.slot_head import span_example_fields

    # Qwen3-Omni: 13 audio tokens per second; a 2 s clip (200 mel frames) holds 26, after 3 text tokens.
    # [1.0, 1.5] s -> tokens floor(13.0) = 13 .. ceil(19.5) = 20, shifted by the 3 tokens before the audio.
    count = get_backbone_spec("qwen3_omni").audio_tokens
    assert count(200) == 26
    ids = [1, 2, 3] + [9] * 26 + [4]
    fields = span_example_fields([[1.0, 1.5]], 200, ids, 9, count)
    assert fields["span_tokens"].tolist() == [[16, 23]] and fields["audio_range"].tolist() == [3, 29]
    # the same span on Qwen2.5-Omni (25 per second, 50 tokens): 25 .. ceil(37.5) = 38
    ids = [1, 2, 3] + [9] * 50 + [4]
    assert span_example_fields([[1.0, 1.5]], 200, ids, 9)["span_tokens"].tolist() == [[28, 41]]


def test_aligned_head_pools_only_the_words_span():
    torch.manual_seed(0)
    head = WordHead(8, WordHeadConfig(n_outputs=1, mode="aligned", width=16, mixer_layers=0)).eval()
    hidden = torch.randn(1, 12, 8)
    batch = {"slot_index": torch.tensor([[10, 11]]), "slot_mask": torch.tensor([[True, True]]),
             "span_tokens": torch.tensor([[[2, 4], [4, 8]]]), "span_seconds": torch.tensor([[0.1, 0.2]]),
             "audio_range": torch.tensor([[2, 8]])}
    base = head(hidden, batch)
    moved = hidden.clone()
    moved[0, 0:2] += 5.0  # outside the audio: no effect
    assert torch.allclose(head(moved, batch), base)
    moved = hidden.clone()
    moved[0, 5] += 5.0  # inside word 2's span only: word 1 changes through the clip mean, word 2 directly
    changed = (head(moved, batch) - base).abs()[0, :, 0]
    assert changed[1] > 1e-4


def test_head_config_is_validated():
    with pytest.raises(ValueError, match="mode"):
        WordHeadConfig(mode="attention")
    with pytest.raises(ValueError, match="width"):
        WordHeadConfig(width=10)


# --- WhisperAligner on a tiny random Whisper (CPU, offline, built per module) ----------------------

def _tiny_whisper(folder, alignment_heads=True):
    """A random 1-layer Whisper saved with a byte-level tokenizer and a feature extractor: enough for
    the transformers ASR pipeline to load it and decode word timestamps (gibberish text)."""
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import (GenerationConfig, WhisperConfig, WhisperFeatureExtractor,
                              WhisperForConditionalGeneration, WhisperTokenizer)

    specials = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|zh|>", "<|translate|>", "<|transcribe|>",
                "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>", "<|notimestamps|>"]
    stamps = [f"<|{i * 0.02:.2f}|>" for i in range(1501)]  # timestamp ids follow <|notimestamps|>
    vocab = {t: i for i, t in enumerate(sorted(ByteLevel.alphabet()) + specials + stamps)}
    tok = WhisperTokenizer(vocab=vocab, merges=[])
    tok.add_special_tokens({"additional_special_tokens": specials + stamps})
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftranscript|>"]
    cfg = WhisperConfig(vocab_size=len(vocab), num_mel_bins=80, d_model=16, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                        max_target_positions=64, decoder_start_token_id=sot, pad_token_id=eot, bos_token_id=eot,
                        eos_token_id=eot, begin_suppress_tokens=None, suppress_tokens=None)
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(cfg).eval()
    # A fresh GenerationConfig: one derived from the model config drops the Whisper keys on reload.
    gen = dict(bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, decoder_start_token_id=sot, max_length=20,
               no_timestamps_token_id=vocab["<|notimestamps|>"], is_multilingual=True,
               lang_to_id={t: vocab[t] for t in ("<|en|>", "<|zh|>")},
               task_to_id={"transcribe": vocab["<|transcribe|>"], "translate": vocab["<|translate|>"]})
    if alignment_heads:
        gen["alignment_heads"] = [[0, 0], [0, 1]]
    model.generation_config = GenerationConfig(**gen)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    WhisperFeatureExtractor(feature_size=80).save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory):
    return _tiny_whisper(tmp_path_factory.mktemp("tiny_whisper"))


@pytest.fixture(scope="module")
def aligner(tiny_whisper):
    return WhisperAligner(tiny_whisper)


def _noise(seconds, seed=0):
    return (0.1 * np.random.default_rng(seed).standard_normal(int(seconds * 16000))).astype(np.float32)


def test_whisper_timestamps_are_clipped_to_the_clip(aligner, monkeypatch):
    # the real pipeline decodes a padded 30 s window: a random model can put words past a 1 s clip
    timed = aligner.word_timestamps(_noise(1.0))
    assert timed and all(0.0 <= a <= b <= 1.0 for _, a, b in timed), timed
    chunks = [{"text": "a", "timestamp": (-0.3, 0.2)}, {"text": "b", "timestamp": (None, 0.5)},
              {"text": "c", "timestamp": (0.4, None)}, {"text": "d", "timestamp": (0.9, 3.0)},
              {"text": "e", "timestamp": (2.0, 2.5)}, {"text": "f", "timestamp": (0.7, 0.6)}]
    monkeypatch.setattr(aligner.runner, "_pipe", lambda *a, **k: {"chunks": chunks})
    assert aligner.word_timestamps(_noise(1.0)) == [("a", 0.0, 0.2), ("b", 0.2, 0.5), ("c", 0.4, 1.0),
                                                    ("d", 0.9, 1.0), ("e", 1.0, 1.0), ("f", 0.7, 0.7)]


def test_model_without_alignment_heads_fails_at_construction(tmp_path):
    folder = _tiny_whisper(tmp_path / "no_heads", alignment_heads=False)
    with pytest.raises(AlignerSetupError, match="generation_config.json has no alignment_heads") as e:
        WhisperAligner(folder)
    assert folder in str(e.value) and isinstance(e.value, ValueError)


def test_language_is_passed_to_generate(tiny_whisper, aligner, monkeypatch):
    zh = WhisperAligner(tiny_whisper, language="zh")
    assert zh.runner.pipeline().model is aligner.runner.pipeline().model  # one model per process
    calls = []
    for a in (zh, aligner):
        monkeypatch.setattr(a.runner, "_pipe", lambda *x, **k: calls.append(k) or {"chunks": []})
        a.word_timestamps(_noise(0.5))
    assert calls[0]["generate_kwargs"] == {"language": "zh", "task": "transcribe"}
    assert "generate_kwargs" not in calls[1]  # no language: the model detects it
    timed = WhisperAligner(tiny_whisper, language="en").word_timestamps(_noise(1.0))  # generate accepts it
    assert all(0.0 <= a <= b <= 1.0 for _, a, b in timed)
    with pytest.raises(AlignerSetupError, match="does not know language 'fr'"):
        WhisperAligner(tiny_whisper, language="fr")


def test_bad_clip_is_the_items_fault_a_failing_pipeline_is_setup(aligner, monkeypatch):
    for wave in (np.zeros(0, np.float32), np.zeros(100, np.float32), np.full(16000, np.nan, np.float32)):
        with pytest.raises(ValueError) as e:
            aligner.word_timestamps(wave)
        assert not isinstance(e.value, AlignerSetupError)

    def broken(*a, **k):
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(aligner.runner, "_pipe", broken)
    with pytest.raises(AlignerSetupError, match="CUDA out of memory"):
        aligner.word_timestamps(_noise(1.0))


def test_a_clip_is_aligned_once_per_run_whichever_pass_asks(tiny_whisper, tmp_path, monkeypatch):
    """score nvv's passes (verifier, aligned raters) share the run's decode cache: the second pass
    reads every clip's word times from it, identical, and decodes nothing."""
    from evaluators.benchmarks.nvv.scorer import NvvModels, _cache_decodes, verify_outputs
    from evaluators.item_audio import read_item_audio

    items, outputs = _nvv_setup(tmp_path, ["a", "b", "c"])
    aligner = WhisperAligner(tiny_whisper, language="en")
    waves = [read_item_audio(o.path)[0] for o in outputs]
    uncached = [aligner.word_timestamps(w) for w in waves]
    decoded = []
    pipe = aligner.runner.pipeline()
    monkeypatch.setattr(aligner.runner, "_pipe", lambda x, **k: decoded.append(1) or pipe(x, **k))
    (cache,) = _cache_decodes(NvvModels(aligner=aligner), tmp_path / "run" / "whisper_cache")
    passes = []
    for name in ("verifier", "rater"):
        verifier = _FakeVerifier()
        verify_outputs(verifier, items, outputs, tmp_path / "run" / name, aligner)
        passes.append(verifier.inputs)
    assert len(decoded) == 3 and (cache.hits, cache.misses) == (3, 3)
    assert [x["unit_times"] for x in passes[0]] == [x["unit_times"] for x in passes[1]]
    # a cached clip's words are the uncached decode's, exactly; another language is another decode
    assert [aligner.word_timestamps(w) for w in waves] == uncached and len(decoded) == 3
    other = WhisperAligner(tiny_whisper, language="zh")
    other.use_cache(tmp_path / "run" / "whisper_cache")
    other.word_timestamps(waves[0])
    assert other.runner.cache.misses == 1 and len(list((tmp_path / "run" / "whisper_cache").rglob("*.json"))) == 4


# --- error rows: setup errors stop the run; setup-kind rows are redone on rerun -------------------

class _FakeVerifier:
    def __init__(self):
        self.scored, self.inputs = [], []

    def provenance(self):
        return {"judge": "fake"}

    def prepare_input(self, x):
        return x

    def score_examples(self, inputs, batch_size=8):
        self.scored += [x["text"] for x in inputs]
        self.inputs += inputs
        return [{"present": True, "text_with_mark": x["text"], "hallucinated_events": [], "p_present": 0.9}
                for x in inputs]


class _FakeAligner:
    def __init__(self, error=None):
        self.error = error

    def word_timestamps(self, wave):
        if self.error:
            raise self.error
        return [("hello", 0.0, 0.3), ("world", 0.3, 0.6)]


def _nvv_setup(tmp_path, ids):
    from evaluators.benchmarks.nvv.items import NVVItem
    from evaluators.benchmarks.nvv.scorer import NvvOutput

    items = [NVVItem(id=i, lang="en", label="<laugh>", target_type="laugh", text="hello world",
                     reference_text=f"hello world {i}", n_units=2, events=()) for i in ids]
    outputs = []
    for k, i in enumerate(ids):
        sf.write(tmp_path / f"{i}.wav", _noise(1.0, seed=k), 16000)
        outputs.append(NvvOutput(i, "sys", tmp_path / f"{i}.wav"))
    return items, outputs


def test_setup_kind_error_row_is_recomputed_on_rerun_item_kind_is_kept(tmp_path):
    from evaluators.benchmarks.nvv.scorer import verify_outputs
    from evaluators.rows_file import read_done_rows

    items, outputs = _nvv_setup(tmp_path, ["a", "b", "c"])
    pred = tmp_path / "pred" / "sys.jsonl"
    pred.parent.mkdir()
    old = [{"id": "a", "system": "sys", "present": False, "error": "clip too short", "error_kind": "item"},
           {"id": "b", "system": "sys", "present": False, "error": "aligner broke", "error_kind": "setup"},
           {"id": "c", "system": "sys", "present": False, "error": "an older run's error"}]  # no kind: kept
    pred.write_text("".join(json.dumps(r) + "\n" for r in old))
    assert [r["id"] for r in read_done_rows(pred)] == ["a", "c"]
    verifier = _FakeVerifier()
    verify_outputs(verifier, items, outputs, pred.parent, aligner=_FakeAligner())
    assert verifier.scored == ["hello world b"]
    rows = {r["id"]: r for r in read_done_rows(pred)}
    assert rows["a"]["error_kind"] == "item" and "error" in rows["c"]
    assert "error" not in rows["b"] and rows["b"]["present"] is True


def test_aligner_setup_error_stops_the_run_item_error_becomes_a_row(tmp_path):
    from evaluators.benchmarks.nvv.scorer import verify_outputs
    from evaluators.rows_file import read_done_rows

    items, outputs = _nvv_setup(tmp_path, ["a"])
    pred_dir = tmp_path / "pred"
    with pytest.raises(AlignerSetupError):
        verify_outputs(_FakeVerifier(), items, outputs, pred_dir, aligner=_FakeAligner(AlignerSetupError("broken")))
    assert read_done_rows(pred_dir / "sys.jsonl") == []
    verify_outputs(_FakeVerifier(), items, outputs, pred_dir, aligner=_FakeAligner(ValueError("too short")))
    (row,) = read_done_rows(pred_dir / "sys.jsonl")
    assert row["error_kind"] == "item" and "too short" in row["error"]
