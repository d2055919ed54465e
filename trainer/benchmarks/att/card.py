"""Model-card sections of an Auto-ATT verbalizer judge."""

from __future__ import annotations


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the judge outputs, how to run it, and its validation on held-out voices."""
    lines = [f"Preset `{config['preset']['name']}`. Score = sum over labels of softmax(label-token logits) x value, "
             f"read at the {config['read_at']}.",
             "", "| label | value |", "|---|---|"]
    lines += [f"| {w} | {v:g} |" for w, v in zip(config["label_words"], config["label_values"])]
    lines += ["", f"Prompt (version {config['prompt_version']}):", "", f"> {config['prompt']}", "",
              "```bash", "omnijudge score att --judge <this folder> --audio <folder or manifest.jsonl> --out scores.jsonl",
              "```", ""]
    if not validation or "dimensions" not in validation:
        return lines
    lines += ["## Validation (held-out voices)", "",
              "Voice-level correlation within each capability dimension: mean predicted HLS per voice "
              "vs mean listener HLS per voice.", "",
              "| dimension | split | SRCC | PLCC | voices | clips |", "|---|---|---|---|---|---|"]
    for dim, m in validation["dimensions"].items():
        lines.append(f"| {dim} | {m['split']} | {m['srcc']:.3f} | {m['plcc']:.3f} | {m['n_voices']} | {m['n_clips']} |")
    trap = validation.get("trap", {})
    lines += ["", f"Trap-item F1 at threshold 0.5 (human recordings positive): **{validation['trap_f1']:.3f}** "
              f"({trap.get('n', '?')} trap clips).", ""]
    return lines
