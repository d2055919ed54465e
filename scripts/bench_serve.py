"""Throughput and latency of ``omnijudge serve`` against offline ``omnijudge score``, same clips,
same judge, same run (``docs/serve.md#measured``).

Starts the server on 127.0.0.1 with the chosen family's judge on ``--base`` (default ``tiny``, the
offline random backbone), then for each number of concurrent clients (default 1, 4, 16, 64) runs
that many client threads posting SpeechEditBench-style ``generateContent`` requests (inline WAV)
round-robin over the clips for ``--seconds`` seconds. Prints, per level: requests/s, p50 and p99
latency, failed requests, mean batch size (clips per model call); and the offline clips/s of
``evaluators.audio_scorer.score_items`` (what ``omnijudge score audio`` runs) on the same clips, so the
ratio is measured on one machine in one run.

    python scripts/bench_serve.py                              # tiny judge, 16 clips, 20 s per level
    python scripts/bench_serve.py --levels 64 --seconds 120    # the 2-minute 64-client soak
    python scripts/bench_serve.py --family emergenttts-win-rate --levels 16,64   # two-audio requests

``--family emergenttts-win-rate`` posts EmergentTTS-Eval's judge request instead (OpenAI chat
completions, text, clip k, text, clip k+1, as its ``api_clients.OpenAIClient`` sends it, the six
categories in turn) and counts a reply as failed unless its validator's keys are there with
``winner`` in {0, 1, 2}; each request is two clips, so ``x offline`` compares 2 x requests/s.
``--judge in-prompt-pair`` (or an ``in_prompt_pair`` judge folder) puts the in-prompt judge in every
category (both clips in one prompt, both orders per request); ``x offline`` then compares
requests/s with the pairs/s of the same judge outside the server.

    python scripts/bench_serve.py --family emergenttts-win-rate --judge in-prompt-pair --levels 16,64
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import requests
import soundfile as sf

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.emergenttts.prompts import categories, win_rate_prompts
from evaluators.audio_scorer import ScoreItem, score_items
from evaluators.run_options import RunOptions
from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.batcher import BatchOptions
from evaluators.serve.routes import JudgeLoader, ModelRoute, Routes, load_route_judges


def clips(n: int, seconds: float, folder: Path) -> list[Path]:
    """``n`` deterministic speech-like clips of ``seconds`` +- 25 %, written as 16 kHz WAV."""
    rng, paths = np.random.default_rng(0), []
    for i in range(n):
        dur = seconds * (0.75 + 0.5 * rng.random())
        t = np.arange(int(dur * 16000)) / 16000
        f0 = 100 + 60 * rng.random()
        x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))
        x = 0.3 * x / np.abs(x).max() + 0.01 * rng.standard_normal(len(t))
        path = folder / f"clip{i:03d}.wav"
        sf.write(path, x.astype(np.float32), 16000, subtype="PCM_16")
        paths.append(path)
    return paths


def offline_clips_per_s(judge, paths: list[Path], out: Path, batch_sizes: tuple[int, ...]) -> dict[int, float]:
    """clips/s of ``score_items`` (no VAD, no workers: as the server scores) at each batch size,
    best of two runs each (on CPU a tiny model can be fastest at batch 1, so the best is the bar)."""
    speeds = {}
    for batch_size in batch_sizes:
        for k in range(2):
            target = out.with_name(f"offline_b{batch_size}_{k}.jsonl")
            start = time.perf_counter()
            score_items(judge, [ScoreItem(p.stem, p) for p in paths], target, RunOptions(batch_size=batch_size),
                        vad=False)
            speeds[batch_size] = max(speeds.get(batch_size, 0.0), len(paths) / (time.perf_counter() - start))
    return speeds


def offline_requests_per_s(slot, paths: list[Path], batch_sizes: tuple[int, ...], pairs: bool) -> dict[int, float]:
    """Items/s of a pairwise slot's model run as the server runs a request batch
    (``batcher.score_requests``, no HTTP), best of two: ``pairs`` (an in-prompt judge: clips (k, k+1)
    in one item, both orders) or clips (a per-clip judge: one clip per item)."""
    from evaluators.audio_io import load_audio
    from evaluators.serve.batcher import score_requests

    waves = [load_audio(p) for p in paths]
    inputs = [{"wave": waves[k], "fields": {"text": f"Sentence {k}"},
               **({"wave_b": waves[(k + 1) % len(waves)]} if pairs else {})} for k in range(len(waves))]
    speeds = {}
    for batch_size in batch_sizes:
        for _ in range(2):
            start = time.perf_counter()
            score_requests(slot, inputs, batch_size)
            speeds[batch_size] = max(speeds.get(batch_size, 0.0), len(inputs) / (time.perf_counter() - start))
    return speeds


#: the keys EmergentTTS-Eval's validate_win_rate_response requires
WIN_RATE_KEYS = ("reasoning_system_1", "reasoning_system_2", "system_comparison", "score_1", "score_2", "winner")


def reply_ok(body: dict) -> bool:
    """A Gemini reply's text, or an OpenAI reply that EmergentTTS-Eval's validator accepts."""
    if "candidates" in body:
        return bool(body["candidates"][0]["content"]["parts"][0]["text"])
    reply = json.loads(body["choices"][0]["message"]["content"])
    return all(k in reply for k in WIN_RATE_KEYS) and reply["winner"] in (0, 1, 2)


def att_bodies(paths: list[Path]) -> list[bytes]:
    """The released Auto-ATT prompt with one inline clip each (``generateContent``)."""
    return [json.dumps({"contents": [{"parts": [{"text": RELEASED_PROMPT}, {"inline_data": {
        "mime_type": "audio/wav", "data": base64.b64encode(p.read_bytes()).decode()}}]}],
        "generationConfig": {"temperature": 0}}).encode() for p in paths]


def win_rate_bodies(paths: list[Path]) -> list[bytes]:
    """EmergentTTS-Eval's judge request over clips (k, k+1), the categories in turn (chat completions)."""
    data = [base64.b64encode(p.read_bytes()).decode() for p in paths]
    bodies = []
    for k in range(len(paths)):
        category = categories()[k % len(categories())]
        system, user, post = win_rate_prompts(f"Sentence {k}: is it over? Yes... it is.", category)
        audio = [{"type": "input_audio", "input_audio": {"data": data[j % len(data)], "format": "wav"}}
                 for j in (k, k + 1)]
        bodies.append(json.dumps({"model": "bench", "temperature": 0, "top_p": 0.9, "max_tokens": 16384, "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": user}, audio[0], {"type": "text", "text": post},
                                         audio[1]]}]}).encode())
    return bodies


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
    from uvicorn import Config, Server

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
    paths = clips(args.clips, args.clip_seconds, folder)
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
    server = Server(Config(app, host="127.0.0.1", port=args.port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{args.port}/" + ("v1/chat/completions" if pairwise else
                                              "v1beta/models/bench:generateContent")
    bodies = win_rate_bodies(paths) if pairwise else att_bodies(paths)
    rows = []
    try:
        for clients in (int(x) for x in args.levels.split(",")):
            row = run_level(url, bodies, clients, args.seconds, app.state.batcher)
            row["vs_offline"] = round((2 if pairwise and not in_prompt else 1) * row["requests_per_s"] / offline, 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        server.should_exit = True
        thread.join(60)
    print(f"\n{'clients':>7} {'req/s':>7} {'x offline':>9} {'p50 ms':>8} {'p99 ms':>8} {'batch':>6} {'failed':>6}")
    for r in rows:
        print(f"{r['clients']:>7} {r['requests_per_s']:>7.2f} {r['vs_offline']:>9.2f} {r['p50_ms']:>8.1f} "
              f"{r['p99_ms']:>8.1f} {r['mean_batch']:>6.2f} {r['failed']:>6}")
    print(f"offline (best batch size) {offline:.2f} {'pairs' if in_prompt else 'clips'}/s")
    return 0 if all(r["failed"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
