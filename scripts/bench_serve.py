"""Throughput and latency of ``omnijudge serve`` against offline ``omnijudge score``, same clips,
same judge, same run (``docs/serve.md#measured``: what it posts and prints, and the figures).

Per number of concurrent clients (``--levels``), that many threads post round-robin over the clips
for ``--seconds``: requests/s, p50 / p99 latency, failures, mean batch; then ``x offline`` against
the best offline clips/s of ``score_items`` (or, with ``--judge`` on the pairwise family, of the
slot's own model run as the server runs a batch) on the same clips.

    python scripts/bench_serve.py                              # tiny judge, 16 clips, 20 s per level
    python scripts/bench_serve.py --levels 64 --seconds 120    # the 2-minute 64-client soak
    python scripts/bench_serve.py --family emergenttts-win-rate --levels 16,64   # two-audio requests
    python scripts/bench_serve.py --family emergenttts-win-rate --judge in-prompt-pair --levels 16,64
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import requests

from bench_common import serving, speech_wav_files, timed
from emergenttts_serve_check import valid, win_rate_messages
from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.emergenttts.prompts import categories
from evaluators.audio_scorer import ScoreItem, score_items
from evaluators.run_options import RunOptions
from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.batcher import BatchOptions
from evaluators.serve.routes import JudgeLoader, ModelRoute, Routes, load_route_judges


def best_rate(run, n: int, batch_sizes: tuple[int, ...]) -> dict[int, float]:
    """``n`` / seconds of ``run(batch_size, k)``, best of two runs at each batch size (on CPU a tiny
    model can be fastest at batch 1, so the best is the bar)."""
    return {b: max(n / timed(run, b, k)[1] for k in range(2)) for b in batch_sizes}


def offline_clips_per_s(judge, paths: list[Path], out: Path, batch_sizes: tuple[int, ...]) -> dict[int, float]:
    """clips/s of ``score_items`` (no VAD, no workers: as the server scores) at each batch size."""
    items = [ScoreItem(p.stem, p) for p in paths]
    return best_rate(lambda b, k: score_items(judge, items, out.with_name(f"offline_b{b}_{k}.jsonl"),
                                              RunOptions(batch_size=b), vad=False), len(paths), batch_sizes)


def offline_requests_per_s(slot, paths: list[Path], batch_sizes: tuple[int, ...], pairs: bool) -> dict[int, float]:
    """Items/s of a pairwise slot's model run as the server runs a request batch
    (``batcher.score_requests``, no HTTP): ``pairs`` (an in-prompt judge: clips (k, k+1)
    in one item, both orders) or clips (a per-clip judge: one clip per item)."""
    from evaluators.audio_io import load_audio
    from evaluators.serve.batcher import score_requests

    waves = [load_audio(p) for p in paths]
    inputs = [{"wave": waves[k], "fields": {"text": f"Sentence {k}"},
               **({"wave_b": waves[(k + 1) % len(waves)]} if pairs else {})} for k in range(len(waves))]
    return best_rate(lambda b, k: score_requests(slot, inputs, b), len(inputs), batch_sizes)


def reply_ok(body: dict) -> bool:
    """A Gemini reply's text, or an OpenAI reply that EmergentTTS-Eval's validator accepts."""
    if "candidates" in body:
        return bool(body["candidates"][0]["content"]["parts"][0]["text"])
    return valid(json.loads(body["choices"][0]["message"]["content"]))


def att_bodies(paths: list[Path]) -> list[bytes]:
    """The released Auto-ATT prompt with one inline clip each (``generateContent``)."""
    return [json.dumps({"contents": [{"parts": [{"text": RELEASED_PROMPT}, {"inline_data": {
        "mime_type": "audio/wav", "data": base64.b64encode(p.read_bytes()).decode()}}]}],
        "generationConfig": {"temperature": 0}}).encode() for p in paths]


def win_rate_bodies(paths: list[Path]) -> list[bytes]:
    """EmergentTTS-Eval's judge request over clips (k, k+1), the categories in turn (chat completions)."""
    data = [base64.b64encode(p.read_bytes()).decode() for p in paths]
    return [json.dumps({"model": "bench", "temperature": 0, "top_p": 0.9, "max_tokens": 16384, "messages": win_rate_messages(
        f"Sentence {k}: is it over? Yes... it is.", categories()[k % len(categories())],
        (data[k % len(data)], data[(k + 1) % len(data)]))}).encode() for k in range(len(paths))]


def run_level(url: str, bodies: list[bytes], clients: int, seconds: float, batcher) -> dict:
    """``clients`` threads posting round-robin for ``seconds``; latency percentiles and rates."""
    latencies, failures, lock = [], [], threading.Lock()
    stop_at = time.monotonic() + seconds
    batches0, requests0 = batcher.batches, batcher.batched_requests

    def client(k: int) -> None:
        session, i = requests.Session(), k
        while time.monotonic() < stop_at:
            start = time.perf_counter()
            try:
                r = session.post(url, data=bodies[i % len(bodies)], headers={"Content-Type": "application/json"},
                                 timeout=300)
                ok = r.status_code == 200 and reply_ok(r.json())
            except (requests.RequestException, ValueError, KeyError) as e:
                ok, r = False, e
            with lock:
                (latencies if ok else failures).append(time.perf_counter() - start if ok else str(r)[:200])
            i += clients

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    n_batches = batcher.batches - batches0
    lat = np.array(latencies) if latencies else np.array([np.nan])
    return {"clients": clients, "requests": len(latencies), "failed": len(failures), "wall_s": round(wall, 2),
            "requests_per_s": round(len(latencies) / wall, 3), "p50_ms": round(1000 * float(np.percentile(lat, 50)), 1),
            "p99_ms": round(1000 * float(np.percentile(lat, 99)), 1),
            "mean_batch": round((batcher.batched_requests - requests0) / max(n_batches, 1), 2),
            "first_failure": failures[0] if failures else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="tiny", help="base of the released Auto-ATT preset (default tiny)")
    p.add_argument("--clips", type=int, default=16)
    p.add_argument("--clip-seconds", type=float, default=2.0)
    p.add_argument("--levels", default="1,4,16,64", help="numbers of concurrent clients")
    p.add_argument("--seconds", type=float, default=20.0, help="seconds per level")
    p.add_argument("--max-wait-ms", type=float, default=10.0)
    p.add_argument("--max-batch", type=int, default=16)
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--family", default="auto-att-released", choices=("auto-att-released", "emergenttts-win-rate"),
                   help="the requests posted: one clip with the released Auto-ATT prompt (default), or "
                        "EmergentTTS-Eval's two-clip judge request")
    p.add_argument("--judge", help="emergenttts-win-rate: the judge of every category slot (a judge folder, "
                                   "a preset, or in-prompt-pair: both clips in one prompt); default the family's")
    args = p.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="bench_serve_"))
    paths = speech_wav_files(args.clips, args.clip_seconds, folder)
    pairwise = args.family == "emergenttts-win-rate"
    slots = {c: args.judge for c in categories()} if pairwise and args.judge else {}
    routes = Routes({"bench": ModelRoute("bench", {args.family: slots}, args.base)})
    judges = load_route_judges(routes, JudgeLoader())
    slot = judges["bench"][args.family][categories()[0] if pairwise else "human-likeness"]
    in_prompt = getattr(slot, "kind", None) == "in_prompt_pair"
    batch_sizes = tuple(sorted({1, 4, args.max_batch}))
    if pairwise and args.judge:  # the slot's model outside the server (a reward judge has no token estimate)
        speeds = offline_requests_per_s(slot, paths, batch_sizes, pairs=in_prompt)
    else:
        speeds = offline_clips_per_s(slot.judge if pairwise else slot, paths, folder / "offline.jsonl", batch_sizes)
    offline = max(speeds.values())
    print(f"offline {'pairs' if in_prompt else 'clips'}/s by batch size: "
          + ", ".join(f"{b}: {v:.2f}" for b, v in speeds.items()), flush=True)

    app = create_app(judges, ServeOptions(folder=folder / "server", batch=BatchOptions(args.max_wait_ms, args.max_batch)))
    bodies = win_rate_bodies(paths) if pairwise else att_bodies(paths)
    rows = []
    with serving(app, args.port) as base:
        url = base + ("v1/chat/completions" if pairwise else "v1beta/models/bench:generateContent")
        for clients in (int(x) for x in args.levels.split(",")):
            row = run_level(url, bodies, clients, args.seconds, app.state.batcher)
            row["vs_offline"] = round((2 if pairwise and not in_prompt else 1) * row["requests_per_s"] / offline, 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{'clients':>7} {'req/s':>7} {'x offline':>9} {'p50 ms':>8} {'p99 ms':>8} {'batch':>6} {'failed':>6}")
    for r in rows:
        print(f"{r['clients']:>7} {r['requests_per_s']:>7.2f} {r['vs_offline']:>9.2f} {r['p50_ms']:>8.1f} "
              f"{r['p99_ms']:>8.1f} {r['mean_batch']:>6.2f} {r['failed']:>6}")
    print(f"offline (best batch size) {offline:.2f} {'pairs' if in_prompt else 'clips'}/s")
    return 0 if all(r["failed"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
