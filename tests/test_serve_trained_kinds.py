"""``omnijudge serve`` with trained judge folders of the other kinds in ROUTES.yaml: an
instruction_follow judge answers InstructTTSEval, speech_edit_attribute judges SpeechEditBench's
emotion / style / paralinguistic prompts, an aligned NVV Likert rater its criterion of the tag-based
rater prompt. Each reply, read by its client's own parsing rule, equals the kind's verdict computed
directly with ``judge.score``; a folder of a kind that cannot answer its slot stops startup with one
line naming the route, the folder and its kind."""

import base64
import time

import pytest

from serve_testing import running_server, wav_bytes
from test_serve_clients import instructttseval_parse, nvv_parse, seb_post, speecheditbench_parse
from test_word_alignment import _tiny_whisper

from evaluators.audio_io import load_audio
from evaluators.benchmarks.instructttseval.prompts import public_prompt
from evaluators.benchmarks.nvv.items import position_units
from evaluators.benchmarks.nvv.serve_family import nvv_rater_prompt
from evaluators.benchmarks.speecheditbench.judge_prompts import emotion_prompt, paralinguistic_prompt, style_prompt
from evaluators.judges.registry import load_judge
from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.routes import JudgeLoader, Routes, load_route_judges
from evaluators.word_alignment import WhisperAligner, transcript_word_times

INSTRUCTION = "一位年轻女性，语气欢快。"
NVV_TEXT = "I <laugh> see the cat."


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("clips") / "a.wav"
    path.write_bytes(wav_bytes(1.2, seed=5))
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory, tiny_omni, clip):
    """Tiny judges of each trained kind, saved as judge folders, and a tiny Whisper aligner."""
    from evaluators.benchmarks.instructttseval.judge import InstructionJudge
    from evaluators.benchmarks.nvv.aligned_rater import AlignedLikertRater, new_rater_head
    from evaluators.benchmarks.speecheditbench.edit_judge import SpeechEditJudge

    root = tmp_path_factory.mktemp("judges")
    instruct = InstructionJudge(tiny_omni, InstructionJudge.new_head(tiny_omni, {"gender": ["male", "female"]}))
    # a threshold on the far side of 0.5 from this clip's P(true): the verdict must be the judge's
    # own (p_true >= threshold), not the argmax of true/false
    p = instruct.score([{"wave": load_audio(clip), "instruction": INSTRUCTION, "lang": "zh"}])[0]["p_true"]
    instruct.threshold = p + 1e-3 if p >= 0.5 else p - 1e-3
    out = {"instruct": instruct.save_pretrained(root / "instruct")}
    for criterion in ("emotion", "style", "paralinguistic"):
        judge = SpeechEditJudge.new(tiny_omni, criterion, seed=1, audio_attention=criterion == "paralinguistic")
        out[criterion] = judge.save_pretrained(root / criterion)
    rater = AlignedLikertRater(tiny_omni, new_rater_head(tiny_omni, "nvv_pe", seed=2), "nvv_pe")
    out["nvv_pe"] = rater.save_pretrained(root / "nvv_pe")
    out["whisper"] = _tiny_whisper(root / "whisper")
    return {k: str(v) for k, v in out.items()}


def _routes(tmp_path, folders, **slots):
    body = "\n".join(f"      {family}: {{{', '.join(f'{s}: {v}' for s, v in ss.items())}}}" for family, ss in slots.items())
    path = tmp_path / "ROUTES.yaml"
    path.write_text(f"models:\n  gemini-2.5-pro:\n    base: tiny\n    aligner: {folders['whisper']}\n"
                    f"    aligner_language: en\n    families:\n{body}\n")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory, folders):
    tmp = tmp_path_factory.mktemp("serve")
    para = folders["paralinguistic"]
    routes = Routes.from_yaml(_routes(tmp, folders, **{
        "instructttseval": {"consistency": folders["instruct"]},
        "speecheditbench-emotion": {"emotion": folders["emotion"]},
        "speecheditbench-style": {"style": folders["style"]},
        "speecheditbench-paralinguistic": {e: para for e in ("breath", "laugh", "cough", "sigh")},
        "nvv-likert": {"nvv_pe": folders["nvv_pe"]}}))
    judges = load_route_judges(routes, JudgeLoader())
    app = create_app(judges, ServeOptions(folder=tmp / "srv", max_audio_seconds=20))
    with running_server(app) as base:
        yield base, app


def _text(response) -> str:
    assert response.status_code == 200, response.text
    return response.json()["candidates"][0]["content"]["parts"][0]["text"]


def test_instruction_follow_judge_answers_instructttseval_through_google_genai(server, folders, clip):
    from google import genai
    from google.genai import types

    base, _ = server
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=base))
    uploaded = client.files.upload(file=str(clip))
    resp = client.models.generate_content(model="models/gemini-2.5-pro", contents=[public_prompt(INSTRUCTION), uploaded])
    client.files.delete(name=uploaded.name)
    verdict = instructttseval_parse(resp.text.strip())
    want = load_judge(folders["instruct"]).score([{"wave": load_audio(clip), "instruction": INSTRUCTION, "lang": "zh"}])[0]
    assert isinstance(verdict, bool) and verdict == want["judge_score"]
    assert verdict != (want["p_true"] >= 0.5)  # the threshold, not the argmax, decided


def test_edit_judges_answer_the_speecheditbench_payloads(server, folders, clip):
    base, app = server
    audio, wave = clip.read_bytes(), load_audio(clip)
    emo = speecheditbench_parse(_text(seb_post(base, emotion_prompt("I am fine.", "iemocap_en", "en"), audio)))
    want = load_judge(folders["emotion"]).score([{"wave": wave, "language": "en",
                                                  "anchor": {"emotion_taxonomy": "iemocap_en"}}])[0]
    assert set(emo) == {"predicted_emotion", "confidence", "rationale"}
    assert emo["predicted_emotion"] == want["predicted_emotion"]
    assert emo["confidence"] == pytest.approx(want["probs"][want["predicted_emotion"]], abs=1e-6)

    response = seb_post(base, style_prompt("intimate", "你好", "zh"), audio)
    style = speecheditbench_parse(_text(response))
    want = load_judge(folders["style"]).score([{"wave": wave, "language": "zh",
                                                "anchor": {"target_style": "intimate"}}])[0]
    assert len(response.json()["omnijudge"]["verdicts"]) == 1  # one pass gives all six styles
    assert style["target_style_score"] == want["target_style_score"]
    assert style["target_style_success"] == (want["target_style_score"] >= 3)
    assert style["style_scores"] == want["style_scores"] and style["dominant_style"] == want["dominant_style"]

    before = app.state.batcher.batched_requests
    para = speecheditbench_parse(_text(seb_post(base, paralinguistic_prompt(), audio)))
    deadline = time.monotonic() + 5  # the batcher counts a batch just after answering it
    while app.state.batcher.batched_requests == before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert app.state.batcher.batched_requests - before == 1  # one judge in the four slots: one pass
    want = load_judge(folders["paralinguistic"]).score([{"wave": wave, "language": "en"}])[0]
    assert para["event_scores"] == want["event_scores"]
    mean_p = sum(want["event_probs"][e][s] for e, s in want["event_scores"].items()) / 4
    assert para["confidence"] == pytest.approx(mean_p, abs=1e-6)


def test_aligned_rater_answers_its_criterion_of_the_nvv_tag_prompt(server, folders, clip):
    from openai import OpenAI

    base, _ = server
    client = OpenAI(api_key="k", base_url=base + "v1")
    audio = {"type": "input_audio", "input_audio": {"data": base64.b64encode(clip.read_bytes()).decode(), "format": "wav"}}
    reply = client.chat.completions.create(model="gemini-2.5-pro", messages=[{"role": "user", "content": [
        {"type": "text", "text": nvv_rater_prompt("tag") + f"Text: {NVV_TEXT}\n"}, audio]}])
    pred = nvv_parse(reply.choices[0].message.content)
    wave = load_audio(clip)
    clean = "I see the cat."
    times = transcript_word_times(WhisperAligner(folders["whisper"], language="en").word_timestamps(wave),
                                  position_units(clean, "en"), duration_s=len(wave) / 16000)
    want = load_judge(folders["nvv_pe"]).score([{"wave": wave, "text": clean, "lang": "en", "target_type": "laugh",
                                                 "tag_positions": [1], "unit_times": times}])[0]
    assert pred["nvc_pe_score"] == int(want["label"])
    assert all(isinstance(pred[f"{k}_score"], int) for k in ("overall_naturalness", "overall_quality", "nvc_accuracy"))
    # the prompt-based task sends a caption, which an aligned rater cannot read: a 400 with the reason
    from openai import BadRequestError
    with pytest.raises(BadRequestError, match="tagged transcript"):
        client.with_options(max_retries=0).chat.completions.create(model="gemini-2.5-pro", messages=[{"role": "user", "content": [
            {"type": "text", "text": nvv_rater_prompt("prompt") + "Text: A man laughs.\n"}, audio]}])


@pytest.mark.parametrize("family, slot, judge, words", [
    ("instructttseval", "consistency", "emotion", "kind 'speech_edit_attribute'"),
    ("speecheditbench-style", "style", "emotion", "criterion 'emotion'"),
    ("auto-att-released", "human-likeness", "nvv_pe", "kind 'nvv_likert_aligned'"),
    ("nvv-likert", "quality", "nvv_pe", "cannot answer nvv-likert slot quality"),
])
def test_a_folder_of_a_kind_that_cannot_answer_its_slot_stops_startup(tmp_path, folders, family, slot, judge, words):
    path = _routes(tmp_path, folders, **{family: {slot: folders[judge]}})
    with pytest.raises(ValueError) as e:
        load_route_judges(Routes.from_yaml(path), JudgeLoader())
    message = str(e.value)
    assert "\n" not in message and words in message and folders[judge] in message
    assert f"{path}:models.gemini-2.5-pro.families.{family}.{slot}" in message


def test_an_aligned_rater_without_an_aligner_stops_startup(tmp_path, folders):
    path = tmp_path / "ROUTES.yaml"
    path.write_text(f"models:\n  m:\n    base: tiny\n    families:\n      nvv-likert: {{nvv_pe: {folders['nvv_pe']}}}\n")
    with pytest.raises(ValueError, match="give the route an 'aligner'"):
        load_route_judges(Routes.from_yaml(path), JudgeLoader())
