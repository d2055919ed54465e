"""Model-card sections of an NVV-SuperBench verifier."""

from __future__ import annotations


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the verifier outputs, how to run it, and its validation on held-out synthetic items."""
    lines = ["GT-conditioned NVV verifier: given audio, the reference transcript and the target NVV type, "
             "it writes `{present, text_with_mark, hallucinated_events}` (the public verifier's row format). "
             f"Read at: {config['read_at']}. Present when P(target at a boundary) >= {config['threshold']}; "
             f"a non-target type is reported when its boundary probability >= {config['type_threshold']}. "
             "It needs word timestamps (an outputs manifest or `--aligner`).", "",
             "```bash", "omnijudge score nvv --items ITEMS --outputs DIR --judge <this folder> --out RESULTS", "```",
             "", f"Prompt (version {config['prompt_version']}):", "", f"> {config['prompt']}", ""]
    if not validation or "languages" not in validation:
        return lines
    lines += ["## Validation (held-out synthetic sentences, vs what was rendered)", "",
              "| language | items | delta | presence acc | P | R | F1 | NTD | spurious events found (P / R) |",
              "|---|---|---|---|---|---|---|---|---|"]
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    for lang, m in validation["languages"].items():
        sp = m.get("spurious") or {}
        spurious = (f"{sp['found']} / {sp['rendered']} ({fmt(sp.get('precision'))} / {fmt(sp.get('recall'))})"
                    if sp else "-")
        lines.append(f"| {lang} | {m['n_items']} | {m['delta']} | {m['presence_accuracy']:.3f} | {m['precision']:.3f} | "
                     f"{m['recall']:.3f} | {m['f1']:.3f} | {fmt(m['ntd'])} | {spurious} |")
    return lines + [""]
