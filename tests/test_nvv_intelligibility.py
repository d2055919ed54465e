"""NVV-SuperBench WER/CER as the public scripts compute it: the normalisation's golden cases by hand
(punctuation, apostrophes, EN lowercase, traditional -> simplified, ZH characters, mixed scripts),
per-utterance jiwer rates, the public reading of clips, and Whisper through transformers on a tiny
random checkpoint saved in the hub layout."""

import numpy as np
import pytest
import soundfile as sf
from conftest import speechlike

from evaluators.benchmarks.nvv.intelligibility import (
    IntelligibilityMeasure,
    normalise_pair,
    read_public_wave,
    to_simplified,
    utterance_error_rate,
)


@pytest.mark.parametrize("truth, hypo, lang, want", [
    # punctuation deleted, apostrophes kept, lowercased
    ("Hello, World! It's me.", "hello world its me", "en", ("hello world it's me", "hello world its me")),
    ("Don't—stop…", "DON'T STOP", "en", ("don'tstop", "don't stop")),  # — and … are zhon punctuation
    ("Hello，world", "hello world", "en", ("helloworld", "hello world")),  # full-width comma deleted, no space
    ("a ,  b", "a b", "en", ("a  b", "a b")),  # 3 spaces -> one replace pass leaves 2, as the script does
    # ZH: punctuation deleted, every character (spaces too) joined by spaces; Latin kept as is
    ("你好，世界。", "你好世界", "zh", ("你 好 世 界", "你 好 世 界")),
    ("我用iPhone拍照。", "我用iphone拍照", "zh",
     ("我 用 i P h o n e 拍 照", "我 用 i p h o n e 拍 照")),
    ("好的 我知道", "好的我知道", "zh", ("好 的   我 知 道", "好 的 我 知 道")),
])
def test_normalisation_golden_cases(truth, hypo, lang, want):
    assert normalise_pair(truth, hypo, lang) == want


def test_traditional_to_simplified():
    assert to_simplified("這個蘋果很難說") == "这个苹果很难说"
    # the public ZH path converts the hypothesis only, then CER 0 against a simplified reference
    assert utterance_error_rate("这个苹果。", to_simplified("這個蘋果"), "zh")["wer"] == 0.0


def test_utterance_rates_by_hand():
    r = utterance_error_rate("Hello, World! It's me.", "hello world its me", "en")
    assert r == {"wer": 0.25, "sub": 0.25, "del": 0.0, "ins": 0.0}
    r = utterance_error_rate("我用iPhone拍照。", "我用iphone拍照", "zh")
    assert r["wer"] == pytest.approx(0.1) and r["sub"] == pytest.approx(0.1)  # 1 of 10 characters
    r = utterance_error_rate("a b c", "", "en")
    assert (r["wer"], r["del"]) == (1.0, 1.0)
    with pytest.raises(ValueError, match="empty"):
        utterance_error_rate("。", "x", "zh")
    with pytest.raises(ValueError, match="lang"):
        normalise_pair("a", "b", "fr")


def test_public_reading_resamples_with_scipy(tmp_path):
    x = speechlike(0.5, sr=22050)
    sf.write(tmp_path / "a.wav", np.stack([x, -x], 1), 22050)
    wave, warning = read_public_wave(tmp_path / "a.wav")
    assert warning is None and wave.dtype == np.float32 and len(wave) == int(len(x) * 16000 / 22050)
    (tmp_path / "bad.wav").write_bytes(b"RIFF not audio")
    from evaluators.audio_io import AudioLoadError

    with pytest.raises(AudioLoadError):  # soundfile fails, then omnijudge's loader names the problem
        read_public_wave(tmp_path / "bad.wav")


class _Item:
    def __init__(self, text, lang):
        self.reference_text, self.lang = text, lang


def test_whisper_through_transformers_on_a_tiny_hub_checkpoint(tmp_path):
    from test_whisper_runner import one_thread, write_tiny_whisper

    with one_thread():
        folder = write_tiny_whisper(tmp_path / "whisper")
        m = IntelligibilityMeasure.load(str(folder), batch_size=2)
        items = [_Item("the cat sat on the mat", "en"), _Item("我知道了。", "zh"), _Item("a dog", "en")]
        waves = [speechlike(s, seed=i) for i, s in enumerate((0.8, 1.2, 0.6))]
        rows = m.measure(waves, items)
        again = [m.measure([w], [it])[0] for w, it in zip(waves, items)]  # rows do not depend on the batch
    assert len(rows) == 3 and rows == again
    for row, it in zip(rows, items):
        assert isinstance(row["hypothesis"], str)
        want = utterance_error_rate(it.reference_text, row["hypothesis"], it.lang)
        assert {k: row[k] for k in want} == want and row["wer"] >= 0
    assert any(r["hypothesis"] for r in rows)  # the tiny model writes words, so rates are not trivially 1
    assert rows[1]["hypothesis"] == to_simplified(rows[1]["hypothesis"])  # ZH hypotheses are simplified
    with pytest.raises(OSError, match="--asr"):
        IntelligibilityMeasure.load(str(tmp_path / "missing"))
    assert m.provenance()["measure"] == "wer" and m.provenance()["asr"]
