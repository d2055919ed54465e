"""The measuring half of ``scripts/gpu_check.py``: one step per child process (see that docstring).

Every step writes its record to ``--result`` after each measurement, so a step stopped by its time
limit or killed by an out-of-memory still leaves what it had measured.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import torch

from bench_common import peak_gib, reset_peak, speech_clips as clips, sync, write_json, write_wavs
from bench_gpu_training import device_peak_tflops, flops_per_step

SAMPLE_RATE = 16000
PROFILE_ROWS = 15


class Recorder:
    """The step's record, rewritten to its file on every :meth:`put`."""

    def __init__(self, path: Path):
        self.path, self.record = path, {}

    def put(self, key: str, value) -> None:
        self.record[key] = value
        write_json(self.path, self.record)


def device_of(dry_run: bool) -> str:
    if dry_run:
        return "cpu"
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: run on a GPU, or give --dry-run")
    return "cuda"


def profile_table(prof, device: str) -> list[dict]:
    """The top :data:`PROFILE_ROWS` operations by their own device time (CPU time on CPU), in ms."""
    rows = []
    for e in operations(prof):
        dev = getattr(e, "self_device_time_total", None)
        if dev is None:
            dev = getattr(e, "self_cuda_time_total", 0)
        rows.append({"op": e.key, "calls": e.count, "self_device_ms": round(dev / 1e3, 3),
                     "self_cpu_ms": round(e.self_cpu_time_total / 1e3, 3)})
    key = "self_device_ms" if device == "cuda" else "self_cpu_ms"
    return sorted(rows, key=lambda r: -r[key])[:PROFILE_ROWS]


def operations(prof) -> list:
    """The profile's operations and kernels, without the spans code opens around them (Lightning
    runs forward and backward inside the optimizer step's closure, so ``Optimizer.step#AdamW.step``
    spans a whole training step on the device too)."""
    return [e for e in prof.key_averages()
            if not getattr(e, "is_user_annotation", False) and not e.key.startswith(("Optimizer.", "ProfilerStep"))]


def kernel_ms(prof) -> float:
    """Milliseconds the device spent running kernels in the profiled span (each kernel once)."""
    from torch.autograd import DeviceType

    return round(sum(e.self_device_time_total for e in operations(prof) if e.device_type == DeviceType.CUDA) / 1e3, 2)


def profiler(device: str):
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return torch.profiler.profile(activities=acts)


# ---------------------------------------------------------------------------------------------
# score: build, engine throughput per clip length, largest 30 s batch, one profiled batch


def build_judge(device: str, dry_run: bool):
    from evaluators.backbones import AudioLLM
    from evaluators.backbones.full_size import full_size_backbone
    from evaluators.judges.presets import get_preset
    from evaluators.judges.verbalizer import VerbalizerJudge

    if dry_run:
        backbone = AudioLLM.tiny("qwen2_5_omni", device=device, dtype=torch.float32)
    else:
        backbone = full_size_backbone("qwen2_5_omni", device, torch.bfloat16, "sdpa")
    return VerbalizerJudge(backbone, get_preset("auto-att"))


def write_clips(folder: Path, seconds: float, n: int):
    """``n`` speech-like clips of exactly ``seconds`` as 16 kHz WAVs, as :class:`ScoreItem` s."""
    from evaluators.audio_scorer import ScoreItem

    paths = write_wavs(folder, clips(n, seconds, seconds, seed=int(seconds)), SAMPLE_RATE)
    return [ScoreItem(id=f"{seconds:g}s-{i}", path=path) for i, path in enumerate(paths)]


class BusyClock:
    """Wraps a judge's ``score_examples`` to add up the time the model runs (device synced), so
    ``1 - busy / wall`` is the share of a run the device waits for prepared inputs."""

    def __init__(self, judge, device: str):
        self.busy, self.device, inner = 0.0, device, judge.score_examples

        def timed(examples, batch_size=8):
            sync(device)
            t = time.perf_counter()
            out = inner(examples, batch_size=batch_size)
            sync(device)
            self.busy += time.perf_counter() - t
            return out

        judge.score_examples = timed


def engine_run(judge, clock: BusyClock, items, work: Path, device: str, batch_size: int,
               budget: int | None, num_workers: int) -> dict:
    """One ``score_items`` pass (fresh rows file) -> clips/s, peak memory, device-wait share."""
    from evaluators.audio_scorer import score_items
    from evaluators.run_options import RunOptions

    out = work / "rows.jsonl"
    out.unlink(missing_ok=True)
    reset_peak(device)
    clock.busy = 0.0
    t = time.perf_counter()
    rows = score_items(judge, items, out, RunOptions(batch_size=batch_size, num_workers=num_workers), vad=False,
                       max_tokens_per_batch=budget)
    wall = time.perf_counter() - t
    errors = [r["error"] for r in rows if "error" in r]
    return {"clips_per_s": round(len(items) / wall, 2), "wall_s": round(wall, 2), "peak_gib": peak_gib(device),
            "device_wait_share": round(max(0.0, 1 - clock.busy / wall), 3), "errors": len(errors),
            **({"first_error": errors[0]} if errors else {})}


def largest_batch(judge, seconds: float, sizes: list[int], device: str) -> dict:
    """The largest batch of ``seconds`` clips one forward pass holds, doubling until out of memory."""
    wave = clips(1, seconds, seconds, seed=7)[0]
    example = judge.prepare_input({"wave": wave, "fields": {}})
    fits, failed_at = None, None
    for size in sizes:
        try:
            reset_peak(device)
            t = time.perf_counter()
            judge.score_examples([example] * size, batch_size=size)
            sync(device)
            fits = {"batch": size, "seconds": round(time.perf_counter() - t, 2), "peak_gib": peak_gib(device)}
        except torch.OutOfMemoryError:
            failed_at = size
            break
        finally:
            if device == "cuda":
                torch.cuda.empty_cache()
    return {"clip_s": seconds, "largest_batch": fits, "out_of_memory_at": failed_at, "tried": sizes}


def score_step(rec: Recorder, work: Path, dry_run: bool) -> None:
    device = device_of(dry_run)
    t = time.perf_counter()
    judge = build_judge(device, dry_run)
    sync(device)
    n_params = sum(p.numel() for p in judge.backbone.model.parameters())
    rec.put("build", {"seconds": round(time.perf_counter() - t, 1), "parameters_b": round(n_params / 1e9, 3),
                      "dtype": str(judge.backbone.model.dtype), "device": device, "source": judge.backbone.source,
                      "memory_gib": peak_gib(device)})
    durations, n_clips = ((1.0, 2.0, 3.0), 4) if dry_run else ((5.0, 10.0, 30.0), 64)
    budgets = [2000, 4000] if dry_run else [16000, 32000, 64000]
    num_workers = 0 if dry_run else min(8, (os.cpu_count() or 2) - 1)
    clock = BusyClock(judge, device)
    rec.put("engine", {"preset": "auto-att", "num_workers": num_workers, "vad": False, "clips_per_length": n_clips})
    by_length = {}
    for seconds in durations:
        items = write_clips(work / f"clips_{seconds:g}s", seconds, n_clips if seconds < 30 else n_clips // 2)
        engine_run(judge, clock, items[:2], work, device, 2, None, 0)  # warm-up: kernels, allocator
        runs = {"prompt_tokens": judge.estimated_tokens(seconds), "clips": len(items),
                "batch_1": engine_run(judge, clock, items, work, device, 1, None, num_workers), "budgets": {}}
        by_length[f"{seconds:g}s"] = runs
        for budget in budgets:
            runs["budgets"][str(budget)] = engine_run(judge, clock, items, work, device, 256, budget, num_workers)
            best = max(runs["budgets"], key=lambda b: runs["budgets"][b]["clips_per_s"])
            runs["best_budget"] = int(best)
            runs["best_vs_batch_1"] = round(runs["budgets"][best]["clips_per_s"] / runs["batch_1"]["clips_per_s"], 2)
            rec.put("scoring", by_length)
    sizes = [1, 2, 4] if dry_run else [8, 16, 32, 64, 128, 256]
    rec.put("largest_batch", largest_batch(judge, durations[-1], sizes, device))
    profiled = [judge.prepare_input({"wave": w, "fields": {}})
                for w in clips(2 if dry_run else 16, durations[1], durations[1], seed=11)]
    judge.score_examples(profiled, batch_size=len(profiled))
    with profiler(device) as prof:
        judge.score_examples(profiled, batch_size=len(profiled))
        sync(device)
    rec.put("profile_scoring_batch", {"clips": len(profiled), "clip_s": durations[1], "device_kernel_ms": kernel_ms(prof),
                                      "top_ops": profile_table(prof, device)})


# ---------------------------------------------------------------------------------------------
# train / train_zero2: the Lightning path of `omnijudge train`, timed by a callback


def step_timer(device: str, warmup: int, peak_tflops: float | None, on_end=None):
    """A Lightning callback timing each optimizer step (forward + backward + step; device synced)
    and the gaps between steps; profiles the first step after the warm-up; hands its summary to
    ``on_end`` when training ends (before the judge is exported and the strategy torn down)."""
    import lightning as L

    class StepTimer(L.Callback):
        def __init__(self):
            self.steps, self.gaps, self.last_end, self.prof, self.table = [], [], None, None, None

        def on_train_batch_start(self, trainer, module, batch, batch_idx):
            sync(device)
            now = time.perf_counter()
            if self.last_end is not None and len(self.steps) >= warmup:
                self.gaps.append(now - self.last_end)
            if len(self.steps) == warmup:
                reset_peak(device)
            if len(self.steps) == warmup + 1 and self.table is None:
                self.prof = profiler(device).__enter__()
            self.t0 = time.perf_counter()

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            sync(device)
            seconds = time.perf_counter() - self.t0
            inputs = batch.inputs
            lengths = inputs["attention_mask"].sum(1).tolist()
            frames = inputs["feature_attention_mask"].sum(1).tolist()
            text = getattr(module.judge.backbone.model.config, "text_config", module.judge.backbone.model.config)
            flops = flops_per_step(module.judge.backbone.model, lengths, frames, text.num_hidden_layers,
                                   text.hidden_size)
            profiled = self.prof is not None
            if profiled:
                self.prof.__exit__(None, None, None)
                self.table = profile_table(self.prof, device)
                self.kernel_ms, self.profiled_step_s, self.prof = kernel_ms(self.prof), seconds, None
            self.steps.append({"seconds": seconds, "clips": len(lengths), "tokens": int(sum(lengths)),
                               "padded_tokens": int(inputs["attention_mask"].numel()), "flops": flops,
                               "audio_s": float(sum(frames)) / 100, "profiled": profiled})
            self.last_end = time.perf_counter()

        def on_train_end(self, trainer, module):
            if on_end is not None:
                on_end(self)

        def summary(self) -> dict:
            timed = [s for s in self.steps[warmup:] if not s["profiled"]]
            if not timed:
                return {"steps_run": len(self.steps)}
            secs = sum(s["seconds"] for s in timed)
            flops = sum(s["flops"] for s in timed)
            out = {"steps_run": len(self.steps), "steps_timed": len(timed), "warmup_steps": warmup,
                   "step_s_mean": round(secs / len(timed), 4),
                   "step_s_median": round(float(np.median([s["seconds"] for s in timed])), 4),
                   "samples_per_s": round(sum(s["clips"] for s in timed) / secs, 2),
                   "tokens_per_s": round(sum(s["tokens"] for s in timed) / secs, 1),
                   "padding_share": round(1 - sum(s["tokens"] for s in timed) / sum(s["padded_tokens"] for s in timed), 3),
                   "clip_s_mean": round(sum(s["audio_s"] for s in timed) / sum(s["clips"] for s in timed), 2),
                   "model_tflop_per_step": round(flops / len(timed) / 1e12, 3),
                   "between_steps_share": round(sum(self.gaps) / (sum(self.gaps) + secs), 3) if self.gaps else None,
                   "peak_gib": peak_gib(device)}
            if peak_tflops:
                out["mfu"] = round(flops / secs / (peak_tflops * 1e12), 4)
                out["peak_bf16_tflops"] = peak_tflops
            return out

    return StepTimer()


def record_training(rec: Recorder, timer) -> None:
    rec.put("training", timer.summary())
    if timer.table is not None:
        rec.put("profile_training_step", {"step_s": round(timer.profiled_step_s, 3), "device_kernel_ms": timer.kernel_ms,
                                          "top_ops": timer.table})


def train_step(rec: Recorder, work: Path, dry_run: bool, zero2: bool, batch_size: int | None) -> None:
    """One fixed-length training run through ``trainer.train.train`` (``configs/att/gpu_check.yaml``)."""
    if zero2:
        try:
            import deepspeed  # noqa: F401
        except Exception as e:  # an absent package, or one that fails to import on this machine
            rec.put("status", "skipped")
            rec.put("reason", f"deepspeed does not import: {type(e).__name__}: {e}")
            return
    from trainer.config import load_config
    from trainer.train import train

    device = device_of(dry_run)
    overrides = {"out_dir": str(work / ("run_zero2" if zero2 else "run")),
                 "data.corpus_dir": str(work / "att_corpus")}
    if batch_size:
        overrides["data.batch_size"] = batch_size
    if zero2:
        overrides.update({"hardware.strategy": "deepspeed_stage_2", "hardware.deepspeed_config": "configs/deepspeed/zero2.json"})
    if dry_run:
        overrides.update({"backbone.source": "tiny", "backbone.dtype": "float32", "backbone.attn_implementation": None,
                          "hardware.accelerator": "cpu", "hardware.precision": "32-true", "data.num_workers": 0,
                          "optim.max_steps": 5, "att.corpus.clips_per_voice_dimension": 1, "att.corpus.max_clip_s": 3.5})
    cfg = load_config(Path(__file__).resolve().parents[1] / "configs/att/gpu_check.yaml", overrides)
    peak = device_peak_tflops() if device == "cuda" else None
    timer = step_timer(device, warmup=2, peak_tflops=peak, on_end=lambda t: record_training(rec, t))
    rec.put("config", {"file": "configs/att/gpu_check.yaml", "overrides": overrides,
                       "batch_size": cfg.data.batch_size, "lora_r": cfg.lora.r, "precision": cfg.hardware.precision,
                       "gradient_checkpointing": cfg.backbone.gradient_checkpointing, "max_steps": cfg.optim.max_steps})
    t = time.perf_counter()
    try:
        train(cfg, resume=False, callbacks=[timer])
        rec.put("train_call_s", round(time.perf_counter() - t, 1))  # with corpus, build, export
    finally:
        if "training" not in rec.record:  # training stopped before its end
            record_training(rec, timer)


def run_child_step(step: str, result: Path, work: Path, dry_run: bool, train_batch_size: int | None) -> None:
    rec = Recorder(result)
    if step == "score":
        score_step(rec, work, dry_run)
    else:
        train_step(rec, work, dry_run, zero2=step == "train_zero2", batch_size=train_batch_size)
