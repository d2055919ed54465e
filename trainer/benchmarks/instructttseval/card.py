"""Model-card sections of an InstructTTSEval instruction-following judge."""

from __future__ import annotations


#: What each verdict source reads (``evaluators.benchmarks.instructttseval.judge.VERDICT_SOURCES``).
VERDICT_READS = {"label_tokens": "the verbalizer's P(true)", "dimensions": "P(no dimension conflicts)",
                 "clear_conflict": "1 - the largest per-dimension P(conflicts): false when one dimension clearly "
                                   "conflicts, as the public judge rule says"}
THRESHOLD_FROM = {True: ", a threshold chosen on held-out validation pairs (max balanced agreement)"}


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the judge outputs, how to run it on the benchmark, and its agreement table."""
    source = config.get("verdict_source", "label_tokens")
    lines = ["Instruction-following judge for InstructTTSEval. Two reads of one forward pass: P(true) = softmax "
             f"over the label tokens `true` / `false` at the {config.get('read_at', 'final prompt token')}, and a "
             "dimension head that says, for each of the 12 dimensions, whether the voice matches, conflicts with, "
             "or is not asked about what the instruction states (unsupported: "
             f"{', '.join(config.get('unsupported', [])) or 'none'}). The verdict comes from `{source}` "
             f"({VERDICT_READS.get(source, source)}) and is true when it is >= {config.get('threshold', 0.5)}"
             f"{THRESHOLD_FROM.get(bool((config.get('training') or {}).get('calibration', {}).get('sweep')), '')}.",
             ""]
    head = ((config.get("training") or {}).get("labels") or {}).get("attribute_head") or {}
    if head.get("trained") is False:
        lines += ["Trained from true/false verdicts alone (no voice attributes, or dimension_weight 0): the "
                  "dimension head was not trained, so its per-dimension fields are not meaningful; read the verdict.",
                  ""]
    lines += [f"Prompts (version {config.get('prompt_version')}):", ""]
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
