"""Speech-active duration (the Silero VAD model file omnijudge ships): the same segments as the
``silero-vad`` package's own ``get_speech_timestamps`` (pinned), batch invariance, and
``no_speech`` on score rows."""

import json

import numpy as np
import soundfile as sf

from evaluators.speech_activity import SR, speech_seconds, speech_segments, window_probabilities


def _utterance(seed: int, lead_s: float = 1.0, tail: int = 16384) -> np.ndarray:
    from trainer.synth.speech import CueLevels, render_utterance
    from trainer.synth.timbre import VoiceTimbre

    u = render_utterance("The quick brown fox jumps over the lazy dog today.", "en",
                         VoiceTimbre(f0_hz=110 + 40 * seed), CueLevels(), np.random.default_rng(seed))
    w = np.concatenate([np.zeros(int(lead_s * SR), np.float32), u, np.zeros(tail, np.float32)])
    return w[: len(w) // 512 * 512]


#: ``silero_vad.get_speech_timestamps(wave, silero_vad.load_silero_vad())`` of the two waves of
#: :func:`test_segments_equal_the_packages_own_get_speech_timestamps`, run with the ``silero-vad``
#: 6.2.0 package (whose model file omnijudge ships) in samples at 16 kHz.
PACKAGE_SEGMENTS = [[(21536, 60896), (93216, 139744)], [(28704, 69600)]]


def test_segments_equal_the_packages_own_get_speech_timestamps():
    # two utterances with a 0.6 s pause, and one after 1.5 s of silence
    waves = [np.concatenate([_utterance(0), _utterance(1, lead_s=0.6)]), _utterance(2, lead_s=1.5)]
    for wave, probs, expected in zip(waves, window_probabilities(waves), PACKAGE_SEGMENTS):
        assert speech_segments(probs, len(wave)) == expected


def test_the_shipped_model_file_is_the_packages():
    import hashlib

    from evaluators.speech_activity import MODEL_FILE

    # silero-vad 6.2.0's silero_vad/data/silero_vad.jit
    assert hashlib.md5(MODEL_FILE.read_bytes()).hexdigest() == "cbd961c3faa3246cdd62aefdea2fdbde"


def test_silence_has_no_speech_and_batches_do_not_change_durations():
    waves = [_utterance(0), np.zeros(2 * SR, np.float32), _utterance(3, lead_s=0.3)[: 3 * SR]]
    together = speech_seconds(waves)
    assert together == [speech_seconds([w])[0] for w in waves]
    assert together[1] == 0.0 and together[0] > 1.5 and together[2] > 1.0
    assert speech_seconds([np.zeros(100, np.float32)]) == [0.0]  # shorter than one window


def test_score_rows_say_how_much_speech_and_flag_silence(tiny_omni, tmp_path):
    from evaluators.judges.presets import get_preset
    from evaluators.judges.verbalizer import VerbalizerJudge
    from evaluators.audio_scorer import collect_items, score_items
    from evaluators.system_table import system_score_table

    (tmp_path / "a").mkdir()
    sf.write(tmp_path / "a" / "speech.wav", _utterance(0), SR)
    sf.write(tmp_path / "a" / "silence.wav", np.zeros(2 * SR, np.float32), SR)
    judge = VerbalizerJudge(tiny_omni, get_preset("auto-att"), name="t")
    rows = {r["id"]: r for r in score_items(judge, collect_items(tmp_path / "a"), tmp_path / "s.jsonl")}
    assert rows["silence"]["no_speech"] is True and rows["silence"]["speech_s"] == 0.0
    assert rows["speech"]["no_speech"] is False and rows["speech"]["speech_s"] > 1.5
    assert "score" in rows["silence"]  # scored, so tables can include or exclude it
    assert system_score_table(list(rows.values()))[0]["n_no_speech"] == 1
    quiet = score_items(judge, collect_items(tmp_path / "a"), tmp_path / "novad.jsonl", vad=False)
    assert all("speech_s" not in r for r in quiet)
    assert all("speech_s" in json.loads(l) for l in (tmp_path / "s.jsonl").read_text().splitlines())
