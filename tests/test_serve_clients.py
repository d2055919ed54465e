"""``omnijudge serve`` answered through the public evaluators' own clients, on 127.0.0.1: google-genai
(upload -> generate -> delete, as InstructTTSEval's script), ``requests`` with SpeechEditBench's exact
payload and headers, the ``openai`` client with ``input_audio``; each reply read by its client's
parsing rule gives the judge's verdict, which equals ``omnijudge score``'s on the same clip."""

import base64
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from serve_testing import running_server, tiny_judges, wav_bytes

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.instructttseval.prompts import public_prompt
from evaluators.benchmarks.nvv.presets import RUBRICS
from evaluators.benchmarks.nvv.serve_family import nvv_rater_prompt
from evaluators.benchmarks.speecheditbench.judge_prompts import emotion_prompt, paralinguistic_prompt, style_prompt
from evaluators.serve.app import ServeOptions, create_app


# ---- the public clients' parsing rules, as their scripts apply them -----------------------------
def instructttseval_parse(text: str):
    """InstructTTSEval eval/gemini_eval.py extract_json_from_text, then result['一致性']."""
    m = re.search(r'```json\s*(.*?)\s*```', text, re.DOTALL) if "```json" in text else None
    if m:
        return json.loads(m.group(1))["一致性"]
    for match in re.compile(r'\{(?:[^{}]|"(?:\\.|[^"\\])*")*\}').findall(text):
        try:
            parsed = json.loads(match)
        except ValueError:
            continue
        if "一致性" in parsed:
            return parsed["一致性"]
    return json.loads(text.strip())["一致性"]


def speecheditbench_parse(text: str) -> dict:
    """SpeechEditBench eval/metrics/llm_multimodal.py _parse_json_text (None is a parse failure)."""
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError:
        m = re.search(r"```(?:json)?\s*([\s\S]+?)\s*```", text)
        return json.loads(m.group(1)) if m else None


def nvv_parse(text: str) -> dict:
    """NVV-SuperBench llm_eval.py robust_json_load."""
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(re.search(r"\{.*\}", text, flags=re.DOTALL).group(0))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    app = create_app(tiny_judges(), ServeOptions(folder=folder, max_body_bytes=2 << 20, max_audio_seconds=20))
    with running_server(app) as base:
        yield base, app


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("clips") / "a.wav"
    path.write_bytes(wav_bytes(1.0, seed=3))
    return path


def seb_post(base: str, prompt: str, audio: bytes, model: str = "gemini-2.5-pro", key: str = "k") -> requests.Response:
    """SpeechEditBench's call_multimodal_llm_json request, byte for byte (GEMINI_BASE_URL = base)."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    payload = {"contents": [{"parts": [{"text": prompt},
                                       {"inline_data": {"mime_type": "audio/wav",
                                                        "data": base64.b64encode(audio).decode("utf-8")}}]}],
               "generationConfig": {"temperature": 0, "response_mime_type": "application/json"}}
    return requests.post(f"{base.rstrip('/')}/v1beta/models/{model}:generateContent", headers=headers, json=payload,
                         timeout=120)


def test_instructttseval_through_google_genai_upload_generate_delete(server, clip):
    from google import genai
    from google.genai import types

    base, app = server
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=base))
    uploaded = client.files.upload(file=str(clip))
    assert uploaded.name.startswith("files/") and clip.name not in uploaded.name  # a name the server made
    resp = client.models.generate_content(
        model="models/gemini-2.5-pro", contents=[public_prompt("一位年轻女性，语气欢快。"), uploaded],
        config=types.GenerateContentConfig(response_mime_type="text/plain", temperature=0))
    verdict = instructttseval_parse(resp.text.strip())
    client.files.delete(name=uploaded.name)
    assert isinstance(verdict, bool) and resp.usage_metadata.total_token_count > 0
    judge = tiny_judges()["*"]["instructttseval"]["consistency"]
    from evaluators.audio_io import load_audio
    want = judge.score([{"wave": load_audio(clip), "fields": {"instruction": "一位年轻女性，语气欢快。"}}])[0]
    assert verdict == (want["label"] == "true")
    assert [f.name for f in client.files.list()] == []
    with pytest.raises(genai.errors.ClientError, match="404"):
        client.files.get(name=uploaded.name)


def test_speecheditbench_payloads_parse_to_the_public_reply_shapes(server, clip):
    base, _ = server
    audio = clip.read_bytes()
    emo = speecheditbench_parse(seb_post(base, emotion_prompt("I am fine.", "iemocap_en", "en"), audio).json()
                                ["candidates"][0]["content"]["parts"][0]["text"])
    assert set(emo) == {"predicted_emotion", "confidence", "rationale"}
    assert emo["predicted_emotion"] in ("angry", "excited", "fearful", "frustrated", "happy", "neutral", "sad",
                                        "surprise") and 0 <= emo["confidence"] <= 1
    style = speecheditbench_parse(seb_post(base, style_prompt("intimate", "你好", "zh"), audio).json()
                                  ["candidates"][0]["content"]["parts"][0]["text"])
    assert style["target_style_score"] == style["style_scores"]["intimate"] in range(5)
    assert style["target_style_success"] == (style["target_style_score"] >= 3)
    assert set(style["style_scores"]) == {"public-broadcast", "intimate", "dramatic", "restrained-flat",
                                          "storytelling", "conversational"}
    assert style["style_scores"][style["dominant_style"]] == max(style["style_scores"].values())
    para = seb_post(base, paralinguistic_prompt(), audio)
    assert para.headers["x-omnijudge-family"] == "speecheditbench-paralinguistic"
    assert "temperature" in para.headers["x-omnijudge-ignored"]
    body = speecheditbench_parse(para.json()["candidates"][0]["content"]["parts"][0]["text"])
    assert set(body["event_scores"]) == {"breath", "laugh", "cough", "sigh"}
    assert all(v in range(4) for v in body["event_scores"].values())
    verdicts = para.json()["omnijudge"]["verdicts"]
    assert [int(v["label"]) for v in verdicts] == list(body["event_scores"].values())


def test_openai_input_audio_released_auto_att_and_nvv_rater(server, clip):
    from openai import OpenAI

    base, _ = server
    client = OpenAI(api_key="k", base_url=base + "v1")
    data = base64.b64encode(clip.read_bytes()).decode()
    att = client.chat.completions.create(model="auto-att", temperature=0.7, messages=[
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": data, "format": "wav"}},
                                     {"type": "text", "text": RELEASED_PROMPT}]}])
    assert att.choices[0].message.content in ("Good", "Fair", "Bad")
    nvv = client.chat.completions.create(model="gemini-2.5-pro", messages=[
        {"role": "system", "content": RUBRICS["system_instruction"]},
        {"role": "user", "content": [{"type": "text", "text": nvv_rater_prompt("tag") + "Text: I [laugh] see.\n"},
                                     {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}]}])
    pred = nvv_parse(nvv.choices[0].message.content)
    for key in ("overall_naturalness", "overall_quality", "overall_expression", "nvc_accuracy", "nvc_pe"):
        assert isinstance(pred[f"{key}_score"], int) and isinstance(pred[f"{key}_reason"], str)
    assert pred["issues"] == [] and pred["caps_applied"] == {}
    assert 1 <= pred["overall_quality_score"] <= 5 and 0 <= pred["nvc_pe_score"] <= 5


def test_a_verdict_equals_omnijudge_score_on_the_same_clip_and_judge(server, clip, tmp_path):
    from evaluators.cli import main

    base, _ = server
    out = tmp_path / "rows.jsonl"
    assert main(["score", "audio", "--judge", "auto-att-released", "--base", "tiny", "--audio", str(clip.parent),
                 "--out", str(out), "--no-vad", "--num-workers", "0"]) == 0
    row = json.loads(out.read_text().splitlines()[0])
    got = seb_post(base, RELEASED_PROMPT, clip.read_bytes()).json()
    verdict = got["omnijudge"]["verdicts"][0]
    assert got["candidates"][0]["content"]["parts"][0]["text"] == row["label"]
    assert verdict["score"] == pytest.approx(row["score"], abs=1e-6)
    assert all(verdict["probs"][k] == pytest.approx(p, abs=1e-6) for k, p in row["probs"].items())


def test_concurrent_requests_equal_serial_ones_and_are_batched(server):
    base, app = server
    clips = [wav_bytes(0.6 + 0.2 * i, seed=i) for i in range(6)]
    serial = [seb_post(base, RELEASED_PROMPT, c).json()["omnijudge"]["verdicts"][0] for c in clips]
    batches_before = app.state.batcher.batches
    with ThreadPoolExecutor(6) as pool:
        together = list(pool.map(lambda c: seb_post(base, RELEASED_PROMPT, c).json()["omnijudge"]["verdicts"][0], clips))
    for a, b in zip(serial, together):
        assert a["label"] == b["label"] and a["score"] == pytest.approx(b["score"], abs=1e-6)
    assert app.state.batcher.batches - batches_before < len(clips)  # some requests shared a model call


@pytest.mark.parametrize("body, status, words", [
    (b"{not json", 400, "malformed JSON"),
    (json.dumps({"contents": [{"parts": [{"text": "Rate this clip 1-10."},
                                         {"inline_data": {"mime_type": "audio/wav", "data": "AAAA"}}]}]}), 400,
     "no known family"),
    (json.dumps({"contents": [{"parts": [{"text": RELEASED_PROMPT}]}]}), 400, "exactly one audio"),
    (json.dumps({"contents": [{"parts": [{"text": RELEASED_PROMPT},
                                         {"inline_data": {"mime_type": "audio/wav",
                                                          "data": base64.b64encode(b"RIFF not audio").decode()}}]}]}),
     400, "could not be decoded"),
    (json.dumps({"contents": [{"parts": [{"text": RELEASED_PROMPT},
                                         {"file_data": {"mime_type": "audio/wav", "file_uri": "files/abc123"}}]}]}),
     404, "no file files/abc123"),
])
def test_bad_requests_get_a_4xx_with_a_reason(server, body, status, words):
    base, _ = server
    r = requests.post(base + "v1beta/models/m:generateContent", data=body, timeout=60)
    assert r.status_code == status and words in r.json()["error"]["message"], r.text
    if "no known family" in words:
        assert "instructttseval" in r.json()["error"]["message"] and "nvv-likert" in r.json()["error"]["message"]


def test_limits_answer_413_naming_the_limit(server):
    base, _ = server
    big = requests.post(base + "v1beta/models/m:generateContent", data=b"x" * (3 << 20), timeout=60)
    assert big.status_code == 413 and "--max-body-mb" in big.json()["error"]["message"]
    import numpy as np
    import io
    import soundfile as sf
    buf = io.BytesIO()
    sf.write(buf, np.zeros(8000 * 25, np.int16), 8000, format="WAV")  # 25 s (limit 20 s), small body
    long = seb_post(base, RELEASED_PROMPT, buf.getvalue())
    assert long.status_code == 413 and "--max-audio-seconds" in long.json()["error"]["message"]


def test_health_models_and_metrics(server):
    base, _ = server
    assert requests.get(base + "health", timeout=10).json()["status"] == "ok"
    models = requests.get(base + "v1beta/models", timeout=10).json()["models"]
    assert models[0]["supportedGenerationMethods"] == ["generateContent"]
    assert requests.get(base + "v1/models", timeout=10).json()["object"] == "list"
    text = requests.get(base + "metrics", timeout=10).text
    for name in ("omnijudge_requests_total", "omnijudge_request_errors_total", "omnijudge_request_latency_seconds",
                 "omnijudge_batch_size", "omnijudge_queue_depth"):
        assert name in text


def test_an_api_key_is_required_in_any_of_its_three_places(tmp_path, clip):
    app = create_app(tiny_judges(), ServeOptions(folder=tmp_path, api_key="s3cret"))
    with running_server(app) as base:
        url = base + "v1beta/models/m:generateContent"
        assert seb_post(base, RELEASED_PROMPT, clip.read_bytes(), key="wrong").status_code == 401
        assert seb_post(base, RELEASED_PROMPT, clip.read_bytes(), key="s3cret").status_code == 200
        body = {"contents": [{"parts": [{"text": RELEASED_PROMPT}, {"inline_data": {
            "mime_type": "audio/wav", "data": base64.b64encode(clip.read_bytes()).decode()}}]}]}
        assert requests.post(url, json=body, headers={"x-goog-api-key": "s3cret"}, timeout=60).status_code == 200
        assert requests.post(url + "?key=s3cret", json=body, timeout=60).status_code == 200
        assert requests.post(url, json=body, timeout=60).status_code == 401
        assert requests.get(base + "health", timeout=10).status_code == 200
