"""The in-prompt pairwise judge (kind ``in_prompt_pair``): both clips in one prompt built as the stock
processor builds it, both orders averaged so that swapping the clips mirrors the verdict exactly,
trained by the ``pairs`` task and scored by ``score pairs``, and serving EmergentTTS-Eval's judge
request through a route; a backbone that takes one audio per prompt is refused (at startup, by
route key, for the server)."""

import json

import pytest
import torch

from conftest import speechlike
from emergenttts_testing import FAMILY, MODEL, compare_with_openai, parse_reply, validate_win_rate_response
from serve_testing import running_server, wav_bytes

from evaluators.cli import main
from evaluators.judges.in_prompt_pair import (InPromptPairJudge, PairPrompt, canonical_orders, mirrored_expit,
                                              prepare_both_orders, score_both_orders)
from evaluators.judges.two_audio_prompt import (collate_two_clips, prepare_two_clips, render_two_clip_prompt,
                                                two_clip_conversation)
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus

SWAP = {0: 0, 1: 2, 2: 1}
TEXT = "the quiet river runs past the old mill"


def pair_verdict(judge, wave_a, wave_b, fields: dict) -> dict:
    """The order-free verdict on one pair, both orders in one batch (what ``score pairs`` reads)."""
    return score_both_orders(judge, [prepare_both_orders(judge, wave_a, wave_b, fields)], batch_size=2)[0]


@pytest.fixture(scope="module")
def judge():
    from evaluators.backbones import AudioLLM

    return InPromptPairJudge(AudioLLM.tiny("qwen2_5_omni", seed=0), PairPrompt(before="Text: {text}. One:"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs")
    build_pairs_corpus(PairsCorpusConfig(n_voices=3, test_voices=1, sentences_per_voice=2, max_seconds=1.0), out)
    return out


@pytest.mark.parametrize("backbone", ["qwen2_5_omni", pytest.param("qwen3_omni", marks=pytest.mark.slow)])
def test_two_clip_prompt_ids_and_outputs_equal_the_stock_processor(stand_in, backbone, monkeypatch):
    """The tiny Omni twins in the hub layout (real Qwen vocabularies, the published templates): our
    ids equal ``processor.apply_chat_template`` + ``processor(text, audio=[clip 1, clip 2])``, and
    the model's last-position logits on our collated batch equal those on the stock inputs."""
    from test_qwen3_omni_backbone import stock_processor

    from evaluators.backbones import AudioLLM

    folder = stand_in(backbone)
    llm = AudioLLM.from_pretrained(folder)
    proc = stock_processor(folder, backbone, monkeypatch)
    pieces = ("Text: hello there.\nOne:", "Two:", "Which is more natural? Answer 1 or 2.")
    prompt = render_two_clip_prompt(llm, llm.spec.system_prompt, *pieces)
    for s1, s2 in ((1.3, 5.02 + 1 / 16000),):  # 80321 samples: the processor's ceil (503 frames, 126 tokens)
        w1, w2 = speechlike(s1, seed=1), speechlike(s2, seed=2)
        text = proc.apply_chat_template(two_clip_conversation(llm.spec.system_prompt, *pieces),
                                        add_generation_prompt=True, tokenize=False)
        stock = proc(text=text, audio=[w1, w2], sampling_rate=16000, return_tensors="pt", padding=True)
        ours = prepare_two_clips(llm, prompt, w1, w2)
        assert ours["input_ids"].tolist() == stock["input_ids"][0].tolist(), (s1, s2)
        assert ours["n_frames"] == stock["feature_attention_mask"].sum(1).tolist()
        with torch.no_grad():
            want = llm.model(**stock).logits[0, -1]
            got = llm.token_logits(llm.last_hidden_state(**collate_two_clips(llm, [ours]))[:, -1],
                                   torch.arange(want.shape[0]))[0]
        assert torch.max(torch.abs(want - got)).item() <= 1e-4


def test_a_backbone_that_takes_one_audio_per_prompt_is_refused():
    from evaluators.backbones import AudioLLM

    with pytest.raises(ValueError, match="backbone qwen2_audio takes one audio per prompt"):
        InPromptPairJudge(AudioLLM.tiny("qwen2_audio", seed=0))


def test_swapping_the_clips_mirrors_the_verdict_exactly(judge):
    a, b = speechlike(1.2, seed=3), speechlike(0.8, seed=4)
    forward, swapped = pair_verdict(judge, a, b, {"text": TEXT}), pair_verdict(judge, b, a, {"text": TEXT})
    assert swapped["margin_a"] == -forward["margin_a"] and forward["margin_a"] != 0
    assert swapped["p_a"] == 1 - forward["p_a"]  # bit for bit, not approximately
    assert swapped["p_a_forward"] == pytest.approx(1 - forward["p_a_swapped"], abs=1e-12)
    same = pair_verdict(judge, a, a.copy(), {"text": TEXT})
    assert same["margin_a"] == 0 and same["p_a"] == 0.5  # a clip against itself: a tie
    for d in (1e-18, 0.3, 7.0, 40.0):
        assert mirrored_expit(-d) == 1 - mirrored_expit(d)
    assert canonical_orders(a, b)[2] != canonical_orders(b, a)[2]


def test_a_swapped_score_pairs_run_is_the_mirror_of_the_forward_run(judge, corpus, tmp_path):
    from evaluators.benchmarks.pairs.scorer import score_pairs

    from evaluators.run_options import RunOptions

    common = dict(splits=("test",), run=RunOptions(batch_size=3))  # 2 pairs: 4 prompts in one batch
    forward = {r["id"]: r for r in score_pairs(judge, corpus / "pairs.jsonl", tmp_path / "ab.jsonl", **common)}
    swapped = {r["id"]: r for r in score_pairs(judge, corpus / "pairs.jsonl", tmp_path / "ba.jsonl", swap=True,
                                               **common)}
    assert forward.keys() == swapped.keys() and len(forward) == 2
    for pid, r in forward.items():
        assert swapped[pid]["p_a"] == 1 - r["p_a"] and swapped[pid]["margin_a"] == -r["margin_a"]
        assert swapped[pid]["verdict"] == {"A": "B", "B": "A", "Tie": "Tie"}[r["verdict"]]


def test_the_folder_round_trip_keeps_the_prompt_and_the_margins(judge, tmp_path):
    from evaluators.judges.registry import load_judge

    folder = judge.save_pretrained(tmp_path / "j", extra={"task": "pairs"})
    loaded = load_judge(folder)
    assert loaded.kind == "in_prompt_pair" and loaded.pair_prompt == judge.pair_prompt
    a, b = speechlike(0.9, seed=5), speechlike(1.1, seed=6)
    fields = {"text": TEXT}
    assert pair_verdict(loaded, a, b, fields) == pytest.approx(pair_verdict(judge, a, b, fields), abs=1e-6)
    cfg = json.loads((folder / "judge_config.json").read_text())
    cfg["backbone"] = "qwen2_audio"
    (folder / "judge_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="judge_config.json:backbone: backbone qwen2_audio takes one audio per prompt"):
        load_judge(folder)


def test_the_pairs_loss_trains_the_both_orders_margin(corpus):
    from trainer.benchmarks import TASKS
    from trainer.config import config_from_dict
    from trainer.module import build_trainable_judge

    cfg = config_from_dict({"task": "pairs", "system_prompt": "You judge speech.", "lora": {"r": 4, "alpha": 4},
                            "pairs": {"score": "in_prompt", "in_prompt": {"before": "Text: {text}. One:",
                                                                  "order_loss_weight": 1.0}}})
    task = TASKS["pairs"]
    judge = build_trainable_judge(cfg)
    rows, _ = task.load_rows(corpus, cfg.task_config)
    rows = rows[:2]
    inputs, targets = task.collate(judge, [task.example(judge, r) for r in rows], rows)
    assert inputs["input_ids"].shape[0] == 4 and inputs["input_features"].shape[0] == 8  # 2 orders x 2 clips
    loss = task.loss(judge, inputs, targets, cfg.task_config)
    loss.backward()
    grads = [p.grad for p in judge.parameters() if p.requires_grad]
    assert torch.isfinite(loss) and any(g is not None and g.abs().sum() > 0 for g in grads)
    from evaluators.audio_io import load_audio

    judge.backbone.model.eval()  # dropout off: training's P(A better) is the scorer's
    for row in rows[:1]:
        with torch.no_grad():
            a, b = task._pair_scores(judge, task.collate(judge, [task.example(judge, row)], [row])[0])
        trained = torch.sigmoid(a - b).item()
        scored = pair_verdict(judge, load_audio(row["path_a"]), load_audio(row["path_b"]), {"text": row["text"]})["p_a"]
        assert scored == pytest.approx(trained, abs=1e-5)
        # validation during training reads the scoring engine's pass of `validate pairs`
        assert task.predict_rows(judge, [row], corpus, 2) == [pytest.approx(scored, abs=1e-6)]


@pytest.mark.slow  # trains the tiny judge for one epoch on CPU (about a minute on 2 busy cores)
def test_train_then_score_pairs_end_to_end(corpus, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", "configs/pairs/in_prompt_tiny.yaml", "--set", f"data.corpus_dir={corpus}",
                 f"out_dir={run}", "optim.max_epochs=1", "optim.warmup_steps=1", "lora.r=4", "lora.alpha=4"]) == 0
    cfg = json.loads((run / "final" / "judge_config.json").read_text())
    assert cfg["kind"] == "in_prompt_pair" and cfg["prompt_version"] == "tiny-in-prompt-v1"
    out = tmp_path / "verdicts.jsonl"
    assert main(["score", "pairs", "--judge", str(run / "final"), "--pairs", str(corpus / "pairs.jsonl"),
                 "--out", str(out), "--num-workers", "0"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 6 and all(r["verdict"] in ("A", "B", "Tie") and 0 <= r["p_a"] <= 1 for r in rows)
    assert all(r["judge"] == "pairs-in-prompt-tiny" and "p_a_forward" in r for r in rows)


# ---- serving EmergentTTS-Eval's request --------------------------------------------------------------
def _routes(tmp_path, body: str):
    from evaluators.serve.routes import Routes

    path = tmp_path / "ROUTES.yaml"
    path.write_text(body)
    return Routes.from_yaml(path), path


def test_a_one_audio_backbone_is_refused_at_startup_by_route_key(tmp_path):
    from evaluators.serve.routes import check_route_bases

    routes, path = _routes(tmp_path, f"models:\n  {MODEL}:\n    base: tiny\n    backbone: qwen2_audio\n    families:\n"
                                     f"      {FAMILY}:\n        Emotions: in-prompt-pair\n")
    with pytest.raises(ValueError) as e:
        check_route_bases(routes)
    assert str(e.value) == (f"{path}:models.{MODEL}.families.{FAMILY}.Emotions: in-prompt-pair: backbone qwen2_audio "
                            "takes one audio per prompt; an in-prompt pairwise judge needs one that hears two "
                            "(qwen2_5_omni, qwen3_omni)")


def test_serve_stops_with_one_line_naming_the_route_key(tmp_path, capsys):
    _, path = _routes(tmp_path, f"models:\n  {MODEL}:\n    backbone: qwen2_audio\n    families:\n"
                                f"      {FAMILY}:\n        Questions: in-prompt-pair\n")
    assert main(["serve", "--routes", str(path), "--folder", str(tmp_path / "srv")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"models.{MODEL}.families.{FAMILY}.Questions" in err[0]
    assert "one audio per prompt" in err[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory, judge):
    """``MODEL``: every category on a saved in-prompt judge folder, tie band 0."""
    from evaluators.serve.app import ServeOptions, create_app
    from evaluators.serve.routes import JudgeLoader, load_route_judges

    tmp = tmp_path_factory.mktemp("in_prompt_serve")
    folder = judge.save_pretrained(tmp / "judge", extra={"task": "pairs"})
    slots = "".join(f"        {c}: {folder}\n" for c in __import__(
        "evaluators.benchmarks.emergenttts.prompts", fromlist=["categories"]).categories())
    routes, _ = _routes(tmp, f"models:\n  {MODEL}:\n    families:\n      {FAMILY}:\n        tie_band: 0\n{slots}")
    app = create_app(load_route_judges(routes, JudgeLoader()), ServeOptions(folder=tmp / "srv"),
                     settings=routes.settings())
    with running_server(app) as base:
        yield base


def test_emergenttts_client_gets_valid_mirrored_replies_from_the_in_prompt_route(server):
    import requests

    from emergenttts_testing import comparison_messages
    from evaluators.benchmarks.emergenttts.prompts import categories, win_rate_prompts

    clips = [wav_bytes(s, seed=20 + k) for k, s in enumerate((0.7, 1.6))]
    for category in categories():
        system, user, post = win_rate_prompts(f"{TEXT} ({category})", category)
        raw = compare_with_openai(server, system, user, post, *clips)
        reply = parse_reply(raw)
        validate_win_rate_response(reply, raw)
        assert "In-prompt comparison, both orders averaged" in reply["reasoning_system_1"]
        assert compare_with_openai(server, system, user, post, *clips) == raw  # same bytes
        swapped = parse_reply(compare_with_openai(server, system, user, post, clips[1], clips[0]))
        assert swapped["winner"] == SWAP[reply["winner"]]
        assert (swapped["score_1"], swapped["score_2"]) == (reply["score_2"], reply["score_1"])
    system, user, post = win_rate_prompts(TEXT, "Questions")
    r = requests.post(server + "v1/chat/completions", json={
        "model": MODEL, "messages": comparison_messages(system, user, post, *clips)}, timeout=120)
    verdicts = r.json()["omnijudge"]["verdicts"]
    assert [(v["slot"], v["audios"], v["kind"]) for v in verdicts] == [("Questions", [0, 1], "pair_compare")]
    p_1 = verdicts[0]["result"]["p_1"]
    reply = json.loads(r.json()["choices"][0]["message"]["content"])
    assert f"{3 * p_1:.3f}" in reply["reasoning_system_1"] and f"{3 * (1 - p_1):.3f}" in reply["reasoning_system_2"]
