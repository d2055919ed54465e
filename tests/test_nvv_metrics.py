"""NVV-SuperBench metrics: hand-computed golden cases, paper Table 2/3 checks, real-data coverage, CLI."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from evaluators.benchmarks.nvv import (
    N_TYPES, MetricRules, NVVDataError, Prediction, count_units, get_system, load_items, load_predictions,
    load_system_vocabularies, load_taxonomy, match_positions, normalise_spelling, nvv_metrics_from_files,
    parse_marked_text, score_item, score_run)
from evaluators.benchmarks.nvv.cli import add_metrics_parser


def shared_dir() -> Path:
    env = os.environ.get("OMNIJUDGE_SHARED")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared"


REAL = {lang: shared_dir() / "data" / "nvv-superbench" / f"nvbench_data_{lang}.json" for lang in ("en", "zh")}

# --- a tiny benchmark (real-file schema), positions worked out by hand -------------------------------
# A: words before <laugh> = I, can't, believe, it -> 4; L = 8 words.
# B: <sigh> at 0 and after "This is the third time today" -> 6; L = 9.
# C: label swallow, tag <swallows> (alias) after "Okay" -> 1; L = 6.
# D: never predicted. Z: ZH, 我真的 -> 3 characters; L = 7 (the full stop counts).
ITEMS = [
    {"id": "en_1", "text": "I can't believe it you did that again.", "non_verbal_events": ["laugh"],
     "text_with_mark": "I can't believe it <laugh> you did that again.", "caption_with_nvb": "laughs"},
    {"id": "en_2", "text": "This is the third time today. I give up.", "non_verbal_events": ["sigh"],
     "text_with_mark": "<sigh> This is the third time today. <sigh> I give up.", "caption_with_nvb": "sighs"},
    {"id": "en_3", "text": "Okay, the pill is down now.", "non_verbal_events": ["swallow"],
     "text_with_mark": "Okay, <swallows> the pill is down now.", "caption_with_nvb": "swallows"},
    {"id": "en_4", "text": "Well, that settles it.", "non_verbal_events": ["ah"],
     "text_with_mark": "<ah> Well, that settles it.", "caption_with_nvb": "ah"},
]


def mark(text: str, tag: str, k: int) -> str:
    """``text`` with ``<tag>`` inserted after its k-th word (the verifier's edit)."""
    words = text.split()
    return " ".join(words[:k] + [f"<{tag}>"] + words[k:])


def row(item_id, present=True, twm="", hall=()):
    return {"id": item_id, "present": present, "text_with_mark": twm, "hallucinated_events": list(hall)}


@pytest.fixture
def items_file(tmp_path):
    p = tmp_path / "items_en.json"
    p.write_text(json.dumps(ITEMS))
    return p


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


@pytest.fixture
def items(items_file):
    return {it.id: it for it in load_items(items_file)}


def pred(r) -> Prediction:
    return Prediction(r["id"], r["present"], r["text_with_mark"], tuple(r["hallucinated_events"]), "t")


# --- positions and parsing ----------------------------------------------------------------------------
def test_positions_by_hand(items):
    assert (items["en_1"].target_positions, items["en_1"].n_units) == ([4], 8)
    assert (items["en_2"].target_positions, items["en_2"].n_units) == ([0, 6], 9)
    assert items["en_3"].target_type == "swallow" and (items["en_3"].target_positions, items["en_3"].n_units) == ([1], 6)
    assert items["en_4"].target_type == "exclamation"
    clean, ev = parse_marked_text("我真的<sigh>不知道。", "zh")
    assert (clean, [(e.type, e.position) for e in ev], count_units(clean, "zh")) == ("我真的 不知道。", [("sigh", 3)], 7)
    # punctuation-only tokens and a tag glued to punctuation do not shift EN positions
    assert count_units("common... , I get it — now", "en") == 5
    assert count_units("self-checkout can't", "en") == 2  # paper protocol: a hyphenated compound is one word


# --- golden single-utterance cases (delta = 2 words) -------------------------------------------------
@pytest.mark.parametrize("case, r, expect", [
    ("match within delta", dict(twm="I can't believe it you did <laugh> that again."), (1, 0, 0, 2.0)),
    ("off by delta+1", dict(twm="I can't believe it you did that <laugh> again."), (0, 1, 1, None)),
    ("wrong type", dict(twm="I can't believe it <sigh> you did that again."), (0, 1, 1, None)),
    ("absent", dict(present=False, twm="I can't believe it you did that again."), (0, 0, 1, None)),
    ("absent + spurious", dict(present=False, hall=["cough"]), (0, 1, 1, None)),
    ("match + spurious", dict(twm="I can't believe it <laugh> you did that again.", hall=["<cough>", "sniff"]),
     (1, 2, 0, 0.0)),
    ("present but unplaced", dict(twm="I can't believe it you did that again."), (0, 1, 1, None)),
    ("alias spelling", dict(twm="I can't believe <laughs> it you did that again."), (1, 0, 0, 1.0)),
])
def test_golden_single(items, case, r, expect):
    s = score_item(items["en_1"], pred(row("en_1", **r)), delta=2)
    assert (s.tp, s.fp, s.fn, s.distance) == expect, case


def test_golden_missing_row(items):
    s = score_item(items["en_1"], None, delta=2)
    assert (s.tp, s.fp, s.fn) == (0, 0, 1)


@pytest.mark.parametrize("positions, utterance, event", [
    ([6], (1, 0, 0), (1, 0, 1)),          # marks the 2nd sigh: utterance matched, 1st GT tag unmatched per tag
    ([0, 6], (1, 0, 0), (2, 0, 0)),       # both marked: one-to-one pairs
    ([3], (0, 1, 1), (0, 1, 2)),          # 3 words from both GT tags: no match
    ([5, 6], (1, 1, 0), (1, 1, 1)),       # two markers near one GT tag: only one may pair, the other is FP
])
def test_golden_multi_tag(items, positions, utterance, event):
    text = "This is the third time today. I give up."
    words = text.split()
    for k in sorted(positions, reverse=True):
        words.insert(k, "<sigh>")
    p = pred(row("en_2", twm=" ".join(words)))
    for multi, want in (("utterance", utterance), ("event", event)):
        s = score_item(items["en_2"], p, delta=2, multi=multi)
        assert (s.tp, s.fp, s.fn) == want, (positions, multi)


def test_golden_run_totals(items_file, tmp_path):
    rows = [row("en_1", twm=mark(ITEMS[0]["text"], "laugh", 6), hall=["cough"]),  # d=2 -> TP, + 1 spurious
            row("en_2", twm=mark(ITEMS[1]["text"], "sigh", 6)),                     # d=0 -> TP
            row("en_3", present=False, twm=ITEMS[2]["text"]),                        # FN
            row("en_99", twm="stray")]                                               # not an item
    p = write_jsonl(tmp_path / "run.jsonl", rows)
    r = nvv_metrics_from_files(items_file, [p])
    assert (r["tp"], r["fp"], r["fn"]) == (2, 1, 2)  # en_4 has no row: FN
    assert r["precision"] == pytest.approx(2 / 3) and r["recall"] == pytest.approx(0.5)
    assert r["f1"] == pytest.approx(4 / 7) and r["ntd"] == pytest.approx((2 / 8 + 0 / 9) / 2)
    assert r["coverage"] == 1.0 and r["ca_f1"] == pytest.approx(8 / 11)
    assert r["missing_ids"] == ["en_4"] and r["extra_ids"] == ["en_99"] and r["delta"] == 2
    assert r["per_type"]["laugh"]["tp"] == 1 and r["per_type"]["laugh"]["fp"] == 1
    assert r["per_type"]["swallow"]["fn"] == 1 and r["per_category"]["oral_misc"]["recall"] == 0.0
    assert r["spurious_by_type"] == {"cough": 1}
    ev = nvv_metrics_from_files(items_file, [p], MetricRules(multi="event"))
    assert (ev["tp"], ev["fp"], ev["fn"]) == (2, 1, 3) and ev["f1"] == pytest.approx(0.5)
    assert nvv_metrics_from_files(items_file, [p], MetricRules(delta=1))["tp"] == 1  # en_1 is 2 words off


def test_no_predictions_and_coverage_override(items):
    r = score_run(list(items.values()), [], coverage=0.5)
    assert (r["tp"], r["fp"], r["fn"], r["f1"], r["ntd"], r["ca_f1"]) == (0, 0, 4, 0.0, None, 0.0)
    assert r["missing_ids"] == ["en_1", "en_2", "en_3", "en_4"] and r["coverage_source"] == "given"


def test_match_positions_is_optimal():
    rng = random.Random(0)
    for _ in range(300):
        g = [rng.randrange(12) for _ in range(rng.randrange(4))]
        p = [rng.randrange(12) for _ in range(rng.randrange(4))]
        got = match_positions(g, p, 2)
        best = (0, 0)
        for perm in itertools.permutations(range(len(p)), min(len(g), len(p))):
            pairs = [(g[i], p[j]) for i, j in enumerate(perm) if abs(g[i] - p[j]) <= 2]
            best = max(best, (len(pairs), -sum(abs(a - b) for a, b in pairs)))
        if len(g) > len(p):  # permutations above only cover the first len(p) GT entries
            for sub in itertools.combinations(range(len(g)), len(p)):
                for perm in itertools.permutations(range(len(p))):
                    pairs = [(g[i], p[j]) for i, j in zip(sub, perm) if abs(g[i] - p[j]) <= 2]
                    best = max(best, (len(pairs), -sum(abs(a - b) for a, b in pairs)))
        assert (len(got), -sum(abs(a - b) for a, b in got)) == best, (g, p, got)


# --- taxonomy and the paper's tables -------------------------------------------------------------------
def test_taxonomy_shape():
    tax = load_taxonomy()
    assert len(tax) == N_TYPES == 45
    assert [len(tax.types_in(c)) for c in tax.categories] == [10, 7, 7, 5, 7, 9]  # paper Table 1
    assert tax.resolve("humming") == "humming" and tax.resolve("humming", prefer="hum") == "hum"
    assert tax.resolve("<Clears Throat>") == "throat_clearing" and tax.resolve("oh") == "exclamation"
    assert normalise_spelling("[lip-smacking]") == "lip_smacking" and tax.resolve("lip smacking") == "lipsmack"
    with pytest.raises(ValueError, match="unknown NVV tag"):
        tax.resolve("kazoo")


# (system, Table 2 count, Table 3 coverage). Higgs-Audio: Table 2 lists 3 tags but Table 3 prints 0.09.
PAPER_COVERAGE = [("ChatTTS", 1, 0.02), ("Higgs-Audio", 3, 0.09), ("Bark", 5, 0.11), ("Fish-Speech", 7, 0.16),
                  ("Orpheus TTS", 8, 0.18), ("CosyVoice 2", 8, 0.18), ("ElevenLabs", 12, 0.27), ("Dia", 13, 0.29)]


@pytest.mark.parametrize("name, count, paper_cov", PAPER_COVERAGE)
def test_system_coverage_matches_paper(name, count, paper_cov):
    vocab = get_system(name)
    assert len(vocab.tags) == count and len(vocab.supported_types) == count
    if name == "Higgs-Audio":  # the paper is inconsistent with itself here: 3/45 = 0.067, not 0.09
        assert round(vocab.coverage, 2) == 0.07 and round(paper_cov * 45) == 4
    else:
        assert round(vocab.coverage, 2) == paper_cov


def test_all_eight_systems_present():
    assert len(load_system_vocabularies()) == 8 and get_system("orpheus").name == "Orpheus TTS"


# Table 3 tag-based rows: (system, lang, P, sP, R, sR, F1) -- mean +- std over 3 runs
TABLE3 = [("Bark", "en", .614, .040, .700, .043, .654), ("Higgs-Audio", "en", .360, .053, .407, .047, .382),
          ("ChatTTS", "en", .652, .140, .680, .203, .664), ("Fish-Speech", "en", .447, .023, .418, .024, .432),
          ("Dia", "en", .574, .010, .705, .006, .632), ("CosyVoice 2", "en", .475, .024, .451, .025, .463),
          ("Orpheus TTS", "en", .687, .026, .774, .034, .728), ("ElevenLabs", "en", .664, .017, .787, .034, .720),
          ("Bark", "zh", .572, .032, .605, .016, .588), ("Orpheus TTS", "zh", .585, .020, .671, .021, .625),
          ("Higgs-Audio", "zh", .429, .013, .369, .021, .396), ("Fish-Speech", "zh", .592, .004, .605, .011, .598),
          ("ChatTTS", "zh", .644, .045, .773, .064, .703), ("CosyVoice 2", "zh", .515, .014, .480, .018, .496),
          ("ElevenLabs", "zh", .630, .025, .750, .041, .684)]


@pytest.mark.parametrize("name, lang, p, sp, r, sr, f1", TABLE3)
def test_table3_f1_is_harmonic_mean(name, lang, p, sp, r, sr, f1):
    hm = 2 * p * r / (p + r)
    # P, R, F1 are each rounded to 3 decimals -> first-order rounding error bound
    rounding = 0.0005 * (1 + 2 * r * r / (p + r) ** 2 + 2 * p * p / (p + r) ** 2)
    # the table averages per-run F1s: E[HM(P,R)] - HM(E[P],E[R]) is bounded to 2nd order by the run spread
    jensen = 2 * (r * sp + p * sr) ** 2 / (p + r) ** 3
    assert abs(hm - f1) <= rounding + jensen + 1e-9, (name, lang, hm, f1)


def test_table3_identity_is_tight_for_stable_systems():
    stable = [t for t in TABLE3 if max(t[3], t[5]) <= 0.03]
    assert len(stable) >= 6
    for name, lang, p, _, r, _, f1 in stable:
        assert abs(2 * p * r / (p + r) - f1) <= 0.0011, (name, lang)


# --- real data: every one of the 4,500 items gets a type and a position ------------------------------
@pytest.mark.skipif(not all(p.is_file() for p in REAL.values()), reason="real NVV-SuperBench data absent")
def test_real_files_full_alias_coverage():
    alias, repeated, others, per_type = Counter(), Counter(), [], Counter()
    for lang, path in REAL.items():
        its = load_items(path)
        assert len(its) == 2250 and all(it.lang == lang for it in its)
        for it in its:
            assert it.target_events and all(0 <= e.position <= it.n_units for e in it.events)
            per_type[(lang, it.target_type)] += 1
            if any(normalise_spelling(e.tag) != it.label for e in it.target_events):
                alias[(lang, it.label, it.target_events[0].tag)] += 1
            repeated[lang] += len(it.target_events) > 1
            if it.other_events:
                others.append(it.id)
    assert set(per_type.values()) == {50} and len(per_type) == 90  # 45 types x 50 items x 2 languages
    assert sum(alias.values()) == 86 and sum(v for k, v in alias.items() if k[0] == "en") == 45
    by_tag = Counter()
    for (_, label, tag), n in alias.items():
        by_tag[(label, tag)] += n
    assert by_tag == {("swallow", "swallows"): 38, ("hum", "humming"): 22, ("hiss", "hissing"): 12,
                      ("gulp", "gulps"): 8, ("wheeze", "wheezing"): 6}
    assert repeated == {"en": 39, "zh": 118} and others == ["en_278", "en_286"]


@pytest.mark.skipif(not all(p.is_file() for p in REAL.values()), reason="real NVV-SuperBench data absent")
def test_real_files_oracle_predictions(tmp_path):
    raw = json.loads(REAL["en"].read_text())
    rows = [row(x["id"], twm=x["text_with_mark"]) for x in raw]
    r = nvv_metrics_from_files(REAL["en"], [write_jsonl(tmp_path / "p.jsonl", rows)], MetricRules(system="Dia"))
    assert (r["precision"], r["recall"], r["ntd"], r["n_scored"]) == (1.0, 1.0, 0.0, 13 * 50)
    assert r["coverage"] == pytest.approx(13 / 45) and r["n_spurious_exempt"] == 0


# --- files, CLI, several runs, bad input ----------------------------------------------------------------
def run_cli(argv):
    parser = argparse.ArgumentParser(prog="omnijudge")
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("metrics")
    assert isinstance(add_metrics_parser(m.add_subparsers(dest="benchmark", required=True)), argparse.ArgumentParser)
    args = parser.parse_args(["metrics", "nvv", *map(str, argv)])
    return args.func(args)


def test_cli_tiny_fixture(items_file, tmp_path, capsys):
    p = write_jsonl(tmp_path / "run.jsonl", [row(x["id"], twm=x["text_with_mark"]) for x in ITEMS])
    out = tmp_path / "report.json"
    assert run_cli(["--items", items_file, "--predictions", p, "--lang", "en", "--out", out]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    for k in ("precision", "recall", "f1", "ntd", "coverage", "ca_f1", "tp", "fp", "fn", "per_type",
              "per_category", "missing_ids", "std", "n_runs"):
        assert k in printed, k
    assert printed["f1"] == 1.0 and printed["n_runs"] == 1 and printed["missing_ids"] == []
    run_cli(["--items", items_file, "--predictions", p, "--system", "ElevenLabs", "--delta", "0"])
    r = json.loads(capsys.readouterr().out)
    assert r["n_scored"] == 3 and r["coverage"] == pytest.approx(12 / 45)  # laugh, sigh, swallow supported


def test_cli_unknown_system_is_one_line(items_file, tmp_path):
    """An unknown ``--system`` stops with the taxonomy's message as a ValueError (the CLI's one-line
    stop), not an AttributeError traceback."""
    p = write_jsonl(tmp_path / "run.jsonl", [row(x["id"], twm=x["text_with_mark"]) for x in ITEMS])
    with pytest.raises(ValueError) as e:
        run_cli(["--items", items_file, "--predictions", p, "--system", "NoSuchTTS"])
    assert "NoSuchTTS" in str(e.value)


def test_paper_style_jsonl_items(tmp_path):
    rows = [{"text": "Fine. Fine.", "text_with_nvv": "Fine. <sigh> Fine.", "caption_with_nvv": "c", "nvv_list": ["sigh"]},
            {"id": "zh_9", "text": "好吧。", "text_with_nvv": "<sniffle> 好吧。", "caption_with_nvv": "c", "nvv_list": "sniffle"}]
    its = load_items(write_jsonl(tmp_path / "paper.jsonl", rows))
    assert [(i.id, i.lang, i.target_type, i.target_positions) for i in its] == [
        ("en_1", "en", "sigh", [1]), ("zh_9", "zh", "sniffle", [0])]


def test_several_runs_mean_std(items_file, tmp_path):
    texts = {x["id"]: x["text"] for x in ITEMS}
    runs = [
        [row("en_1", twm=mark(texts["en_1"], "laugh", 4)), row("en_2", twm=mark(texts["en_2"], "sigh", 6)),
         row("en_3", twm=mark(texts["en_3"], "swallow", 1)), row("en_4", twm=mark(texts["en_4"], "ah", 0))],
        [row("en_1", present=False), row("en_2", twm=mark(texts["en_2"], "sigh", 6)),
         row("en_3", twm=mark(texts["en_3"], "swallow", 1)), row("en_4", twm=mark(texts["en_4"], "ah", 0))],
        [row("en_1", present=False), row("en_2", present=False, hall=["cough"]),
         row("en_3", twm=mark(texts["en_3"], "swallow", 2)), row("en_4", twm=mark(texts["en_4"], "ah", 0))],
    ]
    paths = [write_jsonl(tmp_path / f"run{i}.jsonl", r) for i, r in enumerate(runs)]
    rep = nvv_metrics_from_files(items_file, paths)
    f1s = [8 / 8, 6 / 7, 4 / (4 + 1 + 2)]  # TP/FP/FN = 4/0/0, 3/0/1, 2/1/2
    assert [r["f1"] for r in rep["runs"]] == pytest.approx(f1s)
    assert rep["n_runs"] == 3 and rep["f1"] == pytest.approx(np.mean(f1s))
    assert rep["std"]["f1"] == pytest.approx(np.std(f1s, ddof=1))
    assert rep["ntd"] == pytest.approx(np.mean([0.0, 0.0, (1 / 6 + 0) / 2]))
    assert rep["per_type"]["laugh"]["recall"] == pytest.approx(1 / 3) and "laugh" in rep["per_type_std"]


def test_public_verifier_dict_format(tmp_path):
    obj = {"/abs/sys/en_1.wav": {"present": True, "text_with_mark": "a <laugh> b",
                                 "hallucinated_events": [{"tag": "<sniff>", "location_hint": "b"}]}}
    (tmp_path / "pub.json").write_text(json.dumps(obj))
    (p,) = load_predictions(tmp_path / "pub.json")
    assert (p.id, p.present, p.hallucinated) == ("en_1", True, ("<sniff>",))


def test_malformed_prediction_line_names_file_and_line(items_file, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row("en_1", twm="x")) + "\n{not json\n")
    with pytest.raises(NVVDataError, match=r"bad\.jsonl:2"):
        load_predictions(bad)
    with pytest.raises(NVVDataError, match=r"bad\.jsonl:2"):  # cli.main turns it into one line, exit 2
        run_cli(["--items", items_file, "--predictions", bad])


def test_unknown_tag_names_the_item(tmp_path, items_file):
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([ITEMS[0], dict(ITEMS[1], text_with_mark="<sigh> Hi <kazoo> there.")]))
    with pytest.raises(NVVDataError, match=r"broken\.json\[1\]: en_2: unknown NVV tag 'kazoo'"):
        load_items(broken)
    p = write_jsonl(tmp_path / "p.jsonl", [row("en_1", twm="I can't <kazoo> believe it.")])
    with pytest.raises(NVVDataError, match=r"p\.jsonl:1: en_1: unknown NVV tag 'kazoo'"):
        nvv_metrics_from_files(items_file, [p])
    no_target = write_jsonl(tmp_path / "nt.jsonl", [{"id": "en_7", "text_with_mark": "Hi <cough>.",
                                                     "non_verbal_events": ["sigh"]}])
    with pytest.raises(NVVDataError, match=r"nt\.jsonl:1: en_7: no tag of the target type 'sigh'"):
        load_items(no_target)
