"""``omnijudge serve`` on valid but less-travelled requests the public clients (or other
OpenAI/Gemini clients) may send: each gets the reply its client parses, or a 4xx saying why."""

import base64

import pytest
from fastapi.testclient import TestClient

from serve_testing import tiny_judges, wav_bytes

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.serve.app import ServeOptions, create_app

URL = "/v1beta/models/m:generateContent"
WAV = wav_bytes(0.8, seed=5)[:-1]  # an odd length: its base64 ends in padding


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(tiny_judges(), ServeOptions(folder=tmp_path_factory.mktemp("serve"), max_body_bytes=4 << 20))
    with TestClient(app) as c:
        yield c


def gemini(data: str, **extra) -> dict:
    return {"contents": [{"parts": [{"text": RELEASED_PROMPT},
                                    {"inline_data": {"mime_type": "audio/wav", "data": data}}]}], **extra}


def chat(data: str, **extra) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}},
        {"type": "text", "text": RELEASED_PROMPT}]}], **extra}


def gemini_text(r) -> str:
    assert r.status_code == 200, r.text
    return r.json()["candidates"][0]["content"]["parts"][0]["text"]


def test_base64_without_padding_is_accepted(client):
    """Gemini's JSON bytes (protobuf's JSON mapping) accept standard or URL-safe base64, with or
    without padding; unpadded data is judged as the padded data is."""
    padded = base64.b64encode(WAV).decode()
    assert padded.endswith("=")
    want = gemini_text(client.post(URL, json=gemini(padded)))
    assert gemini_text(client.post(URL, json=gemini(padded.rstrip("=")))) == want
    urlsafe = base64.urlsafe_b64encode(WAV).decode().rstrip("=")
    assert gemini_text(client.post(URL, json=gemini(urlsafe))) == want
    r = client.post("/v1/chat/completions", json=chat(padded.rstrip("=")))
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == want, r.text


@pytest.mark.parametrize("seconds", [0.3, 2.0])  # the longer one is past the long-string scan's 14,000 letters
def test_a_data_url_in_place_of_base64_is_a_400_saying_so(client, seconds):
    url = "data:audio/wav;base64," + base64.b64encode(wav_bytes(seconds)).decode()
    r = client.post("/v1/chat/completions", json=chat(url))
    assert r.status_code == 400, r.text
    assert "messages[0].content[0].input_audio.data: a data: URL" in r.json()["error"]["message"]
    r = client.post(URL, json=gemini(url))
    assert r.status_code == 400 and "inline_data.data: a data: URL" in r.json()["error"]["message"], r.text


def test_n_and_candidate_count_get_that_many_choices(client):
    """A client asking n (OpenAI) or candidateCount (Gemini) samples reads that many choices; the
    judge is deterministic, so each holds the same reply, with its own index."""
    data = base64.b64encode(WAV).decode()
    r = client.post("/v1/chat/completions", json=chat(data, n=3))
    assert r.status_code == 200, r.text
    choices = r.json()["choices"]
    assert [c["index"] for c in choices] == [0, 1, 2] and len({c["message"]["content"] for c in choices}) == 1
    assert "n" not in r.headers.get("x-omnijudge-ignored", "").split(" ")[0].split(",")
    r = client.post(URL, json=gemini(data, generationConfig={"candidateCount": 2, "temperature": 0}))
    assert r.status_code == 200, r.text
    candidates = r.json()["candidates"]
    assert [c["index"] for c in candidates] == [0, 1] and candidates[0]["content"] == candidates[1]["content"]
    assert r.headers["x-omnijudge-ignored"].startswith("temperature ")
    for bad, words in [(chat(data, n=0), "n: Input should be greater than or equal to 1"),
                       (chat(data, n="2"), "n: Input should be a valid integer"),
                       (gemini(data, generationConfig={"candidateCount": 9}), "candidateCount: at most 8"),
                       (gemini(data, generationConfig={"candidate_count": True}), "candidate_count: a whole number")]:
        path = URL if "contents" in bad else "/v1/chat/completions"
        r = client.post(path, json=bad)
        assert r.status_code == 400 and words in r.text, r.text


def test_a_served_model_can_be_fetched_by_name(client):
    """google-genai's ``models.get`` and the openai client's ``models.retrieve`` (a runner's check
    that its judge model exists) get the model, under any name the ``*`` route serves."""
    for path in ("/v1beta/models/gemini-2.5-flash", "/v1beta/models/models/gemini-2.5-flash",
                 "/v1/models/gemini-2.5-flash"):
        r = client.get(path)
        assert r.status_code == 200, (path, r.text)
        body = r.json()
        assert body["name"] == "models/gemini-2.5-flash" and body["supportedGenerationMethods"] == ["generateContent"]
        assert "auto-att-released" in body["description"]
    assert client.get("/v1/models/judge").json()["id"] == "judge"
    assert client.get("/v1/models/judge").json()["object"] == "model"


def test_an_unserved_model_is_a_404_naming_the_models(tmp_path):
    app = create_app({"judge": tiny_judges()["*"]}, ServeOptions(folder=tmp_path))
    with TestClient(app) as c:
        assert c.get("/v1beta/models/judge").status_code == 200
        for path in ("/v1beta/models/other", "/v1/models/other"):
            r = c.get(path)
            assert r.status_code == 404 and "model 'other' is not served; models: judge" in r.json()["error"]["message"]


def test_unknown_fields_of_any_name_are_ignored_and_named_safely(client):
    """Unknown keys go into the ``x-omnijudge-ignored`` header; a key a header cannot carry (not
    Latin-1, a line break) or past the first 32 is counted there, never sent raw."""
    data = base64.b64encode(WAV).decode()
    odd = {"温度": 1, "a\r\nX-Evil: 1": 2, **{f"k{i}": i for i in range(40)}}
    for path, body in [("/v1/chat/completions", chat(data, temperature=0, **odd)),
                       (URL, gemini(data, generationConfig={"temperature": 0, **odd}))]:
        r = client.post(path, json=body)
        assert r.status_code == 200, r.text
        header = r.headers["x-omnijudge-ignored"]
        assert "X-Evil" not in r.headers and "\n" not in header and "温度" not in header
        assert header.startswith("k0,k1,k10,") and header.endswith(",11 more (the judge is deterministic)"), header
    r = client.post(URL, json=gemini(data, generationConfig={"温度": 1}))
    assert r.status_code == 200 and r.headers["x-omnijudge-ignored"] == "1 more (the judge is deterministic)"


def test_a_compressed_body_is_a_415_saying_so(client):
    import gzip
    import json

    raw = gzip.compress(json.dumps(gemini(base64.b64encode(WAV).decode())).encode())
    for path in (URL, "/v1/chat/completions", "/upload/v1beta/files"):
        r = client.post(path, content=raw, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
        assert r.status_code == 415 and "Content-Encoding gzip" in r.json()["error"]["message"], (path, r.text)
    r = client.post(URL, json=gemini(base64.b64encode(WAV).decode()), headers={"Content-Encoding": "identity"})
    assert r.status_code == 200, r.text
