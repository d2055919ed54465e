"""Training-side ``omnijudge`` subcommands, registered through the ``omnijudge.commands`` entry points."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _parse_overrides(pairs: list[str]) -> dict:
    """``key.sub=value`` strings -> dict; values parsed as YAML scalars (numbers, true, null)."""
    import yaml

    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise SystemExit(f"--set expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key] = yaml.safe_load(value)
    return out


def add_synth_command(sub) -> None:
    p = sub.add_parser("synth", help="build a synthetic corpus with simulated listeners")
    s = p.add_subparsers(dest="corpus", required=True)
    att = s.add_parser("att", help="Audio Turing Test corpus: 5 TTS families x 4 voices x 5 dimensions + traps")
    att.add_argument("--out", required=True, help="output folder (clips.jsonl, judgements.jsonl, audio/)")
    att.add_argument("--seed", type=int, default=0)
    att.add_argument("--clips-per-voice-dimension", type=int, default=10)
    att.add_argument("--system-outputs", help="also render a folder of system outputs here (for scoring demos)")

    def run(args) -> int:
        from trainer.benchmarks.att.corpus import (
            AttCorpusConfig,
            build_att_corpus,
            render_system_outputs,
        )

        corpus = build_att_corpus(AttCorpusConfig(seed=args.seed, clips_per_voice_dimension=args.clips_per_voice_dimension),
                                  Path(args.out))
        print(f"wrote {corpus}")
        if args.system_outputs:
            print(f"system outputs: {render_system_outputs(Path(args.system_outputs), seed=args.seed)}")
        return 0

    att.set_defaults(func=run)

    stress = s.add_parser("stress", help="word-stress corpus: contrastive pairs, controls, simulated listener labels")
    stress.add_argument("--out", required=True, help="output folder (items.jsonl, listeners.jsonl, audio/)")
    stress.add_argument("--seed", type=int, default=0)

    def run_stress(args) -> int:
        from trainer.benchmarks.cast.corpus import StressCorpusConfig, build_stress_corpus

        print(f"wrote {build_stress_corpus(StressCorpusConfig(seed=args.seed), Path(args.out))}")
        return 0

    stress.set_defaults(func=run_stress)

    nvv = s.add_parser("nvv", help="NVV corpus: all 45 event types inserted at known word/character boundaries")
    nvv.add_argument("--out", required=True, help="output folder (items.jsonl, audio/)")
    nvv.add_argument("--seed", type=int, default=0)
    nvv.add_argument("--items-per-type", type=int, default=16, help="items per NVV type and language")

    def run_nvv(args) -> int:
        from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, build_nvv_corpus

        corpus = build_nvv_corpus(NvvCorpusConfig(seed=args.seed, items_per_type=args.items_per_type), Path(args.out))
        print(f"wrote {corpus}")
        return 0

    nvv.set_defaults(func=run_nvv)


def add_train_command(sub) -> None:
    p = sub.add_parser("train", help="train a judge from a YAML config (resumes an existing run folder)",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=False, help="YAML run config (configs/...)")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config keys, e.g. optim.lr=2e-4")
    p.add_argument("--no-resume", action="store_true", help="start over even if out_dir holds a checkpoint")
    p.add_argument("--help-config", action="store_true", help="print every config key with its default and meaning")

    def run(args) -> int:
        from trainer.config import describe_config, load_config

        if args.help_config:
            print(describe_config())
            return 0
        if not args.config:
            raise SystemExit("--config is required")
        from trainer.train import train

        cfg = load_config(args.config, _parse_overrides(args.set))
        print(f"run folder: {train(cfg, resume=not args.no_resume)}")
        return 0

    p.set_defaults(func=run)


def _print_report(report: dict, out: str | None) -> int:
    """Print a validation report as JSON and, with ``out``, write it there too."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        Path(out).write_text(text)
    return 0


def add_validate_command(sub) -> None:
    p = sub.add_parser("validate", help="validate a judge against listener labels")
    s = p.add_subparsers(dest="benchmark", required=True)
    att = s.add_parser("att", help="voice-level SRCC/PLCC per dimension on held-out voices + trap F1")
    att.add_argument("--judge", required=True, help="judge folder")
    att.add_argument("--corpus", required=True, help="ATT-format corpus folder (clips.jsonl + judgements.jsonl)")
    att.add_argument("--held-out-voice", type=int, default=3)
    att.add_argument("--batch-size", type=int, default=16)
    att.add_argument("--out", help="write the report JSON here (and per-clip predictions beside it)")

    def run(args) -> int:
        from trainer.benchmarks.att.validation import validate_folder

        report = validate_folder(args.judge, args.corpus, args.held_out_voice, args.batch_size, args.out)
        print(json.dumps(report, indent=2))
        return 0

    att.set_defaults(func=run)

    st = s.add_parser("stress", help="stress detector: word P/R/F1 + CAST pair metrics on held-out items; "
                                     "with --labels, kappa among listeners and detector vs majority")
    st.add_argument("--judge", required=True, help="stress detector folder")
    st.add_argument("--corpus", required=True, help="stress corpus folder (items.jsonl)")
    st.add_argument("--labels", help="listener labels JSONL {id, listener, stressed: [word indices]}")
    st.add_argument("--split", default="test")
    st.add_argument("--out", help="write the report JSON here")

    def run_stress(args) -> int:
        from evaluators.jsonl import read_jsonl
        from evaluators.judges.word_tagger import WordTaggerJudge
        from trainer.benchmarks.cast.validation import validate_stress_judge
        from trainer.benchmarks.cast.task import load_stress_rows

        listeners = read_jsonl(args.labels, required=("id", "listener", "stressed")) if args.labels else None
        report = validate_stress_judge(WordTaggerJudge.from_pretrained(args.judge), load_stress_rows(args.corpus),
                                       split=args.split, listener_rows=listeners)
        return _print_report(report, args.out)

    st.set_defaults(func=run_stress)

    nv = s.add_parser("nvv", help="NVV verifier: presence accuracy, P/R/F1, NTD vs what was rendered, per "
                                  "language / category / case, and the benchmark metrics vs an oracle")
    nv.add_argument("--judge", required=True, help="NVV verifier folder")
    nv.add_argument("--corpus", required=True, help="synthetic NVV corpus folder (items.jsonl)")
    nv.add_argument("--split", default="test")
    nv.add_argument("--out", help="write the report JSON here")

    def run_nvv(args) -> int:
        from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
        from trainer.benchmarks.nvv.validation import validate_nvv_verifier
        from trainer.benchmarks.nvv.task import load_nvv_rows

        report = validate_nvv_verifier(NvvVerifierJudge.from_pretrained(args.judge), load_nvv_rows(args.corpus),
                                       split=args.split)
        return _print_report(report, args.out)

    nv.set_defaults(func=run_nvv)


def add_release_command(sub) -> None:
    p = sub.add_parser("release", help="package a trained judge (adapter + judge_config + model card); --push to the Hub")
    p.add_argument("--checkpoint", required=True, help="run folder (uses its final/) or judge folder")
    p.add_argument("--out", required=True, help="release folder to write")
    p.add_argument("--validation", help="validation report JSON (default: the run's validation.json)")
    p.add_argument("--push", action="store_true", help="upload with huggingface_hub")
    p.add_argument("--repo-id", help="Hub repo id for --push")
    p.add_argument("--public", action="store_true", help="create the Hub repo public (default private)")

    def run(args) -> int:
        from trainer.release import release

        validation = json.loads(Path(args.validation).read_text()) if args.validation else None
        out = release(args.checkpoint, args.out, validation=validation, push=args.push, repo_id=args.repo_id,
                      private=not args.public)
        print(f"release folder: {out}")
        return 0

    p.set_defaults(func=run)


def add_demo_command(sub) -> None:
    p = sub.add_parser("demo", help="the whole Auto-ATT life cycle on the embedded tiny default (CPU)")
    p.add_argument("--out", default="demo_out", help="output folder (report.json, summary.md, release/, ...)")
    p.add_argument("--config", default=None, help="run config (default: configs/auto_att/tiny.yaml, embedded)")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config keys")

    def run(args) -> int:
        from trainer.demo import run_demo

        report = run_demo(Path(args.out), config_path=args.config, overrides=_parse_overrides(args.set))
        print((Path(args.out) / "summary.md").read_text())
        return 0 if report else 1

    p.set_defaults(func=run)
