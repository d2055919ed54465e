"""TS / PS / JS of the synthetic edited SpeechEditBench corpus with and without the public
evaluator's emotion aliases and the traditional -> simplified conversion of Chinese transcripts.

Scores the corpus's own manifest and the same verdicts worded as a Gemini judge and a Whisper ASR
may word them (alias emotion spellings, traditional ZH text), "before" under the previous rules
(no alias table, no conversion) and "after" under the code as it is
(docs/speecheditbench.md#reproducing-the-before--after-numbers). Needs no pretrained model.

    python scripts/speecheditbench_public_rules_numbers.py [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from pathlib import Path

import opencc

import evaluators.benchmarks.speecheditbench.criteria as C
import evaluators.benchmarks.speecheditbench.prosody as P
import evaluators.benchmarks.speecheditbench.text as T
from evaluators.benchmarks.speecheditbench.scorer import EditScoring, score_speecheditbench
from trainer.benchmarks.speecheditbench.corpus import SYSTEM, build_edited_corpus

TASKS = ["content", "emotion", "style", "paralinguistic", "prosody", "compositional"]
RESPELL = {"playfulness": "Playful", "fearful": "fear", "surprise": "surprised", "frustrated": "frustration"}


@contextlib.contextmanager
def previous_rules():
    """The rules as they were: no alias table, ``_``-only label normalisation, no t2s conversion."""
    saved = (C.EMOTION_ALIASES, C.normalize_label, T.to_simplified, P.to_simplified)
    C.EMOTION_ALIASES = {}
    C.normalize_label = lambda label: (label or "").strip().lower().replace("_", "-")
    T.to_simplified = P.to_simplified = lambda text: text or ""
    try:
        yield
    finally:
        C.EMOTION_ALIASES, C.normalize_label, T.to_simplified, P.to_simplified = saved


def as_public_judges_word_it(manifest: Path, out: Path) -> Path:
    """The manifest with alias-spelled emotion verdicts and traditional ZH transcripts."""
    s2t = opencc.OpenCC("s2t")
    rows = []
    for r in map(json.loads, manifest.read_text(encoding="utf-8").splitlines()):
        emo = r.get("emotion") or {}
        if emo.get("predicted_emotion") in RESPELL:
            r["emotion"] = {**emo, "predicted_emotion": RESPELL[emo["predicted_emotion"]]}
        for key in ("asr_text", "source_asr_text"):
            if isinstance(r.get(key), str) and not r[key].isascii():
                r[key] = s2t.convert(r[key])
        for key in ("word_timestamps", "source_word_timestamps"):
            if r.get(key) and not r[key][0]["word"].isascii():
                r[key] = [{**w, "word": s2t.convert(w["word"])} for w in r[key]]
        rows.append(r)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def rates(result: dict) -> dict:
    rep = result["report"]
    out = {t: {k: (s[k] or {}).get("pct") for k in ("target_success", "preservation_success", "joint_success")}
           for t, s in rep["tasks"].items()}
    comp = rep.get("compositional")
    if comp:
        out["compositional"] = {"target_success": (comp["component_success"] or {}).get("pct"),
                                "preservation_success": (comp["preservation_success"] or {}).get("pct"),
                                "joint_success": (comp["joint_success"] or {}).get("pct")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="working folder (default: a temporary one)")
    args = ap.parse_args()
    root = Path(args.out or tempfile.mkdtemp(prefix="seb_rules_"))
    build_edited_corpus(root / "corpus", seed=0)
    outputs = root / "corpus" / "outputs" / SYSTEM
    manifests = {"corpus manifest": outputs / "manifest.jsonl",
                 "public wording": as_public_judges_word_it(outputs / "manifest.jsonl", root / "public_wording.jsonl")}
    table = {}
    for name, manifest in manifests.items():
        for rules in ("before", "after"):
            with previous_rules() if rules == "before" else contextlib.nullcontext():
                result = score_speecheditbench(root / "corpus" / "data", outputs, root / f"{name}-{rules}".replace(" ", "_"),
                                               scoring=EditScoring(manifest=manifest, tasks=TASKS, n_resamples=100))
            table[(name, rules)] = rates(result)
    print("| manifest | task | TS before | TS after | PS before | PS after | JS before | JS after |")
    print("|---|---|---|---|---|---|---|---|")
    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    for name in manifests:
        before, after = table[(name, "before")], table[(name, "after")]
        for task in after:
            b, a = before[task], after[task]
            print(f"| {name} | {task} | {f(b['target_success'])} | {f(a['target_success'])} | "
                  f"{f(b['preservation_success'])} | {f(a['preservation_success'])} | "
                  f"{f(b['joint_success'])} | {f(a['joint_success'])} |")
    print("\ncompositional: TS column is CS (pooled component success)")


if __name__ == "__main__":
    main()
