"""Releases: a judge folder copied with its validation numbers and a model card, ready for the Hub.

Training writes a judge folder (``<run>/final``, format in ``docs/judge_folder.md``); ``release``
copies it, records the validation report in ``judge_config.json`` and renders ``README.md`` from the
task that trained it (``judge_config.json``'s ``task``). Weights are safetensors only.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evaluators.judges.folder import JUDGE_CONFIG, read_judge_config
from trainer.benchmarks import TASKS

#: Judge folders written before ``task`` was recorded: the task that trained each kind then.
_LEGACY_TASK_OF_KIND = {"verbalizer": "att_hls", "word_tagger": "word_stress", "nvv_verifier": "nvv_verify"}


def model_card(config: dict, validation: dict | None) -> str:
    """Markdown model card: what the judge is, the task's sections (outputs, usage, validation), provenance."""
    task = TASKS[config.get("task") or _LEGACY_TASK_OF_KIND[config["kind"]]]
    lines = ["---", "library_name: peft", "tags: [omnijudge, speech-evaluation, lora]",
             f"base_model: {config['base_model']}", "---", "",
             f"# {config['judge_name']}", "",
             f"A learned speech judge (`{config['kind']}` judge, task `{task.name}` of the `{task.benchmark}` "
             f"benchmark) trained with omnijudge: LoRA (r={config['lora']['r']}, alpha={config['lora']['alpha']}) "
             f"on the LLM of `{config['backbone']}`.", "", "## Outputs", ""]
    lines += task.model_card(config, validation)
    lines += ["## Provenance", "", f"- training: `{json.dumps(config.get('training', {}).get('train_clips'))}` clips, "
              f"seed {config['seed']}", "- weights: safetensors only; loads without `trust_remote_code`.", ""]
    return "\n".join(lines)


def release(checkpoint: str | Path, out: str | Path, validation: dict | None = None, push: bool = False,
            repo_id: str | None = None, private: bool = True) -> Path:
    """Copy a trained judge into a release folder with a model card; optionally push to the Hub.

    ``checkpoint`` is a run folder (its ``final/`` is used) or a judge folder. Validation numbers
    come from ``validation`` or the run's ``validation.json`` when present.
    """
    src = Path(checkpoint)
    if not (src / JUDGE_CONFIG).is_file() and (src / "final" / JUDGE_CONFIG).is_file():
        run_dir, src = src, src / "final"
    else:
        run_dir = src.parent
    if not (src / JUDGE_CONFIG).is_file():
        raise FileNotFoundError(f"{checkpoint}: no {JUDGE_CONFIG} (train a judge first)")
    config = read_judge_config(src)  # refuse a malformed folder before copying anything
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(src, out)
    if validation is None and (run_dir / "validation.json").is_file():
        validation = json.loads((run_dir / "validation.json").read_text())
    if validation:
        config["validation"] = validation
        (out / JUDGE_CONFIG).write_text(json.dumps(config, indent=2, ensure_ascii=False))
    (out / "README.md").write_text(model_card(config, validation))
    if push:
        if not repo_id:
            raise ValueError("--push needs --repo-id")
        from huggingface_hub import HfApi

        api = HfApi()
        api.create_repo(repo_id, private=private, exist_ok=True)
        api.upload_folder(folder_path=str(out), repo_id=repo_id, commit_message=f"omnijudge release of {config['judge_name']}")
    return out
