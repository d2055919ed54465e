"""NVV verifier scoring throughput (clips/s, CPU by default): one clip per call vs batches, and
the whole benchmark scorer with its inputs prepared in this process vs by data-loader workers.

On synthetic NVV items (``omnijudge synth nvv``; unit times from the corpus alignment): ``score``
at batch 1 and N, and ``verify_outputs`` (what ``omnijudge score nvv`` runs, FLAC files and
manifest word times in) with ``--num-workers`` 0 and N; each with clips/s, the speed-up and the
largest P(present) difference (docs/performance.md).

    python scripts/bench_nvv_scoring.py [--judge VERIFIER_DIR] [--items-per-type 1] [--batch-size 8]
        [--num-workers 1]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import soundfile as sf
import torch

from bench_common import timed
from evaluators.audio_io import load_audio
from evaluators.backbones import AudioLLM
from evaluators.benchmarks.nvv.items import load_items, position_units
from evaluators.benchmarks.nvv.scorer import collect_outputs, verify_outputs
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
from evaluators.run_options import RunOptions
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, build_nvv_corpus
from trainer.benchmarks.nvv.task import load_nvv_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", help="verifier folder (default: tiny random thinker + untrained verifier head)")
    ap.add_argument("--items-per-type", type=int, default=1, help="synthetic items per (language, type): 90 clips per 1")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2, help="torch threads (the scorer gives the workers theirs)")
    ap.add_argument("--num-workers", type=int, default=1, help="data-loader workers of the scorer run")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.judge:
        verifier = NvvVerifierJudge.from_pretrained(args.judge)
    else:
        llm = AudioLLM.tiny()
        verifier = NvvVerifierJudge(llm, NvvVerifierJudge.new_head(llm))
    with tempfile.TemporaryDirectory() as tmp:
        build_nvv_corpus(NvvCorpusConfig(seed=0, items_per_type=args.items_per_type), Path(tmp))
        rows = load_nvv_rows(tmp)
        waves = [load_audio(r["path"]) for r in rows]
        bench_score(verifier, rows, waves, args)
        bench_scorer(verifier, Path(tmp), args)


def bench_score(verifier, rows: list[dict], waves: list, args) -> None:
    inputs = [{"wave": w, **{k: r[k] for k in ("text", "lang", "target_type", "unit_times")}}
              for w, r in zip(waves, rows)]
    audio_s = sum(len(w) for w in waves) / 16000
    verifier.score(inputs[:4], batch_size=4)  # warm-up
    results = {}
    for bs in (1, args.batch_size):
        _, dt = results[bs] = timed(verifier.score, inputs, batch_size=bs)
        print(f"batch {bs:>2}: {len(waves) / dt:7.1f} clips/s  {audio_s / dt:7.1f} s audio/s  "
              f"({len(waves)} clips, {audio_s:.0f} s of audio, {dt:.1f} s)")
    (one, t1), (many, tn) = results[1], results[args.batch_size]
    print(f"speed-up batch {args.batch_size} vs 1: {t1 / tn:.2f}x")
    diff = max(abs(a["p_present"] - b["p_present"]) for a, b in zip(one, many))
    same = sum(a["present"] == b["present"] and a["position"] == b["position"] for a, b in zip(one, many))
    print(f"max |P(present) difference|: {diff:.2e}; identical decisions: {same}/{len(waves)}")


def bench_scorer(verifier, corpus: Path, args) -> None:
    """``verify_outputs`` over the corpus clips as FLAC outputs with manifest word times, inputs
    prepared in this process vs by ``args.num_workers`` workers."""
    items, outputs = _benchmark_files(corpus, corpus / "bench")
    results = {}
    for workers in (0, args.num_workers):
        pred_dir = corpus / "bench" / f"pred-{workers}"
        _, dt = timed(verify_outputs, verifier, items, outputs, pred_dir,
                      run=RunOptions(batch_size=args.batch_size, num_workers=workers))
        rows = [json.loads(x) for x in (pred_dir / "bench.jsonl").read_text().splitlines()]
        results[workers] = ({r["id"]: r for r in rows}, dt)
        print(f"scorer, {workers} workers: {len(rows) / dt:7.1f} clips/s ({len(rows)} outputs, {dt:.1f} s; "
              f"read + VAD + features + forward + rows)")
    (serial, t0), (piped, t1) = results[0], results[args.num_workers]
    diff = max(abs(serial[k]["p_present"] - piped[k]["p_present"]) for k in serial)
    print(f"speed-up {args.num_workers} workers vs 0: {t0 / t1:.2f}x; max |P(present) difference|: {diff:.2e}")


def _benchmark_files(corpus: Path, root: Path):
    """The corpus as the benchmark's items and one system's FLAC outputs with manifest word times."""
    from trainer.benchmarks.nvv.task import unit_times_from_alignment

    corpus_rows = [json.loads(x) for x in (corpus / "items.jsonl").read_text().splitlines()]
    (root / "bench").mkdir(parents=True)
    keep = ("id", "text", "text_with_mark", "non_verbal_events")
    (root / "items.jsonl").write_text("".join(json.dumps({k: r[k] for k in keep}, ensure_ascii=False) + "\n"
                                              for r in corpus_rows))
    manifest = []
    for r in corpus_rows:
        wave, sr = sf.read(corpus / r["audio"])
        sf.write(root / "bench" / f"{r['id']}.flac", wave, sr)
        words = position_units(r["text"], r["lang"])
        times = unit_times_from_alignment(r["alignment"], len(words), r["id"])
        manifest.append({"id": r["id"], "system": "bench", "audio": f"bench/{r['id']}.flac",
                         "word_timestamps": [[w, a, b] for w, (a, b) in zip(words, times)]})
    (root / "manifest.jsonl").write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in manifest))
    items = load_items(root / "items.jsonl")
    return items, collect_outputs(root, items, None)


if __name__ == "__main__":
    main()
