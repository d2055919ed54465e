"""Throughput of `omnijudge score speecheditbench` and where its time goes.

Scores the synthetic edited corpus (or ``--corpus``) after one untimed warm-up pass, once per
``--num-workers`` value: items/s, seconds of output audio per second, whether every run's rows are
the same; for 0 workers also each stage's share of wall time (the providers' measure passes, audio
reading, judges, VAD, pYIN, RT60; the criteria's read-back of ASR, speaker, scene and DNSMOS rows). Manifest values are not recomputed (``--no-manifest-asr`` with
``--asr`` runs Whisper too). Measured: docs/performance.md#speecheditbench-scoring.

    python scripts/bench_speecheditbench_scoring.py [--corpus DIR] [--tasks ...] [--num-workers 0 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_common import timed  # noqa: E402 (scripts/ is on the path when run as a script)

STAGES = {
    # every provider's measure pass (ASR, speaker, scene, DNSMOS, ...): its model time is here
    "evaluators.measure_pass": ("measure_into",),
    # the scorer holds its own name of the worker-side half (imported from measure)
    "evaluators.benchmarks.speecheditbench.scorer": ("read_and_measure_signals",),
    "evaluators.benchmarks.speecheditbench.measure": ("read_audio", "run_asr", "run_speaker", "run_scene",
                                                      "run_dnsmos", "run_judges"),
    "evaluators.benchmarks.speecheditbench.evaluate": ("_speed", "_pitch", "_stress"),
    "evaluators.benchmarks.speecheditbench.prosody": ("f0_track", "speech_active_seconds"),
    "evaluators.benchmarks.speecheditbench.acoustics": ("rt60_from_deconvolution",),
}
#: Stages that run inside another (read_and_measure_signals, or the criteria when not done ahead).
NESTED = ("read_audio", "f0_track", "speech_active_seconds")


def instrument(spent: dict[str, float]) -> None:
    """Wrap each stage function so its wall time adds up in ``spent``."""
    import importlib

    for module_name, names in STAGES.items():
        module = importlib.import_module(module_name)
        for name in names:
            fn = getattr(module, name)

            def timed(*a, _fn=fn, _name=name, **k):
                t0 = time.perf_counter()
                try:
                    return _fn(*a, **k)
                finally:
                    spent[_name] += time.perf_counter() - t0

            setattr(module, name, timed)


def bench_inputs(args, work: Path) -> tuple[Path, Path, Path, Path]:
    """(corpus, the system's outputs, manifest, item folder) of the run: the corpus built unless given,
    the manifest's ASR words dropped with ``--no-manifest-asr``, noise items left out without ``--scene``."""
    from trainer.benchmarks.speecheditbench.corpus import SYSTEM, build_edited_corpus

    corpus = Path(args.corpus) if args.corpus else work / "corpus"
    if not args.corpus:
        build_edited_corpus(corpus)
    outputs = corpus / "outputs" / SYSTEM
    manifest = outputs / "manifest.jsonl"
    if args.no_manifest_asr:
        rows = [json.loads(x) for x in manifest.read_text().splitlines()]
        for r in rows:
            for k in ("asr_text", "word_timestamps", "source_asr_text", "source_word_timestamps"):
                r.pop(k, None)
        manifest = work / "manifest.jsonl"
        manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    items = corpus / "data"
    if not args.scene:
        items = work / "data"
        for f in (corpus / "data").glob("*/samples.jsonl"):
            keep = [x for x in f.read_text().splitlines() if json.loads(x).get("anchor", {}).get("env_type") != "noise"]
            (items / f.parent.name).mkdir(parents=True, exist_ok=True)
            (items / f.parent.name / "samples.jsonl").write_text("".join(x + "\n" for x in keep))
    return corpus, outputs, manifest, items


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", help="a synthetic corpus folder (default: build one in a temporary folder)")
    p.add_argument("--tasks", nargs="+", default=["content", "emotion", "style", "paralinguistic", "prosody",
                                                  "acoustic", "compositional"])
    p.add_argument("--no-manifest-asr", action="store_true", help="drop the manifest's ASR words (run --asr)")
    p.add_argument("--asr", help="Whisper checkpoint for --no-manifest-asr")
    p.add_argument("--scene", help="AudioSet classifier checkpoint (default: noise-transfer items are left out, "
                                   "since no checkpoint can be downloaded here)")
    p.add_argument("--num-workers", type=int, nargs="+", default=[0, 1], help="worker counts to compare")
    p.add_argument("--chunk", type=int, default=8, help="items measured together (the workers prepare the next "
                                                        "chunks meanwhile); the scorer's default is 32")
    p.add_argument("--rows-out", help="also write the first timed run's rows and the last one's report here "
                                      "(JSON), to compare two versions of the scorer")
    args = p.parse_args(argv)

    from evaluators.benchmarks.speecheditbench.provider_cache import ProviderSet
    from evaluators.benchmarks.speecheditbench.scorer import EditScoring, score_speecheditbench
    from evaluators.run_options import RunOptions

    work = Path(tempfile.mkdtemp(prefix="seb_bench_"))
    corpus, outputs, manifest, items = bench_inputs(args, work)
    spent: dict[str, float] = defaultdict(float)
    instrument(spent)
    def run(name: str, workers: int) -> tuple[dict, float]:
        # a fresh provider set (and cache folder) per run: no run reads another's DNSMOS or ASR values
        providers = ProviderSet(**({"asr": args.asr} if args.asr else {}), **({"scene": args.scene} if args.scene else {}))
        spent.clear()
        scoring = EditScoring(manifest=manifest, source_root=corpus, tasks=args.tasks, n_resamples=1000,
                              chunk=args.chunk)
        return timed(score_speecheditbench, items, outputs, work / name, providers=providers, scoring=scoring,
                     run=RunOptions(num_workers=workers))

    run("warm-up", 0)
    import soundfile as sf

    walls, stage_shares, rows = {}, None, {}
    for workers in args.num_workers:
        result, wall = run(f"run-{workers}", workers)
        walls[workers] = wall
        rows[workers] = [{k: v for k, v in r.items() if k != "output_wav"} for r in result["rows"]]
        if workers == 0:
            stage_shares = dict(spent)
    scored = [r for r in result["rows"] if not r.get("missing") and r.get("output_wav")]
    audio_s = sum(sf.info(r["output_wav"]).duration for r in scored if "error" not in r)
    print(f"items scored: {len(scored)} ({len(result['rows'])} in the item files), {audio_s:.1f} s of output audio")
    first = args.num_workers[0]
    for workers, wall in walls.items():
        print(f"--num-workers {workers}: wall {wall:.2f} s, {len(scored) / wall:.2f} items/s, "
              f"{audio_s / wall:.2f} s of audio per second, {walls[first] / wall:.2f}x --num-workers {first}")
    same = all(r == rows[first] for r in rows.values())
    if args.rows_out:
        Path(args.rows_out).write_text(json.dumps({"rows": rows[first], "report": result["report"]}, indent=1,
                                                  ensure_ascii=False, sort_keys=True) + "\n")
    print(f"rows identical across worker counts: {same}")
    if stage_shares is not None:
        wall = walls[0]
        print("share of wall time by stage (--num-workers 0; indented: inside the stage above it or the criteria):")
        for name, s in sorted(stage_shares.items(), key=lambda kv: (kv[0] in NESTED, -kv[1])):
            print(f"  {'  ' if name in NESTED else ''}{name:<24} {s:7.2f} s  {100 * s / wall:5.1f}%")
        top = sum(v for k, v in stage_shares.items() if k not in NESTED)
        print(f"  {'other (criteria, rows, tables)':<24} {wall - top:7.2f} s  {100 * (wall - top) / wall:5.1f}%")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
