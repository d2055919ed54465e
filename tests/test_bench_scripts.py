"""The benchmark scripts run end to end on CPU with tiny models (the GPU runs use the same code)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*argv: str) -> str:
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_bench_scoring_compares_the_three_paths_on_the_same_files():
    out = _run("scripts/bench_scoring.py", "--clips", "6", "--batch-size", "4", "--max-tokens-per-batch", "4000",
               "--num-workers", "1", "--repeats", "1")
    for line in ("(a) stock loop", "(b) serial batched", "(c) pipeline", "pipeline vs stock loop",
                 "serial path, share of time: decode"):
        assert line in out
    diffs = [float(l.rsplit(":", 1)[1]) for l in out.splitlines() if l.startswith("max |score")]
    assert len(diffs) == 2 and max(diffs) <= 1e-6  # the three paths give the same scores


def test_bench_nvv_scoring_compares_workers_with_the_in_process_scorer():
    out = _run("scripts/bench_nvv_scoring.py", "--items-per-type", "1", "--num-workers", "1")
    assert "scorer, 0 workers" in out and "scorer, 1 workers" in out and "speed-up 1 workers vs 0" in out
    assert float(out.rsplit("max |P(present) difference|:", 1)[1].split()[0]) <= 1e-6


def test_bench_gpu_scoring_runs_tiny_on_cpu_with_token_budgets():
    out = _run("scripts/bench_gpu_scoring.py", "--size", "tiny", "--device", "cpu", "--clips", "6",
               "--batch-size", "3", "--min-seconds", "1", "--max-seconds", "2", "--token-budgets", "1000", "4000")
    assert "token budget   1000" in out and "best token budget" in out


@pytest.mark.parametrize("steps", [2])
def test_bench_gpu_training_runs_tiny_on_cpu_and_counts_model_flops(steps):
    out = _run("scripts/bench_gpu_training.py", "--tiny", "--device", "cpu", "--steps", str(steps),
               "--warmup", "1", "--min-seconds", "1", "--max-seconds", "2", "--peak-tflops", "1")
    assert "step time" in out and "MFU" in out and "model FLOPs per step" in out


def test_model_flops_golden_by_hand(monkeypatch):
    """2 x 16 LLM params x 8 tokens + 4 x 1 layer x 2 hidden x (3^2 + 5^2) = 528 forward, again for
    the backward; 2 x 6 audio params x (5 + 4) frames after the conv = 108; LoRA 3 x 2 x 8 x 8 = 384."""
    import importlib.util

    import torch

    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("bench_gpu_training", ROOT / "scripts" / "bench_gpu_training.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Fake(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.params = {"model.layers.0.q.weight": (4, 4), "audio_tower.layers.0.w": (2, 3),
                           "model.layers.0.q.lora_A.weight": (2, 4), "model.norm.bias": (4,)}

        def named_parameters(self, *a, **k):
            return [(n, torch.zeros(s)) for n, s in self.params.items()]

    assert module.flops_per_step(Fake(), [3, 5], [10, 7], n_layers=1, hidden=2) == 528 + 108 + 528 + 384


def test_bench_speecheditbench_scoring_reports_throughput_and_stage_shares():
    out = _run("scripts/bench_speecheditbench_scoring.py", "--tasks", "content", "style", "prosody")
    assert "items/s" in out and "share of wall time by stage" in out
    shares = {line.split()[0]: float(line.split()[-1].rstrip("%")) for line in out.splitlines()
              if line.startswith("  ") and line.rstrip().endswith("%") and not line.lstrip().startswith("other")}
    # pYIN (pitch, stress) and the VAD (speed) measured, not skipped, in the worker-side half
    assert shares["f0_track"] > 0 and shares["speech_active_seconds"] > 0 and shares["read_and_measure_signals"] > 0
    assert "rows identical across worker counts: True" in out and "--num-workers 1:" in out


def test_bench_speecheditbench_judges_compares_batches_and_one_pass_with_four_prompts():
    out = _run("scripts/bench_speecheditbench_judges.py", "--clips", "4", "--batch-size", "2")
    assert "three judges, batch  1" in out and "three judges, batch  2" in out
    assert "paralinguistic, one pass (trained head)" in out and "x the cost" in out
