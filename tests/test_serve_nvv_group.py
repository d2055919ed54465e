"""NVV-SuperBench's group-compare request (``GROUP_COMPARE=1``) through ``omnijudge serve``
(family ``nvv-group-compare``): its prompt recognised for both tasks and any number of systems,
every label of the request's ``response_schema`` answered, and each metric's ranking equal to the
ranking from scoring each clip alone (the per-sample ``nvv-likert`` request, same raters). The
prompt is rebuilt by omnijudge; when a fetched copy of lmxue/nvbench is present
(``$OMNIJUDGE_NVBENCH_CHECKOUT``), it is checked equal to the script's own builders."""

import base64
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import requests

from serve_testing import running_server, tiny_judges, wav_bytes

from evaluators.benchmarks.nvv.presets import JSON_KEYS, RUBRICS
from evaluators.benchmarks.nvv.serve_family import nvv_rater_prompt
from evaluators.benchmarks.nvv.serve_group import (audio_marker, criteria, default_schema, group_prompt,
                                                   label_sequence)
from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.family_base import FamilyError, Layout
from evaluators.serve.prompt_families import match_request

FAMILY = "nvv-group-compare"
SOURCE = "Well [laugh] that was close."
PROFILE = ("balanced", "You are a balanced rater. Use rubric faithfully; 3=noticeable, 4=slight, 5=almost perfect.")


def _request_texts(task: str, labels: list[str], source: str = SOURCE) -> list[str]:
    """``evaluate_groupcompare_once``'s text parts: the prompt + source, then one marker per label."""
    return [group_prompt(task, labels, "2", *PROFILE) + f"\n{source}\n", *(audio_marker(lb) for lb in labels)]


def _match(task: str, labels: list[str], schema=None):
    texts = _request_texts(task, labels)
    return match_request("\n".join(texts), Layout(tuple(texts), tuple(range(2, len(labels) + 2)), schema))


@pytest.mark.parametrize("task, n", [("tag", 2), ("tag", 4), ("prompt", 3)])
def test_the_group_prompt_is_recognised_with_its_labels_and_source(task, n):
    labels = label_sequence(n)
    matched = _match(task, labels)
    assert matched.family.name == FAMILY
    assert (matched.values["task"], matched.values["labels"], matched.values["source"]) == (task, tuple(labels), SOURCE)
    assert [(j.slot, j.audio) for j in matched.jobs] == [(c, k) for k in range(n) for c in criteria(task)]


def test_audios_out_of_place_or_a_schema_of_other_labels_are_refused():
    labels = label_sequence(3)
    texts = _request_texts("tag", labels)
    with pytest.raises(FamilyError, match="for each of the 3 labels its 'AUDIO <label>:' text and its audio"):
        match_request("\n".join(texts), Layout(tuple(texts), (4, 4, 4)))
    with pytest.raises(FamilyError, match="takes two or more audio parts; the request has 1"):
        match_request("\n".join(texts), Layout(tuple(texts), (2,)))
    with pytest.raises(FamilyError, match="results.required must be the labels A, B, C"):
        _match("tag", labels, default_schema(label_sequence(2), "tag"))


def _post(base: str, task: str, clips: list[bytes], schema: dict | None = None) -> requests.Response:
    """The REST body the legacy SDK sends for the script's parts (audio inline, as docs/serve.md's
    edit of llm_eval.py does), generation config as the script gives it."""
    labels = label_sequence(len(clips))
    texts = _request_texts(task, labels)
    parts = [{"text": texts[0]}]
    for text, clip in zip(texts[1:], clips):
        parts += [{"text": text}, {"inline_data": {"mime_type": "audio/wav", "data": base64.b64encode(clip).decode()}}]
    config = {"temperature": 0.2, "response_mime_type": "application/json",
              "response_schema": schema or default_schema(labels, task)}
    body = {"contents": [{"role": "user", "parts": parts}], "generationConfig": config,
            "systemInstruction": {"parts": [{"text": RUBRICS["system_instruction"]}]}}
    return requests.post(f"{base}v1beta/models/gemini-2.5-pro:generateContent", json=body, timeout=300)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = create_app(tiny_judges(), ServeOptions(folder=tmp_path_factory.mktemp("serve")))
    with running_server(app) as base:
        yield base


CLIPS = [wav_bytes(s, seed=30 + k) for k, s in enumerate((0.5, 2.0, 1.1))]


@pytest.mark.parametrize("task", ["tag", "prompt"])
def test_every_label_is_answered_and_each_ranking_is_that_of_each_clip_alone(server, task):
    r = _post(server, task, CLIPS)
    assert r.status_code == 200 and r.headers["x-omnijudge-family"] == FAMILY, r.text
    reply = json.loads(r.json()["candidates"][0]["content"]["parts"][0]["text"])
    labels = label_sequence(len(CLIPS))
    assert set(reply) == {"results", "ranking", "notes"} and set(reply["results"]) == set(labels)
    keys = [JSON_KEYS[c] for c in criteria(task)]
    for lb in labels:
        low = {k: 0 if k.startswith("nvc") else 1 for k in keys}
        assert all(low[k] <= reply["results"][lb][f"{k}_score"] <= 5 for k in keys)
        assert reply["results"][lb]["issues"] == [] and reply["results"][lb]["heard_summary"] == ""
    alone = {}  # each clip through the per-sample rater request: its expected score per criterion
    for lb, clip in zip(labels, CLIPS):
        single = requests.post(f"{server}v1beta/models/m:generateContent", json={"contents": [{"parts": [
            {"text": nvv_rater_prompt(task) + f"Text: {SOURCE}\n"},
            {"inline_data": {"mime_type": "audio/wav", "data": base64.b64encode(clip).decode()}}]}]}, timeout=300)
        verdicts = single.json()["omnijudge"]["verdicts"]
        alone[lb] = {JSON_KEYS[v["slot"]]: v["score"] for v in verdicts}
        assert {k: int(v["label"]) for k, v in zip(keys, verdicts)} == \
            {k: reply["results"][lb][f"{k}_score"] for k in keys}
    for k in keys:
        assert reply["ranking"][k] == sorted(labels, key=lambda lb: -alone[lb][k])


def test_the_reply_fills_the_schema_the_request_sends(server):
    labels = label_sequence(2)
    schema = json.loads(json.dumps(default_schema(labels, "tag")))  # its labels' objects apart
    schema["properties"]["results"]["properties"]["A"]["properties"]["caps_applied"] = {"type": "OBJECT"}
    schema["properties"]["results"]["properties"]["A"]["required"].append("caps_applied")
    reply = json.loads(_post(server, "tag", CLIPS[:2], schema).json()["candidates"][0]["content"]["parts"][0]["text"])
    assert reply["results"]["A"]["caps_applied"] == {} and "caps_applied" not in reply["results"]["B"]


# ---- the public script's own builders -------------------------------------------------------------
def _public_llm_eval(tmp_path: Path):
    source = Path(os.environ.get("OMNIJUDGE_NVBENCH_CHECKOUT", "/work/.mirror/lmxue+nvbench/repo"))
    rel = "evaluation/llm_evaluation/llm_eval.py"
    if (source / rel).is_file():
        text = (source / rel).read_text(encoding="utf-8")
    elif (source / "HEAD").is_file():
        shown = subprocess.run(["git", "--git-dir", str(source), "show", f"HEAD:{rel}"], capture_output=True)
        if shown.returncode != 0:
            return None
        text = shown.stdout.decode("utf-8")
    else:
        return None
    (tmp_path / "llm_eval.py").write_text(text, encoding="utf-8")
    return tmp_path


def test_the_rebuilt_prompt_and_schema_equal_the_public_scripts(tmp_path, monkeypatch):
    """``build_group_compare_prompt`` and ``build_group_compare_json_schema`` from llm_eval.py (its
    legacy SDK stood in for: the builders never call it) for both tasks, 2-5 systems, every profile."""
    folder = _public_llm_eval(tmp_path)
    if folder is None:
        pytest.skip("no nvbench checkout: set $OMNIJUDGE_NVBENCH_CHECKOUT to a clone of lmxue/nvbench")
    sdk = types.ModuleType("google.generativeai")
    sdk.configure = lambda **kwargs: None
    sdk.GenerativeModel = lambda *args, **kwargs: None
    monkeypatch.setitem(sys.modules, "google.generativeai", sdk)
    monkeypatch.setenv("GEMINI_API_KEY", "local")
    monkeypatch.syspath_prepend(str(folder))
    import llm_eval

    try:
        for task in ("prompt", "tag"):
            for n in (2, 3, 5):
                labels = llm_eval._label_sequence(n)
                assert labels == label_sequence(n)
                for rid, (name, inst) in enumerate(llm_eval.get_rater_profiles()):
                    assert llm_eval.build_group_compare_prompt(task, labels, name, inst, rid) == \
                        group_prompt(task, labels, str(rid), name, inst)
                assert llm_eval.build_group_compare_json_schema(labels, task) == default_schema(labels, task)
    finally:
        sys.modules.pop("llm_eval", None)


def test_the_public_script_group_compares_through_its_legacy_sdk(server, tmp_path, monkeypatch):
    """llm_eval.py's ``evaluate_groupcompare_once`` (labels shuffled per rater, the schema, the
    retries, its validation and hard caps) with the two edits docs/serve.md gives: the legacy SDK
    configured for REST with this server as the endpoint, the audio inline instead of uploaded."""
    folder = _public_llm_eval(tmp_path)
    if folder is None:
        pytest.skip("no nvbench checkout: set $OMNIJUDGE_NVBENCH_CHECKOUT to a clone of lmxue/nvbench")
    genai = pytest.importorskip("google.generativeai", reason="llm_eval.py's legacy SDK (google-generativeai)")
    import threading

    monkeypatch.setenv("GEMINI_API_KEY", "local")
    monkeypatch.syspath_prepend(str(folder))
    import llm_eval

    try:
        genai.configure(api_key="local", transport="rest", client_options={"api_endpoint": server.rstrip("/")})
        monkeypatch.setattr(llm_eval, "model", genai.GenerativeModel(llm_eval.MODEL_NAME,
                                                                     system_instruction=llm_eval.SYSTEM_INSTRUCTION))
        monkeypatch.setattr(genai, "upload_file", lambda path: {"mime_type": "audio/wav",
                                                                "data": Path(path).read_bytes()})
        monkeypatch.setattr(genai, "delete_file", lambda name: None)
        monkeypatch.setattr(llm_eval, "ERROR_LOG_FILE", str(tmp_path / "errors.log"))
        audio = {}
        for k, clip in enumerate(CLIPS):
            audio[f"system{k}"] = str(tmp_path / f"system{k}.wav")
            Path(audio[f"system{k}"]).write_bytes(clip)
        results, lock = {"items": {}}, threading.Lock()
        llm_eval.evaluate_groupcompare_once("tag", "tag", "laugh::item1", 0, 1, *PROFILE, list(audio), SOURCE, audio,
                                            results, lock, str(tmp_path / "out.json"), threading.Lock())
        item = results["items"]["laugh::item1::g0::r1"]
        assert item["status"] == "ok", item
        labels = item["ground_truth"]["label_to_system"]
        assert set(item["prediction"]["results"]) == set(labels) == set(label_sequence(len(CLIPS)))
        for k in (JSON_KEYS[c] for c in criteria("tag")):
            assert sorted(item["prediction"]["ranking"][k]) == sorted(labels)
    finally:
        sys.modules.pop("llm_eval", None)
