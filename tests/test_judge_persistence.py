"""Every judge kind saves, loads, stamps provenance and uploads through one ``JudgePersistence``."""

from __future__ import annotations

import inspect
import json

import pytest

from evaluators.judges.kinds import JUDGE_KINDS
from evaluators.judges.persistence import JudgePersistence
from evaluators.judges.registry import judge_class

SHARED = ("save_pretrained", "from_pretrained", "provenance", "push_to_hub")


@pytest.mark.parametrize("kind", list(JUDGE_KINDS))
def test_every_kind_persists_through_the_mixin_alone(kind):
    """No kind keeps its own copy of the folder I/O: only the hooks are per kind."""
    cls = judge_class(kind)
    assert issubclass(cls, JudgePersistence)
    assert not [name for name in SHARED if name in vars(cls)], f"{cls.__name__} overrides the shared persistence"
    assert "_from_folder" in vars(cls) and "_config_extra" in vars(cls)
    assert inspect.signature(cls.from_pretrained) == inspect.signature(JudgePersistence.from_pretrained)


def test_push_to_hub_uploads_the_saved_folder(tiny_omni, monkeypatch):
    """``push_to_hub`` creates the (private) repository and uploads what ``save_pretrained`` writes."""
    import huggingface_hub

    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.word_tagger import WordTaggerJudge

    calls = []

    class FakeApi:
        def create_repo(self, repo_id, private, exist_ok):
            calls.append(("create", repo_id, private, exist_ok))

        def upload_folder(self, folder_path, repo_id, commit_message):
            from pathlib import Path

            files = sorted(p.name for p in Path(folder_path).iterdir())
            cfg = json.loads((Path(folder_path) / "judge_config.json").read_text())
            calls.append(("upload", repo_id, files, cfg["kind"], cfg["task"], commit_message))
            return f"https://huggingface.co/{repo_id}/commit/0"

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    judge = WordTaggerJudge(tiny_omni, WordTaggerJudge.new_head(tiny_omni), HeadPrompt("Mark stress."), name="det")
    url = judge.push_to_hub("someone/det", extra={"task": "cast"})
    assert url.endswith("/commit/0")
    assert calls[0] == ("create", "someone/det", True, True)
    _, repo, files, kind, task, message = calls[1]
    assert repo == "someone/det" and kind == "word_tagger" and task == "cast" and "det" in message
    assert {"judge_config.json", "word_head.safetensors", "chat_template.jinja", "base"} <= set(files)


def _sources():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for top in ("evaluators", "trainer", "scripts") for p in (root / top).rglob("*.py")}


def test_one_writer_of_judge_config_and_one_uploader():
    """``judge_config.json`` is written only by ``folder.write_judge_config`` and a judge folder is
    uploaded only by ``folder.upload_judge_folder`` (saving, importing and releasing all call them)."""
    import re

    sources = _sources()
    writes = {path for path, text in sources.items()
              if re.search(r"(JUDGE_CONFIG|judge_config\.json\")\)?\.write_(text|bytes)|open\([^)]*JUDGE_CONFIG", text)}
    uploads = {path for path, text in sources.items() if re.search(r"\bHfApi\(|\.upload_folder\(", text)}
    assert writes == set() and "path = Path(folder) / JUDGE_CONFIG\n    path.write_text(" in \
        sources["evaluators/judges/folder.py"]
    assert uploads == {"evaluators/judges/folder.py"}


def test_release_pushes_through_the_one_uploader(tmp_path, tiny_omni, monkeypatch):
    import evaluators.hub_access
    import huggingface_hub

    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.word_tagger import WordTaggerJudge
    from trainer.release import ReleasePushError, release

    uploaded = []

    class FakeApi:
        def create_repo(self, repo_id, private, exist_ok):
            pass

        def upload_folder(self, folder_path, repo_id, commit_message):
            uploaded.append((repo_id, json.loads((tmp_path / "rel" / "judge_config.json").read_text())["validation"]))
            raise OSError("403 Forbidden\nmore")

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setattr(evaluators.hub_access, "hub_reachable", lambda *a, **k: (True, ""))
    judge = WordTaggerJudge(tiny_omni, WordTaggerJudge.new_head(tiny_omni), HeadPrompt("Mark stress."), name="det")
    judge.save_pretrained(tmp_path / "det", extra={"task": "cast"})
    with pytest.raises(ReleasePushError, match="403 Forbidden"):
        release(tmp_path / "det", tmp_path / "rel", validation={"f1": 0.5}, push=True, repo_id="me/det")
    assert uploaded == [("me/det", {"f1": 0.5})]


def test_the_public_verbs_and_the_one_chunk_loop(tiny_omni, monkeypatch):
    """A kind supplies ``prepare_input`` / ``forward`` / ``_decide``; ``score`` and ``score_examples``
    are written once (``JudgeModule``) and every chunk of every kind runs through the engine's
    ``in_input_order``, the one loop."""
    import numpy as np

    import evaluators.engine
    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.persistence import JudgeModule
    from evaluators.judges.scalar_reward import ScalarRewardJudge
    from evaluators.judges.word_tagger import WordTaggerJudge

    for kind in JUDGE_KINDS:
        cls = judge_class(kind)
        if kind not in ("nvv_likert_aligned", "instruction_follow"):  # these two still batch via in_input_order
            assert "score" not in vars(cls) and "forward" in {n for c in cls.__mro__ for n in vars(c)}
    assert {n for n in vars(JudgeModule) if not n.startswith("_") and callable(vars(JudgeModule)[n])} == \
        {"collate", "score_examples", "score"}
    chunks = []
    loop = evaluators.engine.in_input_order
    monkeypatch.setattr(evaluators.engine, "in_input_order",
                        lambda examples, *a, **k: chunks.append(len(examples)) or loop(examples, *a, **k))
    waves = [np.sin(np.arange(n) / 7.0).astype(np.float32) * 0.3 for n in (8000, 12000, 9000)]
    tagger = WordTaggerJudge(tiny_omni, WordTaggerJudge.new_head(tiny_omni), HeadPrompt("Mark stress."))
    reward = ScalarRewardJudge(tiny_omni, ScalarRewardJudge.new_head(tiny_omni))
    tagged = tagger.score([{"wave": w, "words": ["a", "b"][: i % 2 + 1]} for i, w in enumerate(waves)], batch_size=2)
    rewards = reward.score([{"wave": w, "fields": {"text": "a"}} for w in waves], batch_size=2)
    assert chunks == [3, 3] and [len(r["probs"]) for r in tagged] == [1, 2, 1] and len(rewards) == 3
    tagger.head.train()
    tagger.score([{"wave": waves[0], "words": ["a"]}])
    assert tagger.head.training and not tagger.backbone.model.training  # each module back in its own mode
