"""EmergentTTS-Eval's judge request through ``omnijudge serve`` (family ``emergenttts-win-rate``):
its two-audio prompt recognised in all six categories, every reply accepted by its validator,
swapping the audios swaps the winner (a tie stays a tie), the same request gives the same bytes,
and any other multi-audio request is a 4xx naming the families or the limit. The requests are
built as its client builds them (``emergenttts_testing``); ``test_serve_emergenttts_public.py``
runs its own client code from the fetched repository."""

import base64
import json

import pytest
import requests

from emergenttts_testing import FAMILY, MODEL, comparison_messages, compare_with_openai, parse_reply, \
    validate_win_rate_response
from serve_testing import running_server, tiny_judges, wav_bytes

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.emergenttts.prompts import categories, prompt_texts, win_rate_prompts
from evaluators.benchmarks.emergenttts.serve_family import decide, integer_score
from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.family_base import FamilyError, Layout
from evaluators.serve.prompt_families import FAMILIES, match_request
from evaluators.serve.routes import Routes

TEXT = 'She whispered, "Is it {really} over?" — then laughed: "Ha-ha!"\nNew line.'
SWAP = {0: 0, 1: 2, 2: 1}


def _layout(user: str, post: str) -> Layout:
    return Layout((user, post), (1, 2))


# ---- the family on its own ------------------------------------------------------------------------
def test_the_public_prompts_are_the_six_categories():
    assert categories() == ("Questions", "Emotions", "Syntactic Complexity", "Foreign Words", "Paralinguistics",
                            "Pronunciation")
    assert "Apache-2.0" in prompt_texts()["source"]


@pytest.mark.parametrize("category", categories())
def test_every_category_is_recognised_with_its_text(category):
    _, user, post = win_rate_prompts(TEXT, category)
    matched = match_request(user + "\n" + post, _layout(user, post))
    assert matched.family.name == FAMILY and matched.values == {"text": TEXT, "category": category}
    assert [(j.slot, j.audio, j.fields) for j in matched.jobs] == [(category, 0, {"text": TEXT}),
                                                                   (category, 1, {"text": TEXT})]


def test_a_changed_criterion_a_wrong_layout_or_a_wrong_audio_count_is_refused():
    _, user, post = win_rate_prompts(TEXT, "Questions")
    with pytest.raises(FamilyError, match="evaluation_criterion is not the public one"):
        match_request(user.replace("intonation", "tone") + "\n" + post, _layout(user, post))
    other = user.replace("**text_category**\n    Questions", "**text_category**\n    Jokes")
    with pytest.raises(FamilyError, match="unknown text_category 'Jokes'"):
        match_request(other + "\n" + post, _layout(other, post))
    with pytest.raises(FamilyError, match="text, audio 1, POST_AUDIO_1_MESSAGE, audio 2"):
        match_request(user + "\n" + post, Layout((user, post), (2, 2)))  # both clips after the texts
    with pytest.raises(FamilyError, match="takes exactly 2 audio parts; the request has 1"):
        match_request(user + "\n" + post, Layout((user, post), (1,)))
    with pytest.raises(FamilyError, match="auto-att-released takes exactly 1 audio parts; the request has 2"):
        match_request(RELEASED_PROMPT, Layout((RELEASED_PROMPT,), (1, 1)))
    with pytest.raises(FamilyError, match=f"multi-audio families: {FAMILY}"):
        match_request("Which clip is better?", Layout(("Which clip is better?",), (1, 1)))


def test_the_winner_is_antisymmetric_in_the_two_scores():
    scores = [0.0, 0.05, 0.1, 0.15, 1.0, 1.2, 2.999, 3.0]
    for band in (0.0, 0.1, 0.5, 3.0):
        for a in scores:
            for b in scores:
                assert decide(b, a, band) == SWAP[decide(a, b, band)]
                assert (decide(a, b, band) == 0) == (abs(a - b) <= band)
    assert [integer_score(s) for s in (0.0, 0.49, 0.5, 1.5, 2.51, 3.0)] == [0, 0, 1, 2, 3, 3]


def _result(unit: float) -> dict:
    return {"kind": "clip_score", "result": {"raw": unit, "unit": unit}, "score": unit, "label": "", "probs": {}}


def test_the_reply_says_what_decided_and_passes_the_validator():
    _, user, post = win_rate_prompts(TEXT, "Emotions")
    matched = match_request(user + "\n" + post, _layout(user, post))
    raw = matched.reply([_result(0.9), _result(0.5)])  # 2.7 vs 1.5 on the 0-3 scale
    reply = parse_reply(raw)
    validate_win_rate_response(reply, raw)
    assert reply == {"reasoning_system_1": "Per-clip judge score of system 1: 2.700 on the 0-3 scale (score_1 3).",
                     "reasoning_system_2": "Per-clip judge score of system 2: 1.500 on the 0-3 scale (score_2 2).",
                     "system_comparison": "Score difference, system 1 minus system 2: +1.200, more than the tie "
                                          "band 0.1: system 1 wins.",
                     "score_1": 3, "score_2": 2, "winner": 1}
    tie = parse_reply(matched.reply([_result(0.9), _result(0.5)], {"tie_band": 1.5}))
    assert tie["winner"] == 0 and "within the tie band 1.5" in tie["system_comparison"]


def test_routes_take_a_tie_band_and_a_judge_per_category(tmp_path):
    path = tmp_path / "ROUTES.yaml"
    path.write_text(f"models:\n  {MODEL}:\n    base: tiny\n    families:\n      {FAMILY}:\n        tie_band: 0.25\n"
                    "        Pronunciation: likert-naturalness\n")
    route = Routes.from_yaml(path).models[MODEL]
    assert route.family_settings(FAMILY) == {"tie_band": 0.25}
    assert route.judge_specs(FAMILY)["Pronunciation"] == "likert-naturalness"
    assert route.judge_specs(FAMILY)["Questions"] == FAMILIES[FAMILY].slots["Questions"] == "auto-att"
    path.write_text(f"models:\n  m:\n    families:\n      {FAMILY}:\n        tie_band: -1\n")
    with pytest.raises(ValueError, match=f"models.m.families.{FAMILY}.tie_band: must be a number >= 0"):
        Routes.from_yaml(path)


# ---- through the server -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Model ``*``: tie band 0 (every score difference decides); ``wide-band``: tie band 3 (all ties)."""
    judges = {"*": tiny_judges()["*"], "wide-band": tiny_judges()["*"]}
    settings = {"*": {FAMILY: {"tie_band": 0.0}}, "wide-band": {FAMILY: {"tie_band": 3.0}}}
    app = create_app(judges, ServeOptions(folder=tmp_path_factory.mktemp("serve"), max_body_bytes=4 << 20,
                                          max_audios=3, max_request_audio_bytes=1 << 20), settings=settings)
    with running_server(app) as base:
        yield base


#: two pairs of clips whose tiny-judge scores differ clearly (a long and a short clip each)
CLIPS = [wav_bytes(s, seed=10 + k) for k, s in enumerate((0.5, 2.0, 1.8, 0.6))]


@pytest.mark.parametrize("category", categories())
def test_six_categories_valid_replies_swap_and_determinism(server, category):
    system, user, post = win_rate_prompts(f"{TEXT} ({category})", category)
    for first, second in ((0, 1), (2, 3)):
        raw = compare_with_openai(server, system, user, post, CLIPS[first], CLIPS[second])
        reply = parse_reply(raw)
        validate_win_rate_response(reply, raw)
        assert compare_with_openai(server, system, user, post, CLIPS[first], CLIPS[second]) == raw  # same bytes
        swapped = parse_reply(compare_with_openai(server, system, user, post, CLIPS[second], CLIPS[first]))
        validate_win_rate_response(swapped, "")
        assert swapped["winner"] == SWAP[reply["winner"]] and reply["winner"] != 0  # band 0: scores differ
        assert (swapped["score_1"], swapped["score_2"]) == (reply["score_2"], reply["score_1"])
        tie = parse_reply(compare_with_openai(server, system, user, post, CLIPS[first], CLIPS[second], "wide-band"))
        assert tie["winner"] == 0 and tie["score_1"] == reply["score_1"]


def test_concurrent_requests_get_the_bytes_a_lone_request_gets(server):
    """Batch-mates change nothing: 8 requests at once (the same pair in both orders, other pairs) get
    the reply texts they get one at a time."""
    from concurrent.futures import ThreadPoolExecutor

    system, user, post = win_rate_prompts(TEXT, "Pronunciation")
    orders = [(0, 1), (1, 0), (2, 3), (3, 2)] * 2
    alone = {o: compare_with_openai(server, system, user, post, CLIPS[o[0]], CLIPS[o[1]]) for o in orders[:4]}
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda o: compare_with_openai(server, system, user, post, CLIPS[o[0]], CLIPS[o[1]]),
                                 orders))
    assert together == [alone[o] for o in orders]


def test_each_clip_is_scored_alone_and_the_verdicts_name_the_audio(server):
    system, user, post = win_rate_prompts(TEXT, "Questions")
    r = requests.post(server + "v1/chat/completions", json={
        "model": MODEL, "messages": comparison_messages(system, user, post, CLIPS[0], CLIPS[1])}, timeout=120)
    assert r.status_code == 200 and r.headers["x-omnijudge-family"] == FAMILY
    verdicts = r.json()["omnijudge"]["verdicts"]
    assert [(v["slot"], v["audio"], v["kind"]) for v in verdicts] == [("Questions", 0, "clip_score"),
                                                                      ("Questions", 1, "clip_score")]
    reply = json.loads(r.json()["choices"][0]["message"]["content"])
    assert f"{3 * verdicts[0]['result']['unit']:.3f}" in reply["reasoning_system_1"]


def test_the_gemini_api_takes_the_two_clips_inline_or_uploaded(server, tmp_path):
    """GeminiClient.generate_w_audio_comparison's contents ([text, audio, text, audio]) through
    google-genai, the first clip uploaded (file_data), the second inline: the reply is the OpenAI one."""
    from google import genai
    from google.genai import types

    system, user, post = win_rate_prompts(TEXT, "Foreign Words")
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=server))
    path = tmp_path / "one.wav"
    path.write_bytes(CLIPS[0])
    uploaded = client.files.upload(file=str(path))
    resp = client.models.generate_content(
        model=MODEL, contents=[user, uploaded, post, types.Part.from_bytes(data=CLIPS[1], mime_type="audio/wav")],
        config=types.GenerateContentConfig(system_instruction=system, temperature=0, top_p=0.9))
    assert resp.text == compare_with_openai(server, system, user, post, CLIPS[0], CLIPS[1])


def _post(server, parts: list[dict]) -> requests.Response:
    return requests.post(server + "v1/chat/completions", json={"model": MODEL, "messages": [
        {"role": "user", "content": parts}]}, timeout=120)


def _audio(wav: bytes) -> dict:
    return {"type": "input_audio", "input_audio": {"data": base64.b64encode(wav).decode(), "format": "wav"}}


def test_bad_multi_audio_requests_get_a_4xx_naming_why(server):
    _, user, post = win_rate_prompts(TEXT, "Paralinguistics")
    text = lambda t: {"type": "text", "text": t}  # noqa: E731
    cases = [
        ([text("Which is better?"), _audio(CLIPS[0]), _audio(CLIPS[1])], 400, f"multi-audio families: {FAMILY}"),
        ([text(user), _audio(CLIPS[0]), text(post)], 400, "takes exactly 2 audio parts; the request has 1"),
        ([text(user), text(post), _audio(CLIPS[0]), _audio(CLIPS[1])], 400, "text, audio 1, POST_AUDIO_1_MESSAGE"),
        ([text(user), _audio(CLIPS[0]), text(post), _audio(b"RIFF not audio")], 400, "audio part 2: audio could not"),
        ([text(user), *[_audio(CLIPS[0])] * 4], 400, "limit is 3 (--max-audios-per-request)"),
        ([text(user), _audio(wav_bytes(20.0)), text(post), _audio(wav_bytes(20.0))], 413, "--max-request-audio-mb"),
        ([text(user), _audio(CLIPS[0]), text(post), {"type": "input_audio", "input_audio": {
            "data": base64.b64encode(CLIPS[1]).decode()[:-8] + "ab-_+/==", "format": "wav"}}], 400,
         "messages[0].content[3].input_audio.data: not base64 audio bytes"),  # two base64 alphabets mixed
    ]
    for parts, status, words in cases:
        r = _post(server, parts)
        assert r.status_code == status and words in r.json()["error"]["message"], (words, r.text)
    gemini = {"contents": [{"parts": [{"text": user}, {"file_data": {"file_uri": "files/0123456789ab"}}, {"text": post},
                                      {"inline_data": {"mime_type": "audio/wav",
                                                       "data": base64.urlsafe_b64encode(CLIPS[1]).decode()}}]}]}
    r = requests.post(server + f"v1beta/models/{MODEL}:generateContent", json=gemini, timeout=120)
    assert r.status_code == 404 and "files/0123456789ab" in r.json()["error"]["message"], r.text


# ---- a trained judge in a category's slot -----------------------------------------------------------
def test_a_trained_reward_judge_answers_a_category_and_another_kind_is_refused_at_startup(tmp_path, tiny_omni):
    """The pairs task's judge kind (``scalar_reward``, SpeechJudge's reward model) scores each clip
    with the item's text; its reward r is shown as 3 x sigmoid(r). A folder of a kind that does not
    score one clip alone stops the server with the route key and the kind."""
    from conftest import speechlike

    from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
    from evaluators.judges.scalar_reward import ScalarRewardJudge
    from scipy.special import expit as sigmoid
    from evaluators.serve.routes import JudgeLoader, load_route_judges

    reward = ScalarRewardJudge(tiny_omni, ScalarRewardJudge.new_head(tiny_omni, seed=3))
    folder = reward.save_pretrained(tmp_path / "reward", extra={"task": "pairs"})
    path = tmp_path / "ROUTES.yaml"
    path.write_text(f"models:\n  {MODEL}:\n    base: tiny\n    families:\n      {FAMILY}:\n        Emotions: {folder}\n")
    slot = load_route_judges(Routes.from_yaml(path), JudgeLoader())[MODEL][FAMILY]["Emotions"]
    assert slot.kind == "scalar_reward"
    wave = speechlike(1.0, seed=4)
    got = slot.score_examples([slot.prepare_input({"wave": wave, "fields": {"text": TEXT}})])[0]
    want = reward.score([{"wave": wave, "fields": {"text": TEXT}}])[0]["score"]
    assert got["result"]["raw"] == pytest.approx(want, abs=1e-5)
    assert got["result"]["unit"] == pytest.approx(sigmoid(want), abs=1e-6)

    verifier = NvvVerifierJudge(tiny_omni, NvvVerifierJudge.new_head(tiny_omni))
    other = verifier.save_pretrained(tmp_path / "verifier", extra={"task": "nvv"})
    path.write_text(f"models:\n  {MODEL}:\n    base: tiny\n    families:\n      {FAMILY}:\n        Questions: {other}\n")
    with pytest.raises(ValueError, match=f"models.{MODEL}.families.{FAMILY}.Questions: .*kind 'nvv_verifier'.*"
                                         "'verbalizer' or 'scalar_reward'"):
        load_route_judges(Routes.from_yaml(path), JudgeLoader())


@pytest.mark.slow  # a fresh interpreter loads torch and the tiny judges: 20-90 s on 2 busy cores
def test_the_check_script_measures_no_invalid_reply_swap_or_byte_difference():
    """scripts/emergenttts_serve_check.py end to end (2 synthetic pairs, the tiny default judge)."""
    import subprocess
    import sys
    from pathlib import Path

    from serve_testing import free_port

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "scripts/emergenttts_serve_check.py", "--base", "tiny", "--clips", "2",
                           "--tie-band", "0", "--port", str(free_port())], cwd=root, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert (report["requests"], report["invalid"], report["swap_inconsistent"], report["not_deterministic"]) == \
        (6, 0, 0, 0)


def test_the_several_audio_byte_limit_leaves_a_one_audio_request_alone(server):
    """A one-clip request is bounded by the body limit, as before: 1.3 MB of audio past this server's
    1 MiB --max-request-audio-mb is judged."""
    one = wav_bytes(40.0)
    assert len(one) > 1 << 20
    r = requests.post(server + "v1/chat/completions", json={"model": MODEL, "messages": [{"role": "user", "content": [
        {"type": "text", "text": RELEASED_PROMPT}, _audio(one)]}]}, timeout=120)
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] in ("Good", "Fair", "Bad"), r.text
