"""EmergentTTS-Eval's own code against ``omnijudge serve``: its ``prompts.py`` builds the prompts,
its ``api_clients.OpenAIClient`` sends them, its ``inference.py`` runs the judge step
(``get_judge_model_attributes`` with a local ``--judger_base_url``,
``audio_understanding_model_win_rate``: its random audio order, ``json_repair``, its validator)
over a data file in its format, and ``calculate_metrics_win_rate`` counts no parse failure.

The code is read at test time from a fetched copy of boson-ai/EmergentTTS-Eval-public
(``$OMNIJUDGE_EMERGENTTTS_CHECKOUT``: a clone's work tree or git directory); never committed here.
Without it, or without the packages its modules import (its requirements.txt: pydub, json_repair,
tenacity, whisper_normalizer, editdistance, librosa), these tests are skipped, saying which;
``test_serve_emergenttts.py`` covers the same request shape without it.
"""

import json
import sys

import numpy as np
import pytest

from emergenttts_testing import CHECKOUT_ENV, FAMILY, MODEL, public_checkout
from serve_testing import running_server, tiny_judges, wav_bytes

from evaluators.benchmarks.emergenttts.prompts import categories, win_rate_prompts
from evaluators.serve.app import ServeOptions, create_app

#: the packages EmergentTTS-Eval's api_clients / utils_eval / inference import at module level
NEEDS = ("pydub", "json_repair", "tenacity", "whisper_normalizer", "editdistance", "librosa", "openai")
#: its top-level modules this test imports (removed from sys.modules afterwards)
MODULES = ("prompts", "api_clients", "inference", "utils_eval", "wer_utils", "quality_assessment", "model_clients")


@pytest.fixture(scope="module")
def public(tmp_path_factory):
    """(prompts, api_clients, inference) modules of the checkout."""
    root = public_checkout(tmp_path_factory.mktemp("emergenttts_public"))
    if root is None:
        pytest.skip(f"no EmergentTTS-Eval checkout: set ${CHECKOUT_ENV} to a clone of "
                    "boson-ai/EmergentTTS-Eval-public (work tree or git directory)")
    for name in NEEDS:
        pytest.importorskip(name, reason=f"EmergentTTS-Eval's code imports {name} (its requirements.txt)")
    sys.path.insert(0, str(root))
    try:
        import api_clients
        import inference
        import prompts
        yield prompts, api_clients, inference
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] in MODULES]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Tie band 0: every difference of the two clips' scores decides (swaps are visible)."""
    app = create_app(tiny_judges(), ServeOptions(folder=tmp_path_factory.mktemp("serve")),
                     settings={"*": {FAMILY: {"tie_band": 0.0}}})
    with running_server(app) as base:
        yield base


def test_its_prompts_are_the_ones_omnijudge_recognises(public):
    prompts = public[0]
    text = 'Is it "really" {over}?'
    for category in categories():
        assert prompts.EmergentTextSpeech().get_win_rate_prompts(text, category) == win_rate_prompts(text, category)
    assert tuple(prompts.EmergentTextSpeech.CATEGORY_TO_CRITERION_MAP) == categories()


def _wave(seconds: float, seed: int) -> np.ndarray:
    from conftest import speechlike

    return speechlike(seconds, seed=seed).astype(np.float32)


def test_its_client_gets_valid_replies_that_swap_with_the_audios(public, server, monkeypatch):
    prompts, api_clients, _ = public
    monkeypatch.setenv("JUDGER_API_KEY", "local")
    client = api_clients.OpenAIClient(api_key="local", voice_to_use=None, base_url=server + "v1")
    judge_prompts = prompts.EmergentTextSpeech()
    a, b = _wave(2.0, 21), _wave(0.5, 22)  # a long and a short clip: the tiny judge's scores differ clearly
    for category in categories():
        system, user, post = judge_prompts.get_win_rate_prompts(f"Well... {category}?", category)
        replies = []
        for first, second in ((a, b), (b, a), (a, b)):
            raw = client.generate_w_audio_comparison(MODEL, system, user, first, post, second, temperature=0,
                                                     top_p=0.9, max_new_tokens=16384)
            import json_repair

            judge_prompts.validate_win_rate_response(json_repair.loads(raw), raw)
            replies.append(raw)
        forward, swapped = json.loads(replies[0]), json.loads(replies[1])
        assert replies[2] == replies[0]  # the same request, the same bytes
        assert swapped["winner"] == {0: 0, 1: 2, 2: 1}[forward["winner"]] and forward["winner"] != 0


def test_its_runner_judge_step_over_a_data_file_counts_no_failure(public, server, tmp_path, monkeypatch):
    """inference.py's judge step as evaluation_runner.py drives it with --judger_base_url, on a data
    file in its format (emergent_tts_eval_data.jsonl: one item per category) and WAV outputs."""
    _, api_clients, inference = public
    import soundfile as sf

    monkeypatch.setenv("JUDGER_API_KEY", "local")
    rows = [{"text_to_synthesize": f"Item {k}: did you say {category.lower()}?", "category": category,
             "evolution_depth": k % 3, "language": "en"} for k, category in enumerate(categories())]
    data = tmp_path / "emergent_tts_eval_data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples = inference.add_unique_id_to_samples([json.loads(line) for line in data.read_text().splitlines()])
    (tmp_path / "out").mkdir()
    (tmp_path / "baseline").mkdir()
    for s in samples:
        uid = s[inference.UNIQUE_KEY_NAME]
        (tmp_path / "out" / f"{uid}.wav").write_bytes(wav_bytes(0.8 + 0.1 * uid, seed=uid))
        (tmp_path / "baseline" / f"{uid}.wav").write_bytes(wav_bytes(1.0, seed=100 + uid))
        s["baseline_audio_path"] = str(tmp_path / "baseline" / f"{uid}.wav")
    client, config = inference.get_judge_model_attributes(MODEL, server + "v1")
    assert isinstance(client, api_clients.OpenAIClient) and config["temperature"] == 0
    task = inference.EmergentTTSEvalConfig(prompting_object=inference.EmergentTextSpeech(), eval_data_path=str(data))
    for s in samples:
        out = tmp_path / "out" / f"{s[inference.UNIQUE_KEY_NAME]}.wav"
        inference.audio_understanding_model_win_rate(s, str(out), client, MODEL, task, **config)
    assert all(s["judger_output_win_rate_based"]["winner"] in (0, 1, 2) for s in samples), \
        [s["judger_output_win_rate_based"] for s in samples]
    metrics = inference.calculate_metrics_win_rate(samples)
    assert metrics["eval/judger_parsing_failed_count"] == 0
    assert {f"eval/{c}_win_rate" for c in categories()} <= set(metrics)
    assert sf.info(str(tmp_path / "out" / "0.wav")).samplerate == 16000


def test_its_client_gets_valid_mirrored_replies_from_an_in_prompt_route(public, tmp_path, monkeypatch):
    """Both clips in one prompt (``in-prompt-pair`` on the tiny Qwen2.5-Omni base, every category):
    its client's replies pass its validator, and the swapped request's winner and scores are the
    forward ones swapped (the order cannot decide)."""
    from evaluators.serve.routes import JudgeLoader, Routes, load_route_judges

    prompts, api_clients, _ = public
    path = tmp_path / "ROUTES.yaml"
    slots = "".join(f"        {c}: in-prompt-pair\n" for c in categories())
    path.write_text(f"models:\n  {MODEL}:\n    base: tiny\n    families:\n      {FAMILY}:\n        tie_band: 0\n{slots}")
    routes = Routes.from_yaml(path)
    app = create_app(load_route_judges(routes, JudgeLoader()), ServeOptions(folder=tmp_path / "srv"),
                     settings=routes.settings())
    monkeypatch.setenv("JUDGER_API_KEY", "local")
    import json_repair

    with running_server(app) as base:
        client = api_clients.OpenAIClient(api_key="local", voice_to_use=None, base_url=base + "v1")
        judge_prompts = prompts.EmergentTextSpeech()
        a, b = _wave(1.4, 31), _wave(0.6, 32)
        for category in categories():
            system, user, post = judge_prompts.get_win_rate_prompts(f"Really, {category}?", category)
            raws = [client.generate_w_audio_comparison(MODEL, system, user, x, post, y, temperature=0, top_p=0.9,
                                                       max_new_tokens=16384) for x, y in ((a, b), (b, a))]
            for raw in raws:
                judge_prompts.validate_win_rate_response(json_repair.loads(raw), raw)
            forward, swapped = (json.loads(r) for r in raws)
            assert swapped["winner"] == {0: 0, 1: 2, 2: 1}[forward["winner"]]
            assert (swapped["score_1"], swapped["score_2"]) == (forward["score_2"], forward["score_1"])
            assert "In-prompt comparison" in forward["reasoning_system_1"]
