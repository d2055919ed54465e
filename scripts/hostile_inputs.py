"""Hostile inputs for ``omnijudge score``: a folder holding every kind of bad, odd or huge audio file
a benchmark runner meets, and the figures of a run over it.

``build_hostile_folder(root)`` writes the folder and returns what each file must become: a score
(``"score"``) or an error row whose message contains the given words; files a folder walk must
skip are listed separately. The tests (``tests/test_hostile_inputs.py``) and this script share it.

Run as a script, it reports, on the tiny demo judge (CPU):
  - inputs tried / handled as expected (a score or the named error; skipped files listed);
  - peak memory (max RSS) of the scoring process over the whole folder;
  - SIGKILLs landing mid-run, then reruns until done: rows lost or duplicated vs an uninterrupted run;
  - the throughput cost of flushing and fsyncing rows every 4 batches (same clips, fsync stubbed
    out), and of the Silero VAD pass (``speech_s`` / ``no_speech``), at batch 4 and 16.

    python scripts/hostile_inputs.py [--kills 10] [--hour-minutes 60] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

SR = 16_000


def _speech(seconds: float, sr: int = SR, seed: int = 0) -> np.ndarray:
    """Harmonic voiced-ish signal with a syllable-rate envelope, float32 in [-0.3, 0.3]."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    f0 = 110 + 60 * rng.random()
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6)) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t))
    x = x + 0.02 * rng.standard_normal(len(t))
    return (0.3 * x / np.abs(x).max()).astype(np.float32)


def _wav_with_rate(path: Path, rate: int, seconds_at_16k: float = 1.0) -> None:
    """A PCM-16 WAV whose header states ``rate`` Hz (a damaged or crafted header)."""
    sf.write(path, _speech(seconds_at_16k), SR, subtype="PCM_16")
    raw = bytearray(path.read_bytes())
    struct.pack_into("<II", raw, 24, rate, rate * 2)  # fmt chunk: sample rate, byte rate
    path.write_bytes(bytes(raw))


def build_hostile_folder(root: Path, hour_minutes: float = 10.0) -> tuple[dict[str, str | tuple[str, ...]], list[str]]:
    """Write the hostile folder under ``root``; returns ({id: "score" | words its error names},
    [names a folder walk must skip]). ``hour_minutes``: length of the long silent FLAC."""
    root.mkdir(parents=True, exist_ok=True)
    expect: dict[str, str | tuple[str, ...]] = {}

    def put(name: str, outcome, write) -> None:
        write(root / name)
        expect[name.rsplit(".", 1)[0]] = outcome  # a folder item's id: its name without the extension

    # good but unusual formats: all scored
    put("8k_8bit.wav", "score", lambda p: sf.write(p, _speech(1.5, 8000), 8000, subtype="PCM_U8"))
    put("48k_float.wav", "score", lambda p: sf.write(p, _speech(1.5, 48000), 48000, subtype="FLOAT"))
    put("stereo_24bit.flac", "score",
        lambda p: sf.write(p, np.stack([_speech(1.5, 48000), _speech(1.5, 48000, 1)], 1), 48000, subtype="PCM_24"))
    put("vorbis.ogg", "score", lambda p: sf.write(p, _speech(1.5, 22050), 22050))
    if "MP3" in sf.available_formats():
        put("lame.mp3", "score", lambda p: sf.write(p, _speech(1.5, 44100), 44100))
    put("silence.wav", "score", lambda p: sf.write(p, np.zeros(2 * SR, np.float32), SR))
    put("long_45s.wav", "score", lambda p: sf.write(p, _speech(45.0), SR))
    put("clipped.wav", "score", lambda p: sf.write(p, np.clip(_speech(1.0) * 20, -1, 1), SR))
    put("говорит 声音 🎤.wav", "score", lambda p: sf.write(p, _speech(1.0), SR))
    put("hour_of_silence.flac", "score",
        lambda p: _long_silent_flac(p, hour_minutes))
    # one stem, two files: both scored, under ids that keep the extension
    sf.write(root / "x.wav", _speech(1.0), SR)
    sf.write(root / "x.flac", _speech(1.0, seed=3), SR)
    expect["x.wav"] = expect["x.flac"] = "score"

    # broken files: each an error row naming the problem
    put("empty.wav", ("empty",), lambda p: p.write_bytes(b""))
    put("text.wav", ("not a readable audio file",), lambda p: p.write_text("this is not audio\n" * 20))
    put("zero_frames.wav", ("zero samples",), lambda p: sf.write(p, np.zeros(0, np.float32), SR))
    put("nan.wav", ("NaN or Inf",), lambda p: sf.write(p, np.where(np.arange(SR) % 9 == 0, np.nan, _speech(1.0)).astype(np.float32),
                                                      SR, subtype="FLOAT"))
    put("inf.wav", ("NaN or Inf",), lambda p: sf.write(p, np.where(np.arange(SR) == 5, np.inf, _speech(1.0)).astype(np.float32),
                                                      SR, subtype="FLOAT"))
    put("200_samples.wav", ("too short",), lambda p: sf.write(p, _speech(1.0)[:200], SR))
    put("rate_1hz.wav", ("sample rate 1 Hz",), lambda p: _wav_with_rate(p, 1))
    put("rate_2e9hz.wav", ("sample rate 2000000000 Hz",), lambda p: _wav_with_rate(p, 2_000_000_000))

    def cut_wav(p: Path) -> None:
        sf.write(p, _speech(5.0), SR)
        p.write_bytes(p.read_bytes()[:300])

    put("cut_300_bytes.wav", ("truncated", "80000 frames"), cut_wav)

    def cut_flac(p: Path) -> None:
        sf.write(p, _speech(5.0), SR)
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])

    put("cut_half.flac", ("truncated", "80000 frames"), cut_flac)

    # passed over by the walk, and listed
    (root / "readme.txt").write_text("not audio")
    (root / "dangling.wav").symlink_to(root / "no_such_file.wav")
    (root / "sub").mkdir()
    sf.write(root / "sub" / "nested.wav", _speech(1.0), SR)
    expect["sub/nested"] = "score"
    (root / "sub" / "loop").symlink_to(root)  # a folder link back up: never followed
    return expect, ["readme.txt", "dangling.wav"]


def _long_silent_flac(path: Path, minutes: float) -> None:
    with sf.SoundFile(path, "w", 48000, 1, subtype="PCM_16") as f:
        block = np.zeros(48000 * 60, np.float32)
        whole, rest = divmod(minutes, 1.0)
        for _ in range(int(whole)):
            f.write(block)
        f.write(block[: int(rest * len(block))])


def check_rows(rows: list[dict], expect: dict) -> list[str]:
    """What is wrong with ``rows`` (one per expected id, a score or the named error); [] if all good."""
    problems = []
    by_id: dict[str, list[dict]] = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(r)
    for item, outcome in expect.items():
        got = by_id.get(item, [])
        if len(got) != 1:
            problems.append(f"{item}: {len(got)} rows")
            continue
        row = got[0]
        if outcome == "score":
            if "error" in row or not np.isfinite(row.get("score", np.nan)):
                problems.append(f"{item}: expected a score, got {row.get('error')!r}")
        elif "error" not in row or not all(w in row["error"] for w in outcome):
            problems.append(f"{item}: expected an error naming {outcome}, got {row.get('error', row.get('score'))!r}")
    problems += [f"{i}: unexpected row" for i in by_id if i not in expect]
    return problems


# ---- the figures --------------------------------------------------------------------------------
def _score_cmd(judge: str, audio: Path, out: Path, batch_size: int = 4) -> list[str]:
    return [sys.executable, "-m", "evaluators.cli", "score", "audio", "--judge", judge, "--audio", str(audio),
            "--out", str(out), "--batch-size", str(batch_size)]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def _kill_loop(judge: str, audio: Path, out: Path, kills: int, seed: int) -> dict:
    """Start scoring, SIGKILL it at a random moment after it has written something, ``kills``
    times, then let it finish; count lost and duplicated rows against the finished set."""
    rng = random.Random(seed)
    landed = 0
    for _ in range(kills):
        proc = subprocess.Popen(_score_cmd(judge, audio, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(2.0, 6.0))  # the folder takes about 7 s to score, model load included
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            landed += 1
        proc.wait()
    subprocess.run(_score_cmd(judge, audio, out), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ids = [r["id"] for r in _rows(out)]
    return {"kills_landed": landed, "rows": len(ids), "duplicates": len(ids) - len(set(ids))}


def _throughput(judge_dir: str, audio: Path, batch_size: int, n_rounds: int = 5) -> dict:
    """clips/s of score_items, same clips, this run, best of ``n_rounds``: as shipped (fsync every
    4 batches, VAD on), without the VAD pass, and without the VAD pass and fsync (stubbed out)."""
    import evaluators.audio_scorer as scoring
    from evaluators.judges.registry import load_judge
    from evaluators.run_options import RunOptions

    judge = load_judge(judge_dir)
    items = scoring.collect_items(audio)
    real_fsync = os.fsync
    modes = {"shipped": (True, True), "no_vad": (True, False), "no_vad_no_fsync": (False, False)}
    timings: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(n_rounds):
            for mode, (fsync, vad) in modes.items():
                os.fsync = real_fsync if fsync else (lambda fd: None)
                try:
                    t0 = time.perf_counter()
                    scoring.score_items(judge, items, Path(tmp) / f"{mode}-{k}.jsonl", RunOptions(batch_size=batch_size),
                                        vad=vad)
                    timings[mode].append(time.perf_counter() - t0)
                finally:
                    os.fsync = real_fsync
    return {"clips": len(items), **{m: len(items) / min(t) for m, t in timings.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", help="judge folder (default: train the demo judge into --work)")
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--hour-minutes", type=float, default=60.0, help="length of the silent FLAC, minutes")
    ap.add_argument("--work", default=None, help="working folder (default: a temporary one, removed)")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="hostile-"))
    judge = args.judge
    if judge is None:
        from trainer.demo import run_demo

        run_demo(work / "demo", overrides={"att.corpus.clips_per_voice_dimension": 2, "optim.max_epochs": 1})
        judge = str(work / "demo" / "release")
    folder = work / "hostile"
    shutil.rmtree(folder, ignore_errors=True)
    expect, skipped = build_hostile_folder(folder, args.hour_minutes)

    out = work / "scores.jsonl"
    out.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    run = subprocess.run(_score_cmd(judge, folder, out), capture_output=True, text=True)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    problems = check_rows(_rows(out), expect)
    listed = [name for name in skipped if name in run.stderr]
    snapshot = out.read_bytes()
    rerun = subprocess.run(_score_cmd(judge, folder, out), capture_output=True, text=True)
    print(f"hostile inputs: {len(expect) + len(skipped)} tried; {len(expect) - len(problems)} of {len(expect)} "
          f"audio files gave the expected score or named error; {len(listed)} of {len(skipped)} skipped files "
          f"listed; exit code {run.returncode}")
    for p in problems:
        print(f"  PROBLEM {p}")
    print(f"rerun: exit code {rerun.returncode}, output unchanged: {out.read_bytes() == snapshot}")
    print(f"peak memory of the scoring process: {peak_mib:.0f} MiB (max RSS; earlier children: {before / 1024:.0f} MiB) "
          f"with a {args.hour_minutes:.0f}-minute 48 kHz FLAC in the folder")

    many = work / "many"
    shutil.rmtree(many, ignore_errors=True)
    many.mkdir()
    for i in range(160):
        sf.write(many / f"c{i:03d}.wav", _speech(2.0 + (i % 7), seed=i), SR)
    whole = work / "whole.jsonl"
    whole.unlink(missing_ok=True)
    subprocess.run(_score_cmd(judge, many, whole), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed = work / "killed.jsonl"
    killed.unlink(missing_ok=True)
    k = _kill_loop(judge, many, killed, args.kills, seed=0)
    ref = {r["id"]: r["score"] for r in _rows(whole)}
    got = {r["id"]: r["score"] for r in _rows(killed)}
    lost = len(set(ref) - set(got))
    differ = sum(abs(ref[i] - got[i]) > 1e-6 for i in set(ref) & set(got))
    print(f"kills: {k['kills_landed']} SIGKILLs landed mid-run over {len(ref)} clips; rows lost {lost}, "
          f"duplicated {k['duplicates']}, scores differing from an uninterrupted run {differ}")
    seconds = sum(sf.info(str(p)).duration for p in many.glob("*.wav"))
    for bs in (4, 16):
        t = _throughput(judge, many, bs)
        print(f"batch {bs}, {t['clips']} clips ({seconds:.0f} s of audio), clips/s best of 5: "
              f"no VAD, no fsync {t['no_vad_no_fsync']:.1f}; + fsync every 4 batches {t['no_vad']:.1f} "
              f"({100 * (t['no_vad_no_fsync'] / t['no_vad'] - 1):+.1f}% time); + Silero VAD (as shipped) "
              f"{t['shipped']:.1f} ({100 * (t['no_vad'] / t['shipped'] - 1):+.1f}% time)")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
