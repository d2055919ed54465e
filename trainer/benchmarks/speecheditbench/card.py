"""Model-card sections of a SpeechEditBench judge (emotion, style or paralinguistic)."""

from __future__ import annotations

_WHAT = {
    "emotion": "the dominant emotion of the delivery, over the item's taxonomy (IEMOCAP 8 labels for EN, "
               "CSEmotions 7 for ZH): argmax of the label words' rows of the LM head at the final prompt position",
    "style": "the 0-4 score of the target delivery style (label words \"0\"..\"4\" at the final prompt position; "
             "success at >= 3) and, from a linear head on the same state, the six-style score vector",
    "paralinguistic": "breath, laugh, cough and sigh presence 0-3 from one forward pass (a linear head on the "
                      "final state; add succeeds at >= 2, remove at <= 1)",
}


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the judge outputs, how to run it on the benchmark, and its validation table."""
    criterion = config.get("criterion", "emotion")
    lines = [f"SpeechEditBench {criterion} judge: {_WHAT.get(criterion, criterion)}.", "",
             "Its training labels come from construction, not from listeners: procedural voices rendered with a "
             "known emotion, style or event, or real speech with edits of known amount or procedural events "
             "spliced in at known levels (docs/speecheditbench.md).", "",
             f"Prompts (version {config.get('prompt_version')}):", ""]
    for lang, preset in (config.get("prompts") or {}).items():
        lines.append(f"- {lang}: `{preset.get('prompt')!r}`")
    lines += ["", "```bash",
              f"omnijudge score speecheditbench --items data/ --outputs <system outputs> --judges {criterion}=<this folder> "
              "--out results/",
              "omnijudge validate speecheditbench --judge <this folder> --corpus <corpus> [--labels labels.jsonl]",
              "```", ""]
    if validation and validation.get("markdown"):
        lines += ["## Validation", "", f"{validation.get('n_clips')} clips from {validation.get('source')}.", "",
                  validation["markdown"], ""]
    return lines
