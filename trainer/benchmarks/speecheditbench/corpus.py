"""A synthetic SpeechEditBench: items in the benchmark's layout, procedural source audio, and one
system's edited outputs whose every target outcome is known by construction.

``omnijudge synth speecheditbench --edited --out DIR`` writes

``DIR/data/<task>/samples.jsonl`` + ``DIR/data/<task>/audio/...``   items and sources, as published
``DIR/outputs/synthetic-editor/<task>/<sample_id>.wav``              the system's outputs
``DIR/outputs/synthetic-editor/manifest.jsonl``                      what an ASR and the Gemini judge
    would report for each output (its rendered words with their times; emotion / style /
    paralinguistic verdicts), so the run needs no pretrained model
``DIR/truth.jsonl``                                                  each item's expected target outcome

Every atomic task and two compositional combinations get items whose edit was made and items whose
edit was not; the signal criteria are realised in the audio itself (speech rendered faster or at a
higher F0, a word rendered with stress, noise added or removed, reverberation of a known RT60), so
pYIN, the VAD, DNSMOS and the RT60 estimate decide them for real. One output per task is missing
and one is an unreadable file, as a real run meets them. Speech is ``trainer.synth.stressed_speech``
(word times known exactly). Speaker and noise-scene outcomes depend on the pretrained providers and
have ``expected_target`` null in ``truth.jsonl``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import signal

from trainer.synth.corpus_io import write_jsonl, write_wav
from trainer.synth.stressed_speech import StressSpeaker, render_stressed

SR = 16_000
SYSTEM = "synthetic-editor"
EN = ["the yellow lamps would light up the quiet street tonight", "she kept the old letters in a small wooden box",
      "we walked along the river before the storm arrived", "his brother painted the fence a bright green colour"]
ZH = [["今天", "天气", "很好", "我们", "去", "公园"], ["这个", "问题", "需要", "认真", "考虑"]]


def _speaker(name: str, seed: int) -> StressSpeaker:
    return StressSpeaker.random(name, np.random.default_rng(seed))


def _render(words: list[str], lang: str, spk: StressSpeaker, seed: int, stress: int | None = None):
    prom = np.zeros(len(words))
    if stress is not None:
        prom[stress] = 1.0
    r = render_stressed(words, lang, spk, prom, np.random.default_rng(seed))
    timed = [{"word": w, "start": round(a, 4), "end": round(b, 4)} for w, (a, b) in zip(words, r.word_times)]
    return r.audio, timed


def _faster(spk: StressSpeaker) -> StressSpeaker:
    """The speaker at 1.35 x its syllable rate (at most 8 per second)."""
    return replace(spk, timbre=replace(spk.timbre, rate_sps=min(8.0, spk.timbre.rate_sps * 1.35)))


def _reverb(x: np.ndarray, rt60: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(1.2 * rt60 * SR)) / SR
    ir = rng.standard_normal(t.size) * np.exp(-6.908 * t / rt60)
    ir[0] = 1.0
    return _peak(signal.fftconvolve(x, ir)[: x.size + t.size])


def _noisy(x: np.ndarray, snr_db: float, seed: int) -> np.ndarray:
    n = np.random.default_rng(seed).standard_normal(x.size)
    n *= np.sqrt(np.mean(x ** 2) / np.mean(n ** 2)) / 10 ** (snr_db / 20)
    return _peak(x + n)


def _peak(y: np.ndarray) -> np.ndarray:
    """``y`` scaled to a 0.9 peak, float32."""
    return (0.9 * y / np.max(np.abs(y))).astype(np.float32)


class _Writer:
    def __init__(self, out: Path):
        self.out, self.items, self.manifest, self.truth = out, {}, [], []

    def source(self, task: str, sid: str, wave: np.ndarray, sub: str = "") -> str:
        rel = f"data/{task}/audio/{sub}{sid}.wav"
        (self.out / rel).parent.mkdir(parents=True, exist_ok=True)
        write_wav(self.out / rel, wave, SR)
        return rel

    def output(self, task: str, sid: str, wave: np.ndarray | None, given: dict, truth: bool | None,
               words: list[dict] | None = None) -> None:
        if wave is not None:
            p = self.out / "outputs" / SYSTEM / task / f"{sid}.wav"
            p.parent.mkdir(parents=True, exist_ok=True)
            write_wav(p, wave, SR)
        if words is not None:
            given = {"asr_text": " ".join(w["word"] for w in words) if not words or words[0]["word"].isascii()
                     else "".join(w["word"] for w in words), "word_timestamps": words, **given}
        self.manifest.append({"sample_id": sid, "task": task, **given})
        self.truth.append({"task": task, "sample_id": sid, "expected_target": truth,
                           "output": "missing" if wave is None else "present"})

    def item(self, task: str, row: dict) -> None:
        self.items.setdefault(task, []).append({"task": task, "benchmark_version": "synthetic", **row})


def build_edited_corpus(out: str | Path, seed: int = 0) -> dict:
    """Write the corpus (module docstring) into ``out``; returns counts per task."""
    out = Path(out)
    w = _Writer(out)
    a, b = _speaker("spk_a", seed + 1), _speaker("spk_b", seed + 2)
    _content(w, a, seed)
    _speaker_task(w, a, b, seed)
    _judged(w, a, seed)
    _prosody(w, a, seed)
    _acoustic(w, a, seed)
    _compositional(w, a, seed)
    for task, rows in w.items.items():
        (out / "data" / task).mkdir(parents=True, exist_ok=True)
        write_jsonl(out / "data" / task / "samples.jsonl", rows)
    # one unreadable output per run: a damaged file where the prosody pitch-up output should be
    bad = out / "outputs" / SYSTEM / "prosody_editing" / "prosody_pitch_broken.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEfmt garbage")
    write_jsonl(out / "outputs" / SYSTEM / "manifest.jsonl", w.manifest)
    write_jsonl(out / "truth.jsonl", w.truth)
    return {t: len(rows) for t, rows in w.items.items()}


def _content(w: _Writer, spk, seed):
    task = "content_editing"
    cases = [("replace", EN[0], "yellow", "golden", None, True), ("replace", EN[0], "yellow", "golden", None, False),
             ("insert", EN[1], None, "very", "a", True), ("delete", EN[2], "before", None, None, True),
             ("delete", EN[2], "before", None, None, False)]
    for i, (edit, text, orig, tgt, after, done) in enumerate(cases):
        words = text.split()
        if edit == "replace":
            target_words = [tgt if x == orig else x for x in words]
        elif edit == "insert":
            k = words.index(after) + 1
            target_words = words[:k] + [tgt] + words[k:]
        else:
            target_words = [x for x in words if x != orig]
        sid = f"content_{edit}_{i}"
        src, _ = _render(words, "en", spk, seed + 10 + i)
        anchor = {"type": "content", "edit_type": edit, "transcript_original": text,
                  "transcript_target": " ".join(target_words), "edit_original": orig, "edit_target": tgt,
                  **({"insert_after": after} if after else {})}
        w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, src), "instruction": f"{edit} edit",
                      "transcript": text, "language": "en", "source_dataset": "synthetic", "anchor": anchor})
        out, timed = _render(target_words if done else words, "en", spk, seed + 20 + i)
        w.output(task, sid, out, {}, done, timed)
    zh = ZH[0]
    sid = "content_delete_zh"
    src, _ = _render(zh, "zh", spk, seed + 30)
    anchor = {"type": "content", "edit_type": "delete", "transcript_original": "".join(zh),
              "transcript_target": "".join(x for x in zh if x != "很好"), "edit_original": "很好", "edit_target": None}
    w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, src), "instruction": "删除“很好”。",
                  "transcript": "".join(zh), "language": "zh", "source_dataset": "synthetic", "anchor": anchor})
    out, timed = _render([x for x in zh if x != "很好"], "zh", spk, seed + 31)
    w.output(task, sid, out, {}, True, timed)
    w.item(task, {"sample_id": "content_missing", "audio_path": w.source(task, "content_missing", src),
                  "instruction": "删除“很好”。", "transcript": "".join(zh), "language": "zh",
                  "source_dataset": "synthetic", "anchor": anchor})
    w.output(task, "content_missing", None, {}, None)


def _speaker_task(w: _Writer, a, b, seed):
    task = "speaker_editing"
    words = EN[3].split()
    for i, converted in enumerate((True, False)):
        sid = f"speaker_{i}"
        src, _ = _render(words, "en", a, seed + 40 + i)
        ref, _ = _render(EN[1].split(), "en", b, seed + 42 + i)
        ref_rel = w.source(task, sid, ref, sub="reference/")
        w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, src, sub="source/"),
                      "reference_audio_path": ref_rel, "instruction": "Convert the voice.", "transcript": EN[3],
                      "language": "en", "source_dataset": "synthetic",
                      "anchor": {"type": "speaker", "reference_wav": ref_rel, "target_speaker": "spk_b"}})
        out, timed = _render(words, "en", b if converted else a, seed + 44 + i)
        w.output(task, sid, out, {}, None, timed)


def _judged(w: _Writer, spk, seed):
    """Emotion, style and paralinguistic items; the manifest holds the verdicts a judge would give."""
    words = EN[1].split()
    emo = [("angry", "angry", "standard", "en"), ("sad", "happy", "challenging", "en"), ("playfulness", "playfulness", "standard", "zh")]
    for i, (target, judged, subset, lang) in enumerate(emo):
        sid, ws = f"emotion_{i}", (words if lang == "en" else ZH[1])
        text = " ".join(ws) if lang == "en" else "".join(ws)
        src, _ = _render(ws, lang, spk, seed + 50 + i)
        tax = "iemocap_en" if lang == "en" else "csemotions_zh"
        w.item("emotion_editing", {"sample_id": sid, "audio_path": w.source("emotion_editing", sid, src),
                                   "instruction": f"Change the emotion to {target}.", "transcript": text, "language": lang,
                                   "source_dataset": "synthetic", "subset": subset, "emotion_taxonomy": tax,
                                   "anchor": {"type": "emotion", "source_emotion": "neutral", "target_emotion": target,
                                              "emotion_taxonomy": tax}})
        out, timed = _render(ws, lang, spk, seed + 50 + i)
        w.output("emotion_editing", sid, out, {"emotion": {"predicted_emotion": judged}}, target == judged, timed)
    for i, (target, score, flag) in enumerate((("storytelling", 4, True), ("intimate", 3, False), ("dramatic", 1, None))):
        sid = f"style_{i}"
        src, _ = _render(words, "en", spk, seed + 60 + i)
        w.item("style_editing", {"sample_id": sid, "audio_path": w.source("style_editing", sid, src),
                                 "instruction": f"Change the speaking style to {target} style.", "transcript": EN[1],
                                 "language": "en", "source_dataset": "synthetic",
                                 "anchor": {"type": "style", "source_style": "conversational", "target_style": target}})
        verdict = {"target_style_score": score, **({"target_style_success": flag} if flag is not None else {})}
        out, timed = _render(words, "en", spk, seed + 60 + i)
        w.output("style_editing", sid, out, {"style": verdict}, score >= 3 and flag is not False, timed)
    for i, (op, event, score) in enumerate((("add", "breath", 2), ("remove", "laugh", 2), ("remove", "cough", 0))):
        sid = f"paralinguistic_{i}"
        src, _ = _render(words, "en", spk, seed + 70 + i)
        w.item("paralinguistic_editing", {"sample_id": sid, "audio_path": w.source("paralinguistic_editing", sid, src),
                                          "instruction": f"{op} {event}", "transcript": EN[1], "language": "en",
                                          "source_dataset": "synthetic",
                                          "anchor": {"type": "paralinguistic", "operation": op, "event": event}})
        scores = {"breath": 0, "laugh": 0, "cough": 0, "sigh": 0, event: score}
        out, timed = _render(words, "en", spk, seed + 70 + i)
        w.output("paralinguistic_editing", sid, out, {"paralinguistic": {"event_scores": scores}},
                 score >= 2 if op == "add" else score <= 1, timed)


def _prosody(w: _Writer, spk, seed):
    task = "prosody_editing"
    words = EN[2].split()
    fast = _faster(spk)
    high = replace(spk, timbre=replace(spk.timbre, f0_hz=min(400.0, spk.timbre.f0_hz * 2 ** (2 / 12))))
    cases = [("prosody_speed_done", {"prosody_type": "speed", "direction": "faster"}, fast, None, True),
             ("prosody_speed_undone", {"prosody_type": "speed", "direction": "faster"}, spk, None, False),
             ("prosody_pitch_done", {"prosody_type": "pitch", "direction": "higher"}, high, None, True),
             ("prosody_pitch_broken", {"prosody_type": "pitch", "direction": "higher"}, None, None, None),
             ("prosody_stress_done", {"prosody_type": "stress", "stress_words": ["river"]}, spk, words.index("river"), True),
             ("prosody_stress_undone", {"prosody_type": "stress", "stress_words": ["river"]}, spk, None, False)]
    for i, (sid, anchor, voice, stress, truth) in enumerate(cases):
        src, src_words = _render(words, "en", spk, seed + 80)
        w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, src), "instruction": str(anchor),
                      "transcript": EN[2], "language": "en", "source_dataset": "synthetic",
                      "anchor": {"type": "prosody", **anchor}})
        given = {"source_asr_text": EN[2], "source_word_timestamps": src_words}
        if voice is None:  # the damaged file is written by build_edited_corpus
            w.manifest.append({"sample_id": sid, "task": task})
            w.truth.append({"task": task, "sample_id": sid, "expected_target": None, "output": "unreadable"})
            continue
        out, timed = _render(words, "en", voice, seed + 80, stress=stress)
        w.output(task, sid, out, given, truth, timed)


def _acoustic(w: _Writer, spk, seed):
    task = "acoustic_editing"
    words = EN[0].split()
    clean, timed = _render(words, "en", spk, seed + 90)
    noisy = _noisy(clean, 3.0, seed + 91)
    for sid, done in (("acoustic_enhance_done", True), ("acoustic_enhance_undone", False)):
        w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, noisy, sub="source/"),
                      "instruction": "Remove background noise from the speech.", "transcript": EN[0], "language": "en",
                      "source_dataset": "synthetic", "anchor": {"type": "acoustic", "subtask": "enhancement",
                                                                "degradation_type": "noisy"}})
        w.output(task, sid, clean if done else noisy, {}, True if done else False, timed)
    for sid, rt60, truth in (("acoustic_reverb_done", 0.3, True), ("acoustic_reverb_undone", None, False)):
        w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, clean, sub="source/"),
                      "instruction": "Add small-room reverberation to the speech.", "transcript": EN[0],
                      "language": "en", "source_dataset": "synthetic",
                      "anchor": {"type": "acoustic", "subtask": "env_transfer", "env_type": "reverb",
                                 "env_subtype": "small_room", "rt60_target_range": [0.2, 0.4]}})
        w.output(task, sid, _reverb(clean, rt60, seed + 92) if rt60 else clean, {}, truth, timed)
    # crowd noise: three other utterances mixed in below the speech (scene scores come from the
    # AudioSet provider, so the outcome is not known by construction)
    babble = sum(np.resize(_render(t.split(), "en", _speaker(f"crowd{k}", seed + 93 + k), seed + 96 + k)[0], clean.size)
                 for k, t in enumerate(EN[1:]))
    crowd = clean + 0.3 * babble * np.sqrt(np.mean(clean ** 2) / max(np.mean(babble ** 2), 1e-12))
    sid = "acoustic_noise_crowd"
    w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, clean, sub="source/"),
                  "instruction": "Add crowd background noise to the speech.", "transcript": EN[0], "language": "en",
                  "source_dataset": "synthetic", "anchor": {"type": "acoustic", "subtask": "env_transfer",
                                                            "env_type": "noise", "env_subtype": "crowd"}})
    w.output(task, sid, _peak(crowd), {}, None, timed)


def _compositional(w: _Writer, spk, seed):
    task = "compositional_editing"
    words = EN[0].split()
    target_words = ["golden" if x == "yellow" else x for x in words]
    content = {"component_type": "content", "anchor": {"type": "content", "edit_type": "replace", "edit_original": "yellow",
                                                       "edit_target": "golden", "transcript_target": " ".join(target_words)}}
    emotion = {"component_type": "emotion", "emotion_taxonomy": "iemocap_en",
               "anchor": {"type": "emotion", "target_emotion": "happy", "emotion_taxonomy": "iemocap_en"}}
    fast = _faster(spk)
    speed = {"component_type": "prosody", "anchor": {"type": "prosody", "prosody_type": "speed", "direction": "faster"}}
    cases = [("comp_content_emotion_all", [content, emotion], target_words, spk, "happy", True),
             ("comp_content_emotion_half", [content, emotion], target_words, spk, "sad", False),
             ("comp_emotion_speed_all", [emotion, speed], words, fast, "happy", True)]
    for i, (sid, comps, out_words, voice, judged, truth) in enumerate(cases):
        src, _ = _render(words, "en", spk, seed + 100)
        combo = "+".join(c["component_type"] for c in comps)
        w.item(task, {"sample_id": sid, "audio_path": w.source(task, sid, src, sub="source/"), "instruction": combo,
                      "transcript": EN[0], "language": "en", "source_dataset": "synthetic",
                      "difficulty": "two_way", "combo_type": combo, "components": comps})
        out, timed = _render(out_words, "en", voice, seed + 100)
        w.output(task, sid, out, {"emotion": {"predicted_emotion": judged}}, truth, timed)

