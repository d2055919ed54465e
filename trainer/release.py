"""Judge folders and releases: adapter safetensors + judge_config.json + model card, Hub push.

A judge folder is what ``VerbalizerJudge.from_pretrained`` loads. Training writes one
(``<run>/final``); ``release`` copies it with the validation numbers and a model card, ready to
upload. Weights are safetensors only; nothing here ever needs ``trust_remote_code``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evaluators.judges.verbalizer import (
    ADAPTER_WEIGHTS,
    BASE_SUBDIR,
    JUDGE_CONFIG,
    VerbalizerJudge,
)
from trainer.config import TrainConfig

JUDGE_FORMAT_VERSION = 1


def write_judge_folder(model, cfg: TrainConfig, out: Path, kind: str, fields: dict, extra: dict | None = None) -> Path:
    """Adapter safetensors (+ tiny ``base/``) + ``judge_config.json`` with the common fields and
    the judge kind's own ``fields``."""
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    if not (out / ADAPTER_WEIGHTS).is_file():
        raise RuntimeError(f"peft did not write {out / ADAPTER_WEIGHTS}")
    if cfg.backbone.source == "tiny":
        # A tiny base is random: ship it so the folder reloads to identical scores anywhere.
        _save_clean_base(cfg, out / BASE_SUBDIR)
        base_model = BASE_SUBDIR
    else:
        base_model = cfg.backbone.source
    config = {
        "format": "omnijudge-judge", "format_version": JUDGE_FORMAT_VERSION, "kind": kind,
        "judge_name": cfg.judge_name, "backbone": cfg.backbone.name, "base_model": base_model, **fields,
        "max_seconds": cfg.max_seconds, "seed": cfg.seed,
        "lora": {"r": cfg.lora.r, "alpha": cfg.lora.alpha, "dropout": cfg.lora.dropout,
                 "extra_trainable": cfg.lora.extra_trainable},
        "training": extra or {},
    }
    (out / JUDGE_CONFIG).write_text(json.dumps(config, indent=2, ensure_ascii=False))
    return out


def export_judge_folder(judge: VerbalizerJudge, cfg: TrainConfig, out: Path, extra: dict | None = None) -> Path:
    """Write a loadable verbalizer judge folder from a trained (peft-wrapped) judge."""
    preset = judge.preset
    fields = {"preset": preset.to_dict(), "prompt": preset.prompt, "prompt_version": preset.prompt_version,
              "label_words": list(preset.labels), "label_values": list(preset.values),
              "read_at": preset.read_at, "long_clip_policy": cfg.long_clip_policy}
    return write_judge_folder(judge.backbone.model, cfg, out, "verbalizer", fields, extra)


def _save_clean_base(cfg: TrainConfig, out: Path) -> None:
    """Save the untouched tiny base: peft wraps modules in place, so rebuild it from its seed."""
    from evaluators.backbones.audio_llm import AudioLLM

    AudioLLM.tiny(cfg.backbone.name, seed=cfg.backbone.tiny_seed).save_pretrained(out)


def _verbalizer_section(config: dict) -> list[str]:
    lines = [f"Score = sum over labels of softmax(label-token logits) x value, read at the {config['read_at']}.",
             "", "| label | value |", "|---|---|"]
    lines += [f"| {w} | {v:g} |" for w, v in zip(config["label_words"], config["label_values"])]
    return lines


def _word_tagger_section(config: dict) -> list[str]:
    head = config.get("head", {}).get("mode", "last_token")
    return [f"Per-word outputs {config['output_names']} from a `{head}` head on the "
            f"{config['read_at']}; a word is positive when its probability >= {config['threshold']}."
            + (" It needs word timestamps (an outputs manifest or `--aligner`)." if head == "aligned" else "")]


def _nvv_verifier_section(config: dict) -> list[str]:
    return ["GT-conditioned NVV verifier: given audio, the reference transcript and the target NVV type, "
            "it writes `{present, text_with_mark, hallucinated_events}` (the public verifier's row format). "
            f"Read at: {config['read_at']}. Present when P(target at a boundary) >= {config['threshold']}; "
            f"a non-target type is reported when its boundary probability >= {config['type_threshold']}. "
            "It needs word timestamps (an outputs manifest or `--aligner`).", "",
            "```bash", "omnijudge score nvv --items ITEMS --outputs DIR --judge <this folder> --out RESULTS", "```"]


def _nvv_validation(validation: dict) -> list[str]:
    lines = ["## Validation (held-out synthetic sentences, vs what was rendered)", "",
             "| language | items | delta | presence acc | P | R | F1 | NTD |", "|---|---|---|---|---|---|---|---|"]
    for lang, m in validation["languages"].items():
        ntd = "-" if m["ntd"] is None else f"{m['ntd']:.3f}"
        lines.append(f"| {lang} | {m['n_items']} | {m['delta']} | {m['presence_accuracy']:.3f} | {m['precision']:.3f} | "
                     f"{m['recall']:.3f} | {m['f1']:.3f} | {ntd} |")
    return lines + [""]


def _att_validation(validation: dict) -> list[str]:
    lines = ["## Validation (held-out voices)", "",
             "Voice-level correlation within each capability dimension: mean predicted HLS per voice "
             "vs mean listener HLS per voice.", "",
             "| dimension | split | SRCC | PLCC | voices | clips |", "|---|---|---|---|---|---|"]
    for dim, m in validation["dimensions"].items():
        lines.append(f"| {dim} | {m['split']} | {m['srcc']:.3f} | {m['plcc']:.3f} | {m['n_voices']} | {m['n_clips']} |")
    trap = validation.get("trap", {})
    lines += ["", f"Trap-item F1 at threshold 0.5 (human recordings positive): **{validation['trap_f1']:.3f}** "
              f"({trap.get('n', '?')} trap clips).", ""]
    return lines


def _stress_validation(validation: dict) -> list[str]:
    lines = ["## Validation (held-out sentences and speakers)", "",
             "| language | items | word P | word R | word F1 | Hit % | Pair-Contrast % | Pair-Correct % |",
             "|---|---|---|---|---|---|---|---|"]
    for lang, m in validation["languages"].items():
        w, c = m["word"], m.get("cast", {})
        cell = lambda k: (f"{c[k]['value']:.1f} [{c[k]['low']:.1f}, {c[k]['high']:.1f}]"  # noqa: E731
                          if c.get(k) and c[k].get("value") is not None else "-")
        lines.append(f"| {lang} | {m['n_items']} | {w['precision']:.3f} | {w['recall']:.3f} | {w['f1']:.3f} | "
                     f"{cell('hit')} | {cell('contrast')} | {cell('correct')} |")
    return lines + [""]


def model_card(config: dict, validation: dict | None) -> str:
    """Markdown model card: what the judge outputs, how to run it, and its validation table."""
    kind = config.get("kind", "verbalizer")
    what = {"verbalizer": lambda: f"preset `{config['preset']['name']}`",
            "word_tagger": lambda: f"word tagger {config['output_names']}",
            "nvv_verifier": lambda: "NVV verifier"}[kind]()
    lines = ["---", "library_name: peft", "tags: [omnijudge, speech-evaluation, lora]",
             f"base_model: {config['base_model']}", "---", "",
             f"# {config['judge_name']}", "",
             f"A learned speech judge ({what}) trained with omnijudge: LoRA "
             f"(r={config['lora']['r']}, alpha={config['lora']['alpha']}) on the LLM of `{config['backbone']}`.",
             "", "## Outputs", ""]
    lines += {"verbalizer": _verbalizer_section, "word_tagger": _word_tagger_section,
              "nvv_verifier": _nvv_verifier_section}[kind](config)
    if "prompt" in config:
        lines += ["", f"Prompt (version {config['prompt_version']}):", "", f"> {config['prompt']}", ""]
    if kind == "verbalizer":
        lines += ["```bash", "omnijudge score --judge <this folder> --audio <folder or manifest.jsonl> --out scores.jsonl",
                  "```", ""]
    if validation and "dimensions" in validation:
        lines += _att_validation(validation)
    elif validation and kind == "nvv_verifier":
        lines += _nvv_validation(validation)
    elif validation and "languages" in validation:
        lines += _stress_validation(validation)
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
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(src, out)
    if validation is None and (run_dir / "validation.json").is_file():
        validation = json.loads((run_dir / "validation.json").read_text())
    config = json.loads((out / JUDGE_CONFIG).read_text())
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
