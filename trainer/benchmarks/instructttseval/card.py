"""Model-card sections of an InstructTTSEval instruction-following judge."""

from __future__ import annotations


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the judge outputs, how to run it on the benchmark, and its agreement table."""
    lines = ["Instruction-following judge for InstructTTSEval. Verdict: P(true) = softmax over the label tokens "
             f"`true` / `false` at the {config.get('read_at', 'final prompt token')}; true when P(true) >= "
             f"{config.get('threshold', 0.5)}. A dimension head on the same state says, for each of the 12 "
             "dimensions, whether the voice matches, conflicts with, or is not asked about what the instruction "
             f"states (unsupported: {', '.join(config.get('unsupported', [])) or 'none'}).", "",
             f"Prompts (version {config.get('prompt_version')}):", ""]
    for lang, preset in config.get("prompts", {}).items():
        lines += [f"- {lang}: `{preset['prompt']!r}`"]
    lines += ["", "```bash",
              "omnijudge score instructttseval --items items_en.jsonl --outputs <system outputs> "
              "--judge <this folder> --out results/",
              "omnijudge metrics instructttseval --results results/results.jsonl --field judge_score",
              "```", ""]
    if not validation or "agreement" not in validation:
        return lines
    lines += ["## Validation", "", f"{validation.get('n_pairs')} pairs ({validation.get('protocol')}), "
              f"from {validation.get('source')}.", "", validation.get("markdown", ""), ""]
    return lines
