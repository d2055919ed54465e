"""Releases: a judge folder copied with its validation numbers and a model card, ready for the Hub.

Training writes a judge folder (``<run>/final``, format in ``docs/judge_folder.md``); ``release``
copies it, records the validation report in ``judge_config.json`` and renders ``README.md`` from the
task that trained it (``judge_config.json``'s ``task``). Weights are safetensors only.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from evaluators.judges.folder import (JUDGE_CONFIG, check_finite_weights, is_local_path, read_judge_config,
                                      upload_judge_folder, write_judge_config)
from trainer.benchmarks import task_of_judge

#: Judge folders written before ``task`` was recorded: the task that trained each kind then. A
#: recorded earlier task name (``att_hls``, ``word_stress``, ...) is read by ``task_of_judge``.
_LEGACY_TASK_OF_KIND = {"verbalizer": "att", "word_tagger": "cast", "nvv_verifier": "nvv"}


def model_card(config: dict, validation: dict | None) -> str:
    """Markdown model card: what the judge is, the task's sections (outputs, usage, validation), provenance."""
    task = task_of_judge(config.get("task") or _LEGACY_TASK_OF_KIND[config["kind"]])
    lines = ["---", "library_name: peft", "tags: [omnijudge, speech-evaluation, lora]",
             f"base_model: {config['base_model']}", "---", "",
             f"# {config['judge_name']}", "",
             f"A learned speech judge (`{config['kind']}` judge, task `{task.name}` of the `{task.benchmark}` "
             f"benchmark) trained with omnijudge: "
             + (f"LoRA (r={config['lora']['r']}, alpha={config['lora']['alpha']}) on the LLM of "
                if config.get("lora") else "a head on the frozen LLM of ")
             + f"`{config['backbone']}`.", "", "## Outputs", ""]
    lines += task.model_card(config, validation)
    lines += ["## Provenance", "", f"- training: `{json.dumps(config.get('training', {}).get('train_clips'))}` clips, "
              f"seed {config['seed']}", "- weights: safetensors only; loads without `trust_remote_code`.", ""]
    return "\n".join(lines)


class ReleaseError(ValueError):
    """A release that would destroy or clobber something: ``--out`` not empty, or inside the checkpoint."""


def _check_out(out: Path, protected: Path, overwrite: bool) -> None:
    """Refuse an ``out`` that is, holds or sits inside ``protected``, a symbolic link, a file, or a
    non-empty folder; with ``overwrite``, a non-empty folder only when it holds an earlier release
    (its ``judge_config.json``): ``--overwrite`` never deletes a folder of someone's own files."""
    if out.is_symlink():
        raise ReleaseError(f"--out {out}: is a symbolic link; give the folder itself")
    resolved, protected = out.resolve(), protected.resolve()
    if resolved == protected or protected in resolved.parents or resolved in protected.parents:
        raise ReleaseError(f"--out {out}: the release folder may not be, contain or sit inside the checkpoint "
                           f"{protected}")
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"--out {out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise ReleaseError(f"--out {out}: exists and is not empty (give --overwrite to replace an earlier release)")
        if not (out / JUDGE_CONFIG).is_file():
            raise ReleaseError(f"--out {out}: holds no {JUDGE_CONFIG}, so it is not an earlier release; "
                               "--overwrite replaces only a release folder; give a new or empty --out")


def release(checkpoint: str | Path, out: str | Path, validation: dict | None = None, push: bool = False,
            repo_id: str | None = None, private: bool = True, overwrite: bool = False,
            base_model: str | None = None) -> Path:
    """Copy a trained judge into a release folder with a model card; optionally push to the Hub.

    ``checkpoint`` is a run folder (its ``final/`` is used) or a judge folder. Validation numbers
    come from ``validation`` or the run's ``validation.json`` when present. A non-empty ``out`` is
    refused unless ``overwrite``, which replaces only an earlier release (a folder holding
    ``judge_config.json``), never a symbolic link; ``out`` may never be, hold or sit inside the checkpoint. The
    release is written into a temporary sibling folder and renamed into place, so a failure midway
    leaves ``out`` as it was. ``base_model`` (a hub id) replaces the recorded base; a judge trained
    from a local folder (absolute path) must be given one, since nobody else has that folder.
    """
    if push and not repo_id:  # before anything is written
        raise ReleaseError("--push needs --repo-id (the Hub repository to upload to)")
    src = Path(checkpoint)
    if not (src / JUDGE_CONFIG).is_file() and (src / "final" / JUDGE_CONFIG).is_file():
        run_dir, src, protected = src, src / "final", src
    else:
        run_dir, protected = src.parent, src
    if not (src / JUDGE_CONFIG).is_file():
        raise FileNotFoundError(f"{checkpoint}: no {JUDGE_CONFIG} (train a judge first)")
    config = read_judge_config(src)  # refuse a malformed folder before copying anything
    check_finite_weights(src)  # ... or one whose weights hold NaN or infinity (it could only score NaN)
    if base_model:
        if is_local_path(base_model):
            raise ReleaseError(f"--base-model {base_model!r}: give the hub id of the base model, not a local path")
        config["base_model"] = base_model
    elif is_local_path(config["base_model"]):
        raise ReleaseError(f"{src / JUDGE_CONFIG}: base_model {config['base_model']!r} is a local folder; "
                           "give --base-model <hub id> (e.g. Qwen/Qwen2.5-Omni-7B) for the release")
    out = Path(out)
    _check_out(out, protected, overwrite)
    if validation is None and (run_dir / "validation.json").is_file():
        validation = json.loads((run_dir / "validation.json").read_text())
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    tmp.chmod(0o755)  # mkdtemp makes it owner-only; a release folder is meant to be shared
    try:
        shutil.copytree(src, tmp, dirs_exist_ok=True)
        if validation:
            config["validation"] = validation
        if validation or base_model:
            write_judge_config(tmp, config)
        (tmp / "README.md").write_text(model_card(config, validation))
        if out.exists():  # empty, or --overwrite: keep the old one until the new one is complete
            old = out.with_name(f".{out.name}.old-{tmp.name.rsplit('.', 1)[-1]}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old)  # a folder: _check_out refused anything else
        else:
            tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    if push:
        push_release(out, repo_id, private, f"omnijudge release of {config['judge_name']}")
    return out


class ReleasePushError(RuntimeError):
    """The release folder was written but the Hub upload failed: one line saying both (exit 1)."""


def push_release(out: Path, repo_id: str, private: bool, message: str) -> None:
    """Upload ``out`` to ``repo_id``; an unreachable Hub is found in one quick probe, and any
    failure (network, credentials, permissions) becomes :class:`ReleasePushError` naming the
    folder that was written and why the push failed."""
    from evaluators.hub_access import hub_reachable

    ok, why = hub_reachable()
    if not ok:
        raise ReleasePushError(f"release folder written to {out}; --push to {repo_id} failed: the Hub cannot be "
                               f"reached ({why}); upload it later with `huggingface-cli upload {repo_id} {out}`")
    try:
        upload_judge_folder(out, repo_id, private, message)
    except Exception as e:  # noqa: BLE001 - network, token and permission failures alike: one line
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise ReleasePushError(f"release folder written to {out}; --push to {repo_id} failed "
                               f"({type(e).__name__}: {first}); upload it later with "
                               f"`huggingface-cli upload {repo_id} {out}`") from e
