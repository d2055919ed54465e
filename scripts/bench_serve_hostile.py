"""Two figures of ``omnijudge serve`` under hostile load (issue 40), on a real server process
(``omnijudge serve --base tiny``, default limits unless given).

``/health`` latency while body-sized worst-case prompts (the emotion prompt's ``Allowed labels:``
line repeated; base64-alphabet text) are refused, with each refusal's status and time; and the
server's resident memory (VmRSS, VmHWM) under ``--clients`` concurrent large bodies
(docs/serve.md#limits-and-files).

    python scripts/bench_serve_hostile.py [--max-inflight-mb 1024] [--clients 64] [--body-mb 57]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import requests

URL = "v1beta/models/m:generateContent"


def start_server(port: int, folder: str, extra: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "evaluators.cli", "serve", "--base", "tiny", "--port", str(port),
                             "--folder", folder, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).ok:
                return proc
        except requests.ConnectionError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not start")


def memory_kb(pid: int) -> dict[str, int]:
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                name, value = line.split(":")
                fields[name] = int(value.split()[0])
    return fields


def body(prompt: str, audio: bytes = b"RIFF") -> bytes:
    return json.dumps({"contents": [{"parts": [{"text": prompt}, {"inline_data": {
        "mime_type": "audio/wav", "data": base64.b64encode(audio).decode()}}]}]}).encode()


def health_during(base: str, attack) -> tuple[list[float], list]:
    """/health latencies (ms), polled every 20 ms while ``attack()`` runs, and its result."""
    latencies, done = [], threading.Event()

    def poll():
        with requests.Session() as s:
            while not done.is_set():
                started = time.perf_counter()
                s.get(base + "health", timeout=60)
                latencies.append((time.perf_counter() - started) * 1000)
                time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        result = attack()
    finally:
        done.set()
        poller.join()
    return latencies, result


def quantiles(ms: list[float]) -> str:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    return f"n={len(ms)} p50={statistics.median(ms):.1f} ms p99={p99:.1f} ms max={ms[-1]:.1f} ms"


def refuse(base: str, payload: bytes, times: int) -> list[tuple[int, float]]:
    out = []
    for _ in range(times):
        started = time.perf_counter()
        r = requests.post(base + URL, data=payload, headers={"Content-Type": "application/json"}, timeout=300)
        out.append((r.status_code, time.perf_counter() - started))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8931)
    p.add_argument("--max-body-mb", type=float, default=64.0)
    p.add_argument("--max-inflight-mb", type=float, default=None)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--body-mb", type=float, default=57.0)
    args = p.parse_args()
    from evaluators.benchmarks.speecheditbench.judge_prompts import template

    extra = ["--max-body-mb", str(args.max_body_mb)]
    extra += ["--max-inflight-mb", str(args.max_inflight_mb)] if args.max_inflight_mb else []
    base = f"http://127.0.0.1:{args.port}/"
    with tempfile.TemporaryDirectory() as folder:
        proc = start_server(args.port, folder, extra)
        try:
            limit = int(args.max_body_mb * (1 << 20)) - 4096
            head = template("emotion", "en").split("{allowed_str}")[0].replace("{transcript}", "x")
            labels = body(head + "\nAllowed labels: " * ((limit - 2048) // 18))
            alphabet = body("A" * (limit - 2048))
            quiet, _ = health_during(base, lambda: time.sleep(2))
            print(f"/health, idle: {quantiles(quiet)}")
            for name, payload in (("labels-line prompt", labels), ("base64-alphabet prompt", alphabet)):
                ms, refusals = health_during(base, lambda: refuse(base, payload, 5))
                print(f"/health while 5 x {len(payload) / (1 << 20):.1f} MB {name} refused: {quantiles(ms)}; "
                      f"refusals: " + ", ".join(f"{code} in {s:.2f} s" for code, s in refusals))
            before = memory_kb(proc.pid)
            big = body("x", os.urandom(int(args.body_mb * (1 << 20) * 3 / 4)))
            with ThreadPoolExecutor(args.clients) as pool:
                codes = Counter(pool.map(lambda _: requests.post(base + URL, data=big, timeout=600).status_code,
                                         range(args.clients)))
            after = memory_kb(proc.pid)
            print(f"RSS under {args.clients} concurrent {len(big) / 1e6:.0f} MB bodies: before "
                  f"{before['VmRSS'] / 1024:.0f} MiB, peak {after['VmHWM'] / 1024:.0f} MiB "
                  f"(+{(after['VmHWM'] - before['VmRSS']) / 1024:.0f} MiB), after {after['VmRSS'] / 1024:.0f} MiB; "
                  f"answers: {dict(sorted(codes.items()))}")
        finally:
            proc.terminate()
            proc.wait(60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
