"""``omnijudge serve`` killed with SIGKILL mid-run and started again on the same folder: clients that
retry (as the public scripts do) all end with a reply, and the files uploaded before the kill are
there, whole."""

import base64
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from serve_testing import free_port, wav_bytes

from evaluators.benchmarks.att.presets import RELEASED_PROMPT

ROOT = Path(__file__).resolve().parents[1]


def _start(folder: Path, routes: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "evaluators.cli", "serve", "--routes", str(routes), "--port",
                             str(port), "--folder", str(folder)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except requests.RequestException:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not start")


def _judge_with_retries(url: str, audio: bytes, tries: int = 60) -> str:
    """SpeechEditBench's retry rule, with a short delay: any failure is tried again."""
    body = {"contents": [{"parts": [{"text": RELEASED_PROMPT}, {"inline_data": {
        "mime_type": "audio/wav", "data": base64.b64encode(audio).decode()}}]}]}
    for _ in range(tries):
        try:
            r = requests.post(url, json=body, timeout=30)
            if r.status_code == 200:
                return r.json()["candidates"][0]["content"]["parts"][0]["text"]
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise AssertionError("no reply after retries")


@pytest.mark.slow
def test_sigkill_mid_run_then_restart_loses_no_reply_and_no_file(tmp_path):
    from google import genai
    from google.genai import types

    routes = tmp_path / "ROUTES.yaml"
    routes.write_text("models:\n  m:\n    base: tiny\n    families:\n      auto-att-released: {}\n")
    port, folder = free_port(), tmp_path / "srv"
    base = f"http://127.0.0.1:{port}/"
    proc = _start(folder, routes, port)
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=base))
    clips = []
    for i in range(3):
        path = tmp_path / f"c{i}.wav"
        path.write_bytes(wav_bytes(0.5 + 0.1 * i, seed=i))
        clips.append(path)
    uploaded = [client.files.upload(file=str(p)).name for p in clips]

    replies: list[str] = []
    url = base + "v1beta/models/m:generateContent"
    threads = [threading.Thread(target=lambda k=k: replies.append(_judge_with_retries(url, clips[k % 3].read_bytes())))
               for k in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc = _start(folder, routes, port)
    try:
        for t in threads:
            t.join(120)
        assert len(replies) == 8 and set(replies) <= {"Good", "Fair", "Bad"}
        assert sorted(f.name for f in client.files.list()) == sorted(uploaded)
        for name, path in zip(uploaded, clips):
            assert client.files.get(name=name).size_bytes == path.stat().st_size
            resp = client.models.generate_content(model="m", contents=[RELEASED_PROMPT, client.files.get(name=name)])
            assert resp.text in ("Good", "Fair", "Bad")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
