"""Model-card sections of a CAST stress detector (word tagger)."""

from __future__ import annotations


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the detector outputs, how to run it, and its validation on held-out items."""
    head = config.get("head", {}).get("mode", "last_token")
    lines = [f"Per-word outputs {config['output_names']} from a `{head}` head on the "
             f"{config['read_at']}; a word is positive when its probability >= {config['threshold']}."
             + (" It needs word timestamps (an outputs manifest or `--aligner`)." if head == "aligned" else ""),
             "", f"Prompt (version {config['prompt_version']}):", "", f"> {config['prompt']}", "",
             "```bash", "omnijudge score cast --items ITEMS --outputs DIR --judge <this folder> --out RESULTS", "```", ""]
    if not validation or "languages" not in validation:
        return lines
    lines += ["## Validation (held-out sentences and speakers)", "",
              "| language | items | word P | word R | word F1 | Hit % | Pair-Contrast % | Pair-Correct % |",
              "|---|---|---|---|---|---|---|---|"]
    for lang, m in validation["languages"].items():
        w, c = m["word"], m.get("cast", {})

        def cell(k: str) -> str:
            return (f"{c[k]['value']:.1f} [{c[k]['low']:.1f}, {c[k]['high']:.1f}]"
                    if c.get(k) and c[k].get("value") is not None else "-")

        lines.append(f"| {lang} | {m['n_items']} | {w['precision']:.3f} | {w['recall']:.3f} | {w['f1']:.3f} | "
                     f"{cell('hit')} | {cell('contrast')} | {cell('correct')} |")
    return lines + [""]
