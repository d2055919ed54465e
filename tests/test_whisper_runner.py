"""The shared Whisper runner (SpeechEditBench's ASR, word alignment, NVV intelligibility) on a tiny random Whisper saved in the real hub layout
(config, safetensors weights, generation config with alignment heads and language ids, feature
extractor, byte-level BPE tokenizer trained offline): one result per clip in order, word times
inside the clip, results independent of batching, the language token reaching the decoder, token
times equal to transformers' own ``return_token_timestamps`` for one clip, and the decode cache
(one-line refusals of long clips and broken checkpoint folders: tests/test_whisper_runner_refusals.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import (GenerationConfig, LogitsProcessor, LogitsProcessorList, WhisperConfig,
                          WhisperFeatureExtractor, WhisperForConditionalGeneration, WhisperTokenizer)

from evaluators.measures.whisper import AsrResult, WhisperRunner

#: What the tiny vocabulary's merges are learnt from (so words are multi-byte tokens, as in
#: Whisper's real vocabulary, and Chinese characters are split across byte tokens).
SENTENCES = ("the quick brown fox jumps over the lazy dog", "she sells sea shells by the sea shore",
             "speech editing keeps the voice of the speaker", "今天天气很好，我们去公园散步。",
             "语音编辑保持说话人的声音。")
#: Whisper's special tokens in their real order after the BPE ranks; the 1501 timestamp tokens
#: follow ``<|notimestamps|>``.
SPECIALS = ("<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|zh|>", "<|translate|>", "<|transcribe|>",
            "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>")
MAX_NEW_TOKENS = 10
CLIP_SECONDS = (0.7, 1.3, 2.0, 2.9)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one thread: the tiny model's ops are far too small to share, and on a busy
    machine waiting for a second thread costs more than the op."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@pytest.fixture(scope="module", autouse=True)
def _single_thread():
    with one_thread():
        yield


def speechlike(seconds: float, seed: int) -> np.ndarray:
    """A deterministic modulated tone in noise, float32 mono 16 kHz, peak 0.3."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    tone = np.sin(2 * np.pi * (100 + 400 * rng.random()) * t)
    x = tone * (0.5 + 0.5 * np.sin(2 * np.pi * (1 + 3 * rng.random()) * t)) + 0.3 * rng.standard_normal(len(t))
    return (0.3 * x / np.abs(x).max()).astype(np.float32)


def _trained_vocabulary() -> tuple[dict[str, int], list[list[str]]]:
    """Byte-level BPE: the 256 byte symbols plus 40 merges learnt from :data:`SENTENCES`."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    bpe.train_from_iterator(SENTENCES, trainers.BpeTrainer(vocab_size=len(alphabet) + 40, initial_alphabet=alphabet,
                                                           show_progress=False))
    model = json.loads(bpe.to_str())["model"]
    merges = [m if isinstance(m, list) else m.split(" ") for m in model["merges"]]
    return dict(model["vocab"]), merges


def _place_end_of_text(model: WhisperForConditionalGeneration, features: torch.Tensor, eot: int) -> list[int]:
    """Point the (tied) ``<|endoftext|>`` output row so greedy decoding of ``features`` stops after
    different numbers of tokens per clip; returns those numbers.

    A random model almost never ends a transcript by itself, and clips that end at different
    lengths are what batching must be checked on. The row only scores end-of-text, so the hidden
    states before it are unchanged: the lengths follow from them directly. The row is aimed at
    one decoding step's hidden state, scaled to beat the best text token there by 5%; the step
    giving the most distinct lengths, with no near-tie anywhere, is kept.
    """
    seqs = model.generate(features, language="en", task="transcribe", max_new_tokens=MAX_NEW_TOKENS,
                          force_unique_generate_call=True, return_dict_in_generate=True).sequences
    encoded = model.model.encoder(features).last_hidden_state
    # rows predicting tokens 2..N: the first token can never be end-of-text (begin_suppress_tokens)
    hidden = model.model.decoder(input_ids=seqs, encoder_hidden_states=encoded).last_hidden_state[:, 4:-1]
    table = model.model.decoder.embed_tokens.weight
    best = (hidden @ table[:eot].T).max(-1).values
    choice = None
    for b in range(hidden.shape[0]):
        for s in range(hidden.shape[1]):
            if best[b, s] <= 0:
                continue
            norm = hidden[b, s].norm()
            row = 1.05 * best[b, s] / norm * hidden[b, s] / norm
            margin = hidden @ row - best
            if margin.abs().min() < 1e-2:
                continue
            lengths = [int(w.nonzero()[0]) + 1 if w.any() else MAX_NEW_TOKENS for w in margin > 0]
            if choice is None or len(set(lengths)) > len(set(choice[1])):
                choice = (row, lengths)
    assert choice is not None, "no usable end-of-text direction"
    table[eot] = choice[0]
    return choice[1]


def write_tiny_whisper(folder: Path, seed: int = 0) -> Path:
    """A random 16-wide Whisper (1 encoder, 2 decoder layers, 128 mels, as large-v3) in the hub
    layout: ``config.json``, ``model.safetensors``, ``generation_config.json``,
    ``preprocessor_config.json``, ``tokenizer.json`` + ``tokenizer_config.json`` and the slow
    files ``vocab.json``, ``merges.txt``, ``added_tokens.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab, merges = _trained_vocabulary()
    n_bpe = len(vocab)
    added = list(SPECIALS) + [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    vocab.update({token: n_bpe + k for k, token in enumerate(added)})
    tokenizer = WhisperTokenizer(vocab=vocab, merges=[tuple(m) for m in merges])
    tokenizer.add_special_tokens({"additional_special_tokens": added[1:]})
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftranscript|>"]
    config = WhisperConfig(vocab_size=len(vocab), num_mel_bins=128, d_model=16, encoder_layers=1, decoder_layers=2,
                           encoder_attention_heads=1, decoder_attention_heads=2, encoder_ffn_dim=32,
                           decoder_ffn_dim=32, max_target_positions=32, decoder_start_token_id=sot, pad_token_id=eot,
                           bos_token_id=eot, eos_token_id=eot, begin_suppress_tokens=None, suppress_tokens=None,
                           init_std=1.0)
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config).eval()
    # A GenerationConfig of its own: one derived from the model config would drop Whisper's keys.
    model.generation_config = GenerationConfig(
        alignment_heads=[[0, 1], [1, 0]], begin_suppress_tokens=[vocab["Ġ"], eot], bos_token_id=eot,
        decoder_start_token_id=sot, eos_token_id=eot, is_multilingual=True,
        lang_to_id={t: vocab[t] for t in ("<|en|>", "<|zh|>")}, max_initial_timestamp_index=50, max_length=32,
        no_timestamps_token_id=vocab["<|notimestamps|>"], pad_token_id=eot,
        prev_sot_token_id=vocab["<|startofprev|>"], return_timestamps=False,
        # the real checkpoints' list bars a few symbols; this one bars every special and timestamp
        # token so the random model writes only text
        suppress_tokens=[i for i in vocab.values() if i > eot],
        task_to_id={"transcribe": vocab["<|transcribe|>"], "translate": vocab["<|translate|>"]})
    feature_extractor = WhisperFeatureExtractor(feature_size=128)
    with torch.no_grad():
        table = model.model.decoder.embed_tokens.weight
        # word-initial tokens twice as likely to win, so transcripts have several words
        table[[i for t, i in vocab.items() if t.startswith("Ġ") and i < eot]] *= 2
        clips = [speechlike(s, i) for i, s in enumerate(CLIP_SECONDS)]
        _place_end_of_text(model, feature_extractor(clips, sampling_rate=16000, return_tensors="pt").input_features,
                           eot)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    feature_extractor.save_pretrained(folder)
    (folder / "vocab.json").write_text(json.dumps({t: i for t, i in vocab.items() if i <= eot}, ensure_ascii=False),
                                       encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8")
    (folder / "added_tokens.json").write_text(json.dumps({t: vocab[t] for t in added[1:]}), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def tiny_whisper(tmp_path_factory) -> Path:
    with one_thread():
        return write_tiny_whisper(tmp_path_factory.mktemp("tiny_whisper"))


@pytest.fixture(scope="module")
def asr(tiny_whisper) -> WhisperRunner:
    return WhisperRunner.from_pretrained(tiny_whisper, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)


@pytest.fixture(scope="module")
def clips() -> list[np.ndarray]:
    return [speechlike(s, i) for i, s in enumerate(CLIP_SECONDS)]


@pytest.fixture(scope="module")
def results(asr, clips) -> list[AsrResult]:
    return asr.transcribe(clips, "en")


def _sibling(asr: WhisperRunner, **changes) -> WhisperRunner:
    """Another provider on the same weights with some settings changed."""
    kwargs = {"batch_size": asr.batch_size, "max_new_tokens": asr.max_new_tokens, "long_clips": asr.long_clips}
    return WhisperRunner(asr.model, asr.processor, source=asr.source, **{**kwargs, **changes})


def test_checkpoint_has_the_hub_layout_and_the_provider_the_protocol(tiny_whisper, asr):
    names = {p.name for p in tiny_whisper.iterdir()}
    assert {"config.json", "model.safetensors", "generation_config.json", "preprocessor_config.json",
            "tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt", "added_tokens.json"} <= names
    gen = json.loads((tiny_whisper / "generation_config.json").read_text())
    assert gen["alignment_heads"] and set(gen["lang_to_id"]) == {"<|en|>", "<|zh|>"}
    assert gen["no_timestamps_token_id"] == asr.tokenizer.convert_tokens_to_ids("<|notimestamps|>")
    assert json.loads((tiny_whisper / "preprocessor_config.json").read_text())["feature_size"] == 128
    assert asr.name == f"whisper:{tiny_whisper}"
    assert asr.max_seconds == 30.0 and asr.seconds_per_frame == pytest.approx(0.02)
    assert asr.provenance()["dtype"] == "float32"


def test_one_result_per_clip_in_order_with_words_inside_the_clip(asr, clips, results):
    assert len(results) == len(clips)
    assert sum(len(r.words) > 1 for r in results) >= 2  # the checks below see real word sequences
    for wave, res in zip(clips, results):
        duration = len(wave) / 16000
        assert isinstance(res.text, str) and res.text == res.text.strip()
        previous_end = 0.0
        for w in res.words:
            assert set(w) == {"word", "start", "end"} and w["word"] and w["word"] == w["word"].strip()
            assert 0.0 <= w["start"] <= w["end"] <= duration
            assert w["start"] >= previous_end  # monotone, never overlapping
            previous_end = w["end"]
        # the words spell the transcript
        assert "".join(w["word"] for w in res.words).replace(" ", "") == res.text.replace(" ", "")
    # order: the same clips reversed give the same results reversed
    assert asr.transcribe(clips[::-1], "en") == results[::-1]


def test_batching_never_changes_a_result(asr, clips, results):
    lengths = [len(t) for t in asr.decode(clips, "en")]
    assert len(set(lengths)) >= 3 and min(lengths) < MAX_NEW_TOKENS  # clips end at different lengths
    one_by_one = _sibling(asr, batch_size=1)
    assert one_by_one.transcribe(clips, "en") == results
    assert _sibling(asr, batch_size=3).transcribe(clips, "en") == results
    # forced alignment of token lists of different lengths: padded batch == clip by clip
    tokens = [asr.tokenizer(s, add_special_tokens=False)["input_ids"]
              for s in (" the fox", " she sells sea shells by the sea shore", " a", " 今天天气很好")]
    batched = asr.align(clips, tokens, "en")
    for got, want in zip(batched, [one_by_one.align([c], [t], "en")[0] for c, t in zip(clips, tokens)]):
        np.testing.assert_array_equal(got, want)
    assert [len(s) for s in batched] == [len(t) for t in tokens]


def test_decoding_runs_on_decode_threads_and_restores_torch(asr, clips):
    seen: list[int] = []
    hook = asr.model.model.decoder.register_forward_pre_hook(lambda module, args: seen.append(torch.get_num_threads()))
    own = _sibling(asr)
    own.decode_threads = None  # torch's own setting throughout
    try:
        with one_thread():
            torch.set_num_threads(2)
            texts = asr.texts(clips, "en")
            after = torch.get_num_threads()
            decoded_on, seen[:] = list(seen), []
            assert own.texts(clips, "en") == texts
            assert set(seen) == {2}
    finally:
        hook.remove()
    assert set(decoded_on) == {1} and after == 2


def test_language_token_reaches_the_decoder(asr, clips):
    ids = asr.tokenizer.convert_tokens_to_ids
    en, zh = asr.prompt_ids("en"), asr.prompt_ids("zh")
    assert en == [ids("<|startoftranscript|>"), ids("<|en|>"), ids("<|transcribe|>"), ids("<|notimestamps|>")]
    assert zh == [en[0], ids("<|zh|>"), *en[2:]]
    assert asr.prompt_ids("English") == en and asr.prompt_ids("mandarin") == zh
    seen = []
    hook = asr.model.model.decoder.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["input_ids"][:, :4].tolist())
        if kwargs.get("input_ids") is not None and kwargs["input_ids"].shape[1] >= 4 else None, with_kwargs=True)
    try:
        mixed = asr.transcribe(clips[:2], ["zh", "en"])
    finally:
        hook.remove()
    assert len(seen) == 2 and all(rows == [zh, en] for rows in seen)  # decoding, then alignment
    assert mixed == [asr.transcribe(clips[:1], "zh")[0], asr.transcribe(clips[1:2], "en")[0]]
    with pytest.raises(ValueError, match="does not know language 'fr'"):
        asr.transcribe(clips[:1], "fr")
    with pytest.raises(ValueError, match="unknown language 'klingon'"):
        asr.transcribe(clips[:1], "klingon")


def test_no_language_lets_the_model_detect_it(asr, clips):
    detected = asr.transcribe(clips, None)
    assert asr.texts(clips, None) == [r.text for r in detected]
    for clip, got in zip(clips, detected):  # the detected language's prompt, then the same decoding and times
        assert got in (asr.transcribe([clip], "en")[0], asr.transcribe([clip], "zh")[0])
    with pytest.raises(ValueError, match="every clip or for none"):
        asr.transcribe(clips[:2], ["en", None])
    with pytest.raises(ValueError, match="needs the clips' language"):
        asr.align(clips[:1], [[1]], None)


class ForceTokens(LogitsProcessor):
    """Makes greedy decoding write ``tokens`` after a prompt of ``prompt_length``, then stop."""

    def __init__(self, tokens: list[int], prompt_length: int, eos: int):
        self.tokens, self.prompt_length, self.eos = tokens, prompt_length, eos

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        k = input_ids.shape[1] - self.prompt_length
        forced = torch.full_like(scores, -torch.inf)
        forced[:, self.tokens[k] if k < len(self.tokens) else self.eos] = 0.0
        return forced


def test_token_times_equal_transformers_token_timestamps(tiny_whisper, asr, clips):
    """Per clip, transformers' ``generate(return_token_timestamps=True)`` and the provider give
    the same tokens (free decoding to end-of-text) and the same token end times, on the decoded
    tokens and on a sentence forced through both (long enough for the times to spread out)."""
    stock = WhisperForConditionalGeneration.from_pretrained(tiny_whisper).eval()  # generate() switches it to eager
    sentence = asr.tokenizer(" she sells sea shells by the sea shore", add_special_tokens=False)["input_ids"]
    checked, spread = 0, 0
    for wave, toks in zip(clips, asr.decode(clips, "en")):
        feats = asr.feature_extractor([wave], sampling_rate=16000, return_tensors="pt", return_attention_mask=True)
        runs = [(sentence, [ForceTokens(sentence, 4, asr.eos_id)])]
        if len(toks) < MAX_NEW_TOKENS:  # cut off: transformers has no row for the last token's end
            runs.append((toks, []))
        for tokens, processors in runs:
            out = stock.generate(feats["input_features"], attention_mask=feats["attention_mask"], language="en",
                                 task="transcribe", return_token_timestamps=True, max_new_tokens=len(tokens) + 1,
                                 logits_processor=LogitsProcessorList(processors))
            assert out["sequences"][0].tolist() == tokens
            ends = asr.align([wave], [tokens], "en")[0][:, 1]
            np.testing.assert_allclose(ends, np.round(out["token_timestamps"][0].numpy(), 2), atol=1e-9)
            checked += 1
            spread += len(set(ends.tolist())) >= 3
    assert checked >= 6 and spread >= 3


def test_result_round_trips_through_a_dict(results):
    for res in results:
        assert AsrResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res


def test_the_decode_cache_serves_each_clip_once_identical_keyed_by_clip_model_and_settings(asr, clips, results,
                                                                                            tmp_path):
    cached = _sibling(asr)
    cached.use_cache(tmp_path / "cache")
    texts = asr.texts(clips, "en")
    assert cached.transcribe(clips, "en") == results and cached.texts(clips, "en") == texts
    assert (cached.cache.hits, cached.cache.misses) == (0, 2 * len(clips))  # words and text are two settings
    # a second pass, clips reordered and partly new: only the new clip is decoded, the rest read back exactly
    new = speechlike(1.1, 99)
    assert cached.transcribe([clips[2], new, clips[0]], "en") == [results[2], asr.transcribe([new], "en")[0], results[0]]
    assert (cached.cache.hits, cached.cache.misses) == (2, 2 * len(clips) + 1)
    # another language, token cap or clip is another entry; a bad clip is refused before any lookup
    cached.texts(clips[:1], "zh")
    capped = _sibling(asr, max_new_tokens=3)
    capped.use_cache(tmp_path / "cache")
    assert capped.texts(clips[:1], "en") == _sibling(asr, max_new_tokens=3).texts(clips[:1], "en")
    assert (cached.cache.misses, capped.cache.misses) == (2 * len(clips) + 2, 1)
    with pytest.raises(ValueError, match="clip 1: empty audio"):
        cached.texts([clips[0], np.zeros(0, np.float32)], "en")
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2 * len(clips) + 3
    assert cached.identity()["weights_sha256"] == capped.identity()["weights_sha256"]
