"""``omnijudge serve`` against hostile input: every malformed or oversized request is a 4xx naming
the field or the limit (never a 5xx), prompt matching takes linear time, error bodies carry no
server path, and a client that leaves before its batch runs costs no model time."""

import base64
import io
import json
import re
import socket
import time

import numpy as np
import pytest
import soundfile as sf
from fastapi.testclient import TestClient

from serve_testing import running_server, tiny_judges, wav_bytes

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.speecheditbench.judge_prompts import emotion_prompt, template
from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.batcher import BatchOptions
from evaluators.serve.prompt_families import Template, match_prompt

URL = "/v1beta/models/m:generateContent"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(tiny_judges(), ServeOptions(folder=tmp_path_factory.mktemp("serve"), max_body_bytes=4 << 20))
    with TestClient(app) as c:
        yield c


def gemini(prompt=RELEASED_PROMPT, audio=None, mime="audio/wav") -> dict:
    data = base64.b64encode(audio if audio is not None else wav_bytes(0.5)).decode()
    return {"contents": [{"parts": [{"text": prompt}, {"inline_data": {"mime_type": mime, "data": data}}]}]}


def chat(audio_spec) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": RELEASED_PROMPT}, {"type": "input_audio", "input_audio": audio_spec}]}]}


def float_wav(peak: float) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.full(8000, peak, np.float64), 16000, format="WAV", subtype="DOUBLE")
    return buf.getvalue()


@pytest.mark.parametrize("body, status, words", [
    (b"[" * 100_000 + b"]" * 100_000, 400, "nested more than 32 levels"),
    (b'{"contents": [' * 20 + b"1" + b"]}" * 20, 400, "nested more than 32 levels"),
    (b'{"contents": ' + b"9" * 5000 + b"}", 400, "a number of 5000 characters"),
    (b'{"contents": NaN}', 400, "NaN is not a JSON number"),
    (b'{"contents": 1e999}', 400, "out of range"),
    (b"\xff\xfe{}", 400, "malformed JSON body"),
    (json.dumps(gemini(mime=["audio/wav"])).encode(), 400, "contents[0].parts[1].inline_data.mime_type"),
    (json.dumps({"contents": [{"parts": {"text": "x"}}]}).encode(), 400, "contents[0].parts"),
    (json.dumps({"contents": [{"parts": [{"text": 5}]}]}).encode(), 400, "contents[0].parts[0].text"),
    (json.dumps({"contents": [{"parts": [{"text": "x"}] * 65}]}).encode(), 400, "contents[0].parts"),
    (json.dumps({"contents": [{"parts": [{"text": "x"}] * 2}] * 40}).encode(), 400, "80 parts; the limit is 64"),
    (json.dumps({**gemini(), "generationConfig": [1]}).encode(), 400, "generationConfig: Input should be a valid dictionary"),
    (json.dumps(gemini(audio=float_wav(1e30))).encode(), 400, "the audio part: samples reach 1e+30"),
    (json.dumps(gemini(audio=float_wav(float("inf")))).encode(), 400, "are NaN or Inf"),
], ids=["deep-lists", "deep-contents", "huge-int", "nan", "inf", "not-utf8", "mime-list", "parts-object",
        "text-int", "parts-per-content", "parts-total", "config-list", "float-1e30", "float-inf"])
def test_malformed_gemini_bodies_get_a_400_naming_the_field(client, body, status, words):
    r = client.post(URL, content=body)
    assert r.status_code == status and words in r.json()["error"]["message"], r.text


@pytest.mark.parametrize("spec, words", [
    ({"data": "AAAA", "format": ["wav"]}, "messages[0].content[1].input_audio.format"),
    ({"data": "AAAA", "format": {"x": 1}}, "messages[0].content[1].input_audio.format"),
    ({"data": 12, "format": "wav"}, "messages[0].content[1].input_audio.data"),
    ({"data": "not base64!", "format": "wav"}, "input_audio.data: not base64"),
])
def test_malformed_openai_bodies_get_a_400_naming_the_field(client, spec, words):
    r = client.post("/v1/chat/completions", json=chat(spec))
    assert r.status_code == 400 and words in r.json()["error"]["message"], r.text


def test_a_prompt_over_the_limit_is_refused_before_matching(client):
    line = "\nAllowed labels: "
    head = template("emotion", "en").split("{allowed_str}")[0].replace("{transcript}", "x")
    r = client.post(URL, json=gemini(head + line * 10_000))
    assert r.status_code == 413 and "--max-prompt-chars" in r.json()["error"]["message"]
    # a 100,000-character transcript is refused the same way, before any model time
    r = client.post(URL, json=gemini(emotion_prompt("word " * 20_000, "iemocap_en", "en")))
    assert r.status_code == 413


def test_a_prompt_of_base64_letters_is_refused_before_the_json_parse(client, monkeypatch):
    """Letters alone pass the text-bytes check (they look like audio); the long-string scan refuses
    them unless they are a ``data`` value, and the JSON parser is never called."""
    from evaluators.serve import request_judging as app_module

    parsed = []
    monkeypatch.setattr(app_module, "parse_json", lambda raw, *a: parsed.append(len(raw)))
    r = client.post(URL, json=gemini("A" * 3_000_000))
    assert r.status_code == 413 and "not audio data" in r.json()["error"]["message"] and parsed == []
    # the same letters written as a key inside the prompt do not pass for audio
    r = client.post(URL, json=gemini('"data": "' + "A" * 20_000))
    assert r.status_code == 413 and parsed == []


def test_long_audio_data_passes_the_long_string_scan():
    from evaluators.serve.limits import check_long_strings

    audio = base64.b64encode(bytes(300_000)).decode()
    for indent in (None, 2):
        check_long_strings(json.dumps({"inline_data": {"mime_type": "audio/wav", "data": audio}},
                                      indent=indent).encode(), 14_000)
        check_long_strings(json.dumps({"input_audio": {"data": audio, "format": "wav"}}, indent=indent).encode(),
                           14_000)


def test_error_bodies_name_no_server_path(client, tmp_path):
    r = client.post(URL, json=gemini(audio=b"RIFF\x00\x00\x00\x00WAVEjunk"))
    message = r.json()["error"]["message"]
    assert r.status_code == 400 and "could not be decoded" in message
    assert "decoding" not in message and not re.search(r"/\w+/", message), message


def test_openapi_schema_is_served_with_the_request_models(client):
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/v1beta/models/{target}"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"].endswith("/GenerateContentRequest")
    assert {"GenerateContentRequest", "ChatCompletionRequest", "Part", "Blob"} <= set(schema["components"]["schemas"])


# ---- prompt matching: the lazy whole-prompt pattern's values, in linear time --------------------
def _lazy_regex(text: str, names: tuple) -> re.Pattern:
    pattern = re.escape(text)
    for name in names:
        pattern = pattern.replace(re.escape("{" + name + "}"), f"(?P<{name}>.*?)", 1)
    return re.compile(r"\A" + pattern + r"\Z", re.DOTALL)


@pytest.mark.parametrize("seed", range(40))
def test_template_values_equal_the_lazy_patterns(seed):
    rng = np.random.default_rng(seed)
    text = "A{x}-B{y}--C{z}!"
    pieces = ["A", "-B", "--C", "!", "-", "x", "B", "C", "--"]
    prompt = "".join(rng.choice(pieces, size=rng.integers(3, 14)))
    got = Template(text, ("x", "y", "z")).match(prompt)
    want = _lazy_regex(text, ("x", "y", "z")).match(prompt)
    assert got == (want.groupdict() if want else None), prompt


def _seconds(prompt: str) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        match_prompt(prompt)
        best = min(best, time.perf_counter() - started)
    return best


def test_matching_a_worst_case_prompt_takes_linear_time():
    """The finding's prompt (the emotion template's opening with its labels line repeated), tenfold
    longer, takes at most 15 times as long (the old pattern took 100 times: quadratic)."""
    head = template("emotion", "en").split("{allowed_str}")[0].replace("{transcript}", "x")
    short, long = (head + "\nAllowed labels: " * n for n in (20_000, 200_000))
    assert match_prompt(long) is None
    assert _seconds(long) <= 15 * max(_seconds(short), 1e-4)


# ---- a client that leaves before its batch runs costs no model time -------------------------------
def test_a_request_whose_client_left_is_dropped_from_its_batch(tmp_path):
    app = create_app(tiny_judges(), ServeOptions(folder=tmp_path, batch=BatchOptions(max_wait_ms=1500)))
    body = json.dumps(gemini()).encode()
    with running_server(app) as base:
        port = int(base.rsplit(":", 1)[1].strip("/"))
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(f"POST {URL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            deadline = time.monotonic() + 10
            while app.state.batcher.depth == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
        deadline = time.monotonic() + 10
        while app.state.batcher.dropped == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app.state.batcher.dropped == 1 and app.state.batcher.batches == 0
