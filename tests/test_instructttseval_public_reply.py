"""The zero-shot drop-in answering the 12 dimension fields of the public reply, each at its own
pre-filled position, and ``--instruction-type`` judging one task as the public script does."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from evaluators.benchmarks.instructttseval.items import DIMENSION_KEYS_ZH, DIMENSIONS, instruction_tasks
from evaluators.benchmarks.instructttseval.public_reply import PublicReplyJudge, field_prefix, with_public_reply
from evaluators.benchmarks.instructttseval.scorer import VerbalizerInstructionJudge, score_instructttseval
from evaluators.judges.verbalizer import VerbalizerJudge

INSTRUCTION = "gender: Female.\n\nspeed: Slow and deliberate."


def _wave(seconds: float, f0: float, seed: int = 0) -> np.ndarray:
    t = np.arange(int(seconds * 16000)) / 16000
    rng = np.random.default_rng(seed)
    return (0.3 * np.sin(2 * np.pi * f0 * t) + 0.01 * rng.standard_normal(t.size)).astype(np.float32)


@pytest.fixture(scope="module")
def drop_in(stand_in):
    return VerbalizerJudge.from_preset("instruct-follow", base=str(stand_in("qwen2_5_omni")))


@pytest.mark.slow  # 13 passes of the ~1,000-token public template per clip, on CPU
def test_each_field_is_read_at_its_own_prefilled_position(drop_in):
    assert field_prefix("性别") == '```json\n{\n    "性别":'
    judge = with_public_reply(drop_in)
    assert isinstance(judge, PublicReplyJudge) and judge.kind == "instruction_follow"
    inputs = [{"wave": _wave(s, f0, k), "instruction": INSTRUCTION, "lang": "en"}
              for k, (s, f0) in enumerate([(1.0, 150), (1.6, 260)])]
    out = judge.score(inputs, batch_size=8)
    plain = VerbalizerInstructionJudge(drop_in).score(inputs)
    for o, p in zip(out, plain):  # the verdict is the plain drop-in's, to the last bit of its batching
        assert o["p_true"] == pytest.approx(p["p_true"], abs=1e-6) and o["judge_score"] == p["judge_score"]
    # each dimension equals the preset asked with the answer pre-filled up to that field
    tok = drop_in.backbone.tokenizer
    for dim in ("gender", "personality"):
        ids = judge.fields[dim].prepare(inputs[0]["wave"], {"instruction": INSTRUCTION})["input_ids"]
        assert tok.decode(ids[-4:]).endswith(f'"{DIMENSION_KEYS_ZH[dim]}":')
    alone = judge.fields["speed"].score([{"wave": inputs[1]["wave"], "fields": {"instruction": INSTRUCTION}}])[0]
    assert out[1]["dimension_p_true"]["speed"] == pytest.approx(alone["probs"]["true"], abs=1e-6)
    first = out[0]
    assert list(first["reply"]) == [*DIMENSION_KEYS_ZH.values(), "一致性"]  # the public reply's keys, in order
    assert first["reply"]["一致性"] is first["judge_score"]
    assert set(first["dimensions"]) == set(DIMENSIONS)
    for dim in DIMENSIONS:
        p = first["dimension_p_true"][dim]
        assert first["dimensions"][dim] == ("matches" if p >= 0.5 else "conflicts")
        assert first["reply"][DIMENSION_KEYS_ZH[dim]] is (p >= 0.5)
        assert first["dimension_probs"][dim]["conflicts"] == pytest.approx(1 - p)
    # batch invariance (the engine batches fields of several outputs together)
    one = judge.score(inputs[:1], batch_size=13)[0]  # its fields batched among themselves only
    assert one["dimension_p_true"] == pytest.approx(out[0]["dimension_p_true"], abs=1e-5)


def test_other_judges_are_left_as_they_are(drop_in):
    from dataclasses import replace

    other = VerbalizerJudge(drop_in.backbone, replace(drop_in.preset, assistant_prefix=""))
    assert with_public_reply(other) is other
    assert with_public_reply("not a judge") == "not a judge"


def test_instruction_type_judges_one_task_like_the_public_script(drop_in, tmp_path):
    assert instruction_tasks("ALL") == ("APS", "DSD", "RP") and instruction_tasks("DSD") == ("DSD",)
    with pytest.raises(ValueError, match="instruction type"):
        instruction_tasks("aps")
    rows = [{"id": f"en_{k}", "text": "Hi.", **{t: {"instruction": INSTRUCTION, "gen_path": f"gen_wav/en_{k}_{t}.wav"}
                                                  for t in ("APS", "DSD", "RP")}} for k in range(2)]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "sys" / "gen_wav").mkdir(parents=True)
    for k in range(2):
        for t in ("APS", "DSD", "RP"):
            sf.write(tmp_path / "sys" / "gen_wav" / f"en_{k}_{t}.wav", _wave(1.0, 140 + 40 * k, k), 16000)
    result = score_instructttseval(with_public_reply(drop_in), items, tmp_path / "sys", tmp_path / "out",
                                   n_resamples=50, instruction_type="DSD")
    scored = [json.loads(x) for x in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["task"]) for r in scored) == [("en_0", "DSD"), ("en_1", "DSD")]
    assert all(len(r["reply"]) == 13 and len(r["dimensions"]) == 12 for r in scored)
    results = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    for r in results:  # the other tasks stay exactly as the item file gives them
        assert r["APS"] == rows[0]["APS"] | {"gen_path": r["APS"]["gen_path"]} and "judge_score" not in r["RP"]
        assert isinstance(r["DSD"]["judge_score"], bool) and len(r["DSD"]["dimensions"]) == 12
    table = result["table"]
    assert table["tasks"]["DSD"]["n_valid"] == 2
    assert table["tasks"]["APS"]["percent"] is None and table["avg"]["percent"] == table["tasks"]["DSD"]["percent"]
    assert "dimensions" in table and (tmp_path / "out" / "dimension_failures.png").is_file()
