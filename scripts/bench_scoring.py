"""Where scoring time goes: the per-file stock loop, the serial batched path and the prefetching
pipeline, on the same audio files, in one run (CPU by default).

  (a) stock loop: what a user would write from the public Auto-ATT inference: per file, decode,
      resample, features padded to 30 s, the prompt, one ``generate(max_new_tokens=1)``;
  (b) serial batched: ``score_items`` with no data-loader workers (length-sorted batches);
  (c) pipeline: ``score_items`` with ``--num-workers`` workers and a token budget.

Prints clips/s and seconds of audio per second for each, the ratios (same run), the largest score
difference between the paths, and the share of the serial path's time spent in decode, features,
tokenise, forward and write. The Silero VAD pass is off in (b) and (c), as (a) has none.

    python scripts/bench_scoring.py [--judge DIR] [--clips 64] [--batch-size 16]
        [--max-tokens-per-batch 12000] [--num-workers 1] [--threads 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
from scipy.signal import resample_poly

from bench_common import speech_clips, timed, write_wavs
from evaluators.audio_io import load_audio
from evaluators.backbones import AudioLLM
from evaluators.judges.presets import get_preset
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.audio_scorer import collect_items, score_items
from evaluators.run_options import RunOptions

FILE_SR = 24_000  # the files are written at a TTS rate, so every path resamples


def write_clips(folder: Path, n: int) -> float:
    """``n`` speech-like WAVs of 2-12 s at 24 kHz; returns their total seconds."""
    waves = speech_clips(n, 2.0, 12.0, sr=FILE_SR)
    write_wavs(folder, waves, FILE_SR, stem="c")
    return sum(len(w) for w in waves) / FILE_SR


@torch.no_grad()
def stock_loop(judge: VerbalizerJudge, files: list[Path]) -> dict[str, float]:
    """Per file: decode, resample, 30 s padded features, prompt, one generate step; the score is
    the label-weighted value of the first generated token's distribution over the label words."""
    llm, scores = judge.backbone, {}
    for path in files:
        data, sr = sf.read(path, dtype="float32")
        wave = resample_poly(data, 16000, sr).astype(np.float32)
        fe = llm.feature_extractor(wave, sampling_rate=16000, padding="max_length", return_attention_mask=True,
                                   return_tensors="pt")
        n_valid = int(fe["attention_mask"].sum())
        before, after = judge.user_text({})
        ids = torch.tensor([llm.encode_text(n_valid, after, judge.preset.system_prompt, before,
                                            judge.preset.assistant_prefix)])
        out = llm.model.generate(input_ids=ids.to(llm.device), attention_mask=torch.ones_like(ids).to(llm.device),
                                 input_features=fe["input_features"].to(llm.device, llm.dtype),
                                 feature_attention_mask=fe["attention_mask"].to(llm.device),
                                 max_new_tokens=1, do_sample=False, output_scores=True, return_dict_in_generate=True)
        probs = torch.softmax(out.scores[0][0, judge.label_ids.to(llm.device)].double(), dim=-1).cpu().numpy()
        scores[path.stem] = float(probs @ np.asarray(judge.preset.values))
    return scores


def stage_shares(judge: VerbalizerJudge, files: list[Path], batch_size: int) -> dict[str, float]:
    """Seconds the serial path spends per stage, each timed alone over all files."""
    llm, t = judge.backbone, {}
    waves, t["decode"] = timed(lambda: [load_audio(p) for p in files])
    feats, t["features"] = timed(lambda: [llm.features(w) for w in waves])
    before, after = judge.user_text({})
    ids, t["tokenise"] = timed(lambda: [llm.encode_text(n, after, judge.preset.system_prompt, before,
                                                        judge.preset.assistant_prefix) for _, n in feats])
    clips = [{"segments": [(1.0, {"input_ids": np.asarray(i, dtype=np.int64), "input_features": f, "n_frames": n})]}
             for i, (f, n) in zip(ids, feats)]
    outs, t["forward"] = timed(judge.score_examples, clips, batch_size=batch_size)
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "rows.jsonl", "w") as f:
        t0 = time.perf_counter()
        for k, o in enumerate(outs):
            f.write(json.dumps({"id": str(k), "score": o["score"], "probs": o["probs"]}) + "\n")
            if (k + 1) % (4 * batch_size) == 0:
                f.flush()
                os.fsync(f.fileno())
        f.flush()
        os.fsync(f.fileno())
        t["write"] = time.perf_counter() - t0
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", help="judge folder (default: tiny random Qwen2.5-Omni thinker + auto-att preset)")
    ap.add_argument("--clips", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-tokens-per-batch", type=int, default=12000)
    ap.add_argument("--num-workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2,
                    help="torch threads of the main process; with workers the model gets what they leave (threads - workers)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of (b) and (c) each; the best is reported")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    judge = (VerbalizerJudge.from_pretrained(args.judge) if args.judge
             else VerbalizerJudge(AudioLLM.tiny(), get_preset("auto-att")))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "clips"
        folder.mkdir()
        audio_s = write_clips(folder, args.clips)
        files = sorted(folder.glob("*.wav"))
        items = collect_items(folder)
        stock_loop(judge, files[:2])  # warm-up
        stock, dt = timed(stock_loop, judge, files)
        paths = {"(a) stock loop": (dt, stock)}
        for name, workers, budget in (("(b) serial batched", 0, None),
                                      ("(c) pipeline", args.num_workers, args.max_tokens_per_batch)):
            runs = [timed(score_items, judge, items, Path(tmp) / f"{workers}-{rep}.jsonl",
                          RunOptions(batch_size=args.batch_size, num_workers=workers), vad=False,
                          max_tokens_per_batch=budget)
                    for rep in range(args.repeats)]  # best of N: one run of a few seconds is noisy on a shared machine
            paths[name] = (min(dt for _, dt in runs), {r["id"]: r["score"] for r in runs[-1][0]})
        print(f"{args.clips} clips, {audio_s:.0f} s of audio at {FILE_SR} Hz, batch {args.batch_size}, "
              f"{args.threads} torch threads; pipeline: {args.num_workers} workers, "
              f"{args.max_tokens_per_batch} tokens per batch; (b), (c): best of {args.repeats}")
        for name, (dt, _) in paths.items():
            print(f"{name:20s} {args.clips / dt:8.1f} clips/s  {audio_s / dt:8.1f} s of audio per s")
        t_a, t_b, t_c = (paths[k][0] for k in paths)
        print(f"pipeline vs stock loop: {t_a / t_c:.2f}x; pipeline vs serial batched: {t_b / t_c:.2f}x; "
              f"serial batched vs stock loop: {t_a / t_b:.2f}x")
        ref = paths["(b) serial batched"][1]
        for name in ("(a) stock loop", "(c) pipeline"):
            print(f"max |score {name} - score (b)|: {max(abs(paths[name][1][k] - ref[k]) for k in ref):.2e}")
        shares = stage_shares(judge, files, args.batch_size)
        total = sum(shares.values())
        print("serial path, share of time: " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in shares.items()))


if __name__ == "__main__":
    main()
