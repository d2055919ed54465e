"""``omnijudge serve`` setup: ROUTES.yaml checked with file:key messages, a model answers only the
families routed to it, loopback unless an API key is given."""

import base64

import pytest
from fastapi.testclient import TestClient

from serve_testing import tiny_judges, wav_bytes

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.speecheditbench.judge_prompts import paralinguistic_prompt
from evaluators.cli import main
from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.command import is_loopback
from evaluators.serve.routes import JudgeLoader, Routes, load_route_judges


def _write(tmp_path, text):
    path = tmp_path / "ROUTES.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, words", [
    ("models: {m: {families: {no-such-family: {}}}}", "models.m.families.no-such-family: unknown prompt family"),
    ("models: {m: {families: {nvv-likert: {loudness: likert-quality}}}}", "nvv-likert.loudness: unknown slot"),
    ("models: {m: {families: {}, colour: red}}", "models.m: must be a mapping"),
    ("routes: {}", "one key, 'models'"),
])
def test_bad_routes_files_name_file_and_key(tmp_path, text, words):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=words.replace(".", r"\.")) as e:
        Routes.from_yaml(path)
    assert str(path) in str(e.value)


def test_a_model_answers_only_its_families_and_unknown_models_are_404(tmp_path):
    routes = Routes.from_yaml(_write(tmp_path, "models:\n  att-judge:\n    base: tiny\n    families:\n"
                                               "      auto-att-released: {}\n"))
    judges = load_route_judges(routes, JudgeLoader())
    assert list(judges) == ["att-judge"] and list(judges["att-judge"]) == ["auto-att-released"]
    # the released Auto-ATT preset on the same tiny backbone as serve --base tiny: the same judge
    assert judges["att-judge"]["auto-att-released"]["human-likeness"].backbone.source == \
        tiny_judges()["*"]["auto-att-released"]["human-likeness"].backbone.source
    client = TestClient(create_app(judges, ServeOptions(folder=tmp_path / "srv")))
    audio = {"inline_data": {"mime_type": "audio/wav", "data": base64.b64encode(wav_bytes(0.5)).decode()}}
    ok = client.post("/v1beta/models/att-judge:generateContent",
                     json={"contents": [{"parts": [{"text": RELEASED_PROMPT}, audio]}]})
    assert ok.status_code == 200
    other = client.post("/v1beta/models/att-judge:generateContent",
                        json={"contents": [{"parts": [{"text": paralinguistic_prompt()}, audio]}]})
    assert other.status_code == 400 and "it answers: auto-att-released" in other.json()["error"]["message"]
    missing = client.post("/v1beta/models/gemini-2.5-pro:generateContent",
                          json={"contents": [{"parts": [{"text": RELEASED_PROMPT}, audio]}]})
    assert missing.status_code == 404 and "att-judge" in missing.json()["error"]["message"]


def test_only_loopback_binds_without_an_api_key(capsys):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert main(["serve", "--base", "tiny", "--host", "0.0.0.0"]) == 2
    assert "needs --api-key" in capsys.readouterr().err
