"""``omnijudge metrics nvv``: NVV-SuperBench P/R/F1, NTD, coverage and CA-F1 from verifier output alone.

The lead wires it into ``evaluators.cli`` with ``add_metrics_parser(msub)``, where ``msub`` is the
subparsers object of the ``metrics`` command. The same code scores the public Gemini verifier's
rows and a local judge's rows (``{"id", "present", "text_with_mark", "hallucinated_events"}``).
"""

from __future__ import annotations

import json
from pathlib import Path


def cmd_metrics_nvv(args) -> int:
    """Compute the report, print it as JSON, optionally save it (``--out``). Bad input -> exit message."""
    from evaluators.benchmarks.nvv.metrics import nvv_metrics_from_files

    try:
        report = nvv_metrics_from_files(args.items, args.predictions, lang=args.lang, delta=args.delta,
                                        system=args.system, coverage=args.coverage, multi=args.multi)
    except (OSError, ValueError, KeyError) as e:  # NVVDataError is a ValueError naming file:line / file:id
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise SystemExit(f"omnijudge metrics nvv: {msg}") from None
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def add_metrics_parser(msub) -> None:
    """Add the ``nvv`` sub-subcommand (handler in ``func``) to ``msub``, an argparse subparsers object."""
    p = msub.add_parser("nvv", help="NVV-SuperBench: NVV precision/recall/F1, NTD, coverage, CA-F1 (tag-based)")
    p.add_argument("--items", required=True,
                   help="benchmark items: nvbench_data_{en,zh}.json, or JSONL with the real or the paper's field "
                        "names (text, text_with_nvv, caption_with_nvv, nvv_list)")
    p.add_argument("--predictions", required=True, nargs="+", action="extend",
                   help="verifier rows {id, present, text_with_mark, hallucinated_events} (JSONL, JSON list, or "
                        "the public verifier's dict); several files = several synthesis runs -> mean +- std")
    p.add_argument("--lang", choices=("en", "zh"), default=None,
                   help="force the language (default: from item ids / file name); EN counts words, ZH characters")
    p.add_argument("--delta", type=int, default=None,
                   help="position tolerance in units (default 2 words for EN, 5 characters for ZH)")
    p.add_argument("--system", default=None,
                   help="tag-based system of paper Table 2 (Bark, ChatTTS, 'CosyVoice 2', Dia, ElevenLabs, "
                        "Fish-Speech, Higgs-Audio, Orpheus): coverage from its vocabulary and only its "
                        "supported types are scored")
    p.add_argument("--coverage", type=float, default=None,
                   help="override coverage (0-1); default: from --system, else 1.0 (all types requested)")
    p.add_argument("--multi", choices=("utterance", "event"), default="utterance",
                   help="items with a repeated target tag: one GT NVV per utterance (default, paper TP = "
                        "matched utterances) or one per tag")
    p.add_argument("--out", help="also write the JSON report here")
    p.set_defaults(func=cmd_metrics_nvv)
