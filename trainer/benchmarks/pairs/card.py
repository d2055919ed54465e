"""Model-card sections of a pairwise preference judge (``docs/pairs.md``)."""

from __future__ import annotations


def _pct(m: dict | None) -> str:
    if not m or m.get("value") is None:
        return "n/a"
    return f"{100 * m['value']:.1f}% [{100 * m['low']:.1f}, {100 * m['high']:.1f}] (n={m['n']})"


def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the judge outputs, how to run it on pairs, and its validation against the raters."""
    if config.get("kind") == "in_prompt_pair":
        return _in_prompt_sections(config, validation)
    if config.get("label_words"):
        what = (f"Per-clip score: the expected value of preset `{config.get('preset', {}).get('name', '?')}`'s labels "
                f"(softmax over label-token logits), read at the {config.get('read_at', 'final prompt token')}.")
    else:
        what = f"Per-clip score: a scalar reward, {config.get('read_at', 'a linear head on the last prompt token')}."
    lines = [what, "",
             "Trained with the Bradley-Terry loss on labelled pairs: P(A more natural than B) = "
             "sigmoid(score_A - score_B); the verdict is the clip with the higher score, so it does not "
             "depend on the order the two clips are given in.", "",
             f"Prompt (version {config.get('prompt_version', '?')}):", "", f"> {config.get('prompt', '')}", "",
             "```bash", "omnijudge score pairs --judge <this folder> --pairs pairs.jsonl --out verdicts.jsonl",
             "```", ""]
    if not validation or "accuracy" not in validation:
        return lines
    lines += [f"## Validation (split `{validation.get('split', 'test')}`)", "",
              "Accuracy against the raters' majority label (ties excluded), 95% Wilson intervals.", "",
              "| group | accuracy |", "|---|---|", f"| all | {_pct(validation['accuracy'])} |"]
    for key in ("by_language_setting", "by_subset"):
        lines += [f"| {g} | {_pct(m)} |" for g, m in validation.get(key, {}).items()]
    gem = validation.get("gemini", {})
    lines += ["", f"Agreement with gemini-2.5-flash's verdict: {_pct(gem.get('judge_vs_gemini'))}; "
                  f"gemini-2.5-flash vs the raters: {_pct(gem.get('gemini_vs_raters'))}.",
              f"Swap consistency: {_pct(validation.get('swap_consistency'))}.", ""]
    return lines


def _in_prompt_sections(config: dict, validation: dict | None) -> list[str]:
    """The card of an in-prompt pairwise judge (both clips in one prompt, both orders)."""
    lines = ["Pair verdict: both clips in one prompt (text, clip 1, text, clip 2, question); the margin "
             f"logit({config.get('label_words', ['1', '2'])[0]!r}) - logit({config.get('label_words', ['1', '2'])[1]!r}) "
             "at the last prompt token is read in both orders and averaged: P(A better) = "
             "sigmoid((m(A, B) - m(B, A)) / 2), so the order the clips are given in cannot decide it.", "",
             "Trained with the Bradley-Terry loss on that averaged margin.", "",
             f"Prompt (version {config.get('prompt_version', '?')}):", "",
             f"> {config.get('prompt_before_audio', '')} [clip 1] {config.get('prompt_between_audios', '')} "
             f"[clip 2] {config.get('prompt', '')}", "",
             "```bash", "omnijudge score pairs --judge <this folder> --pairs pairs.jsonl --out verdicts.jsonl",
             "```", ""]
    if not validation or "accuracy" not in validation:
        return lines
    return lines + [f"## Validation (split `{validation.get('split', 'test')}`)", "",
                    "Accuracy against the raters' majority label (ties excluded), 95% Wilson intervals.", "",
                    "| group | accuracy |", "|---|---|", f"| all | {_pct(validation['accuracy'])} |",
                    *[f"| {g} | {_pct(m)} |" for key in ("by_language_setting", "by_subset")
                      for g, m in validation.get(key, {}).items()], "",
                    f"Swap consistency (both orders on each pair): {_pct(validation.get('swap_consistency'))}.", ""]
