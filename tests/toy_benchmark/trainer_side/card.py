"""Model-card sections of a toy loudness judge."""

from __future__ import annotations


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the judge outputs, how to run it, and its held-out accuracy (when validated)."""
    lines = ["Score: P(loud), the probability mass on the label `Loud` against `Quiet` "
             f"(preset `{config.get('preset', {}).get('name', '?')}`); a clip is heard as loud at >= 0.5.", "",
             "```bash", "omnijudge score toy --judge <this folder> --items items.jsonl --outputs <folder> --out results",
             "```", ""]
    systems = (validation or {}).get("systems")
    if not systems:
        return lines
    lines += [f"## Validation (split `{validation.get('split', 'test')}`)", "", "| system | accuracy | clips |",
              "|---|---|---|"]
    for name, m in systems.items():
        acc = "n/a" if m["accuracy"] is None else f"{100 * m['accuracy']:.1f}%"
        lines.append(f"| {name} | {acc} | {m['n_scored']} |")
    return lines + [""]
