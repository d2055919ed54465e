"""Training and scoring on the new backbones: a tiny ATT run on the Qwen3-Omni MoE twin (LoRA on
attention; as an option on the experts' projections too, router frozen) with pinned first losses;
its judge folder records the backbone, reloads with the same scores and is refused on a base of
another backbone with one line; ``omnijudge train`` runs the Qwen2.5-Omni-3B twin.

The golden losses follow ``tests/test_golden_loss_curves.py`` (``configs/att/tiny.yaml``, one clip
per voice and dimension: 6 optimizer steps of 8 clips, fp32 CPU, one math thread, seed 0, rtol
1e-5); re-pin with ``OMNIJUDGE_PRINT_GOLDEN=1`` and say why the curve moved.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch
from test_golden_loss_curves import RUN, logged_losses, one_thread, train_run  # noqa: F401 (one_thread: a fixture)

#: the ATT case of tests/test_golden_loss_curves.py (one clip per voice and dimension)
ATT = {"att.corpus.seed": 0, "att.corpus.clips_per_voice_dimension": 1}
#: LoRA on the experts' fused projections as well (peft target_parameters; no dropout there).
EXPERTS = {"lora.target_parameters": ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"], "lora.dropout": 0.0}
CASES = {"qwen3_omni_att": {"backbone.name": "qwen3_omni"},
         "qwen3_omni_att_experts": {"backbone.name": "qwen3_omni", **EXPERTS}}
GOLDEN = {
    "qwen3_omni_att": [7.007913112640381, 5.605798721313477, 6.92722225189209, 4.010006904602051,
                       5.623600482940674, 6.019460678100586],
    "qwen3_omni_att_experts": [7.007913112640381, 5.602121829986572, 6.91346549987793, 4.0274977684021,
                               5.618741035461426, 6.021415710449219],
}
PRINT = os.environ.get("OMNIJUDGE_PRINT_GOLDEN") == "1"


def _train(overrides: dict, root):
    return train_run("configs/att/tiny.yaml", {**ATT, **overrides}, root)


@pytest.mark.parametrize("case", sorted(CASES))
def test_tiny_qwen3_omni_att_first_losses_match_golden(case, tmp_path, one_thread, capsys):
    run = _train(CASES[case], tmp_path)
    losses = [loss for _, loss in logged_losses(run)]
    if PRINT:
        with capsys.disabled():
            print(f"\n    {case!r}: {losses!r},")
        return
    torch.testing.assert_close(torch.tensor(losses, dtype=torch.float64),
                               torch.tensor(GOLDEN[case], dtype=torch.float64), rtol=1e-5, atol=0.0,
                               msg=lambda m: f"{case}: loss curve moved\n{m}\ngot {losses!r}")
    from safetensors import safe_open

    with safe_open(str(run / "final" / "adapter_model.safetensors"), "pt") as f:
        keys = list(f.keys())
    assert not any(".mlp.gate." in k for k in keys), "the router must stay frozen"
    assert any("self_attn.q_proj.lora_A" in k for k in keys)
    assert any("mlp.experts" in k for k in keys) == ("lora.target_parameters" in CASES[case])
    assert not any("audio_tower" in k and "lora_" in k for k in keys), "no adapter on the audio tower"
    if "lora.target_parameters" in CASES[case]:  # the expert adapters come back when the folder loads
        from evaluators.judges import load_judge
        from trainer.lora import lora_wrapped_modules

        wrapped = lora_wrapped_modules(load_judge(run / "final").backbone.model)
        assert sum(n.endswith("mlp.experts") for n in wrapped) == 2, wrapped


def _wave(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    return (0.3 * np.sin(2 * np.pi * (150 + 40 * seed) * t) + 0.02 * rng.standard_normal(t.size)).astype(np.float32)


@pytest.fixture(scope="module")
def qwen3_judge_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("qwen3_att")
    return _train({"backbone.name": "qwen3_omni"}, root) / "final"


def test_the_judge_folder_records_its_backbone_and_scores_the_same_after_reload(qwen3_judge_folder):
    from evaluators.judges import load_judge

    cfg = json.loads((qwen3_judge_folder / "judge_config.json").read_text())
    assert cfg["backbone"] == "qwen3_omni"
    assert json.loads((qwen3_judge_folder / "base" / "omnijudge_backbone.json").read_text())["backbone"] == "qwen3_omni"
    judge = load_judge(qwen3_judge_folder)
    assert judge.backbone.spec.name == "qwen3_omni" and judge.backbone.audio_token == "<|audio_pad|>"
    waves = [_wave(s, i) for i, s in enumerate((0.7, 1.3, 2.9, 4.1))]
    one = [judge.score([{"wave": w}], batch_size=1)[0]["score"] for w in waves]
    four = [r["score"] for r in judge.score([{"wave": w} for w in waves], batch_size=4)]
    assert np.allclose(one, four, atol=1e-5) and all(0.0 <= s <= 1.0 for s in one)


def test_a_judge_folder_is_refused_on_a_base_of_another_backbone(qwen3_judge_folder, tmp_path, capsys):
    import soundfile as sf

    from evaluators.backbones import AudioLLM
    from evaluators.cli import main

    judge = tmp_path / "judge"
    shutil.copytree(qwen3_judge_folder, judge)
    AudioLLM.tiny("qwen2_5_omni_3b").save_pretrained(judge / "base")  # a base of another backbone
    (tmp_path / "audio").mkdir()
    sf.write(tmp_path / "audio" / "a.wav", _wave(1.0, 0), 16000)
    capsys.readouterr()
    code = main(["score", "audio", "--judge", str(judge), "--audio", str(tmp_path / "audio"),
                 "--out", str(tmp_path / "refused.jsonl")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "'qwen3_omni' does not match" in err[0] and "'qwen2_5_omni_3b' checkpoint" in err[0]
    assert not (tmp_path / "refused.jsonl").exists()


def test_omnijudge_train_runs_the_qwen2_5_omni_3b_twin(tmp_path):
    from evaluators.cli import main

    sets = {**RUN, **ATT, "backbone.name": "qwen2_5_omni_3b", "data.corpus_dir": str(tmp_path / "corpus"),
            "out_dir": str(tmp_path / "run"), "optim.max_steps": 2}
    args = ["train", "--config", "configs/att/tiny.yaml", "--set", *[f"{k}={v}" for k, v in sets.items()]]
    assert main(args) == 0
    cfg = json.loads((tmp_path / "run" / "final" / "judge_config.json").read_text())
    assert cfg["backbone"] == "qwen2_5_omni_3b"


def test_aligned_word_spans_follow_the_qwen3_omni_token_rate():
    """A word at 2.0-3.0 s covers audio tokens 26-39 on Qwen3-Omni (13 per second), 50-75 on
    Qwen2.5-Omni (25 per second): the aligned head reads each backbone's own rate."""
    from evaluators.backbones import get_backbone_spec
    from evaluators.judges.slot_head import span_example_fields

    n_frames = 1000  # 10 s of mel frames
    for name, (start, end) in {"qwen3_omni": (26, 39), "qwen2_5_omni": (50, 75)}.items():
        count = get_backbone_spec(name).audio_tokens
        ids = [7, 7] + [99] * count(n_frames) + [8]
        fields = span_example_fields([[2.0, 3.0]], n_frames, ids, 99, audio_tokens=count)
        assert fields["span_tokens"].tolist() == [[2 + start, 2 + end]], name


def test_omnijudge_train_runs_the_aligned_stress_head_on_the_qwen3_omni_twin(tmp_path):
    from evaluators.cli import main

    sets = {**RUN, "backbone.name": "qwen3_omni", "cast.corpus.seed": 0, "cast.corpus.sentences_per_language": 3,
            "cast.corpus.pairs_per_sentence": 1, "cast.corpus.n_speakers": 3,
            "data.corpus_dir": str(tmp_path / "corpus"), "out_dir": str(tmp_path / "run"), "optim.max_steps": 2}
    args = ["train", "--config", "configs/cast/tiny.yaml", "--set", *[f"{k}={v}" for k, v in sets.items()]]
    assert main(args) == 0
    cfg = json.loads((tmp_path / "run" / "final" / "judge_config.json").read_text())
    assert cfg["backbone"] == "qwen3_omni"


def test_serve_answers_the_released_att_prompt_with_the_qwen3_omni_judge(qwen3_judge_folder, tmp_path):
    """``omnijudge serve`` routes the Auto-ATT prompt to the Qwen3-Omni judge folder; the reply is
    the label with the largest probability in the judge's own scoring of the clip."""
    import base64
    import io

    import soundfile as sf
    from fastapi.testclient import TestClient

    from evaluators.benchmarks.att.presets import RELEASED_PROMPT
    from evaluators.judges import load_judge
    from evaluators.serve.app import ServeOptions, create_app
    from evaluators.serve.routes import JudgeLoader, Routes, load_route_judges

    routes = tmp_path / "ROUTES.yaml"
    routes.write_text("models:\n  att-qwen3:\n    families:\n"
                      f"      auto-att-released: {{human-likeness: {qwen3_judge_folder}}}\n")
    judges = load_route_judges(Routes.from_yaml(routes), JudgeLoader())
    assert judges["att-qwen3"]["auto-att-released"]["human-likeness"].backbone.spec.name == "qwen3_omni"
    buf = io.BytesIO()
    sf.write(buf, _wave(1.3, 3), 16000, format="WAV", subtype="PCM_16")
    client = TestClient(create_app(judges, ServeOptions(folder=tmp_path / "srv")))
    audio = {"inline_data": {"mime_type": "audio/wav", "data": base64.b64encode(buf.getvalue()).decode()}}
    reply = client.post("/v1beta/models/att-qwen3:generateContent",
                        json={"contents": [{"parts": [{"text": RELEASED_PROMPT}, audio]}]})
    assert reply.status_code == 200, reply.text
    text = reply.json()["candidates"][0]["content"]["parts"][0]["text"]
    pcm = sf.read(io.BytesIO(buf.getvalue()), dtype="float32")[0]
    probs = load_judge(qwen3_judge_folder).score([{"wave": pcm}])[0]["probs"]
    assert text == max(probs, key=probs.get), (text, probs)
