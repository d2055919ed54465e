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
