"""Fast tests for the synthetic InstructTTSEval instruction writer
(trainer/benchmarks/instructttseval/instructions.py): matched instructions are followed, near misses
conflict in exactly one dimension, the APS format, DSD dropout frequencies (paper Table 8),
disjoint train/test wording, Chinese texts and determinism."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from trainer.benchmarks.instructttseval.attributes import (
    DIMENSION_ATTRIBUTES,
    DIMENSIONS,
    VALUES,
    VoiceAttributes,
    dimension_outcomes,
    follows,
)
from trainer.benchmarks.instructttseval.instructions import (
    LANGS,
    POOLS,
    SUPPORTED,
    TASKS,
    dsd_keep_probability,
    near_miss,
    phrases,
    roles,
    write_instruction,
)
from trainer.benchmarks.instructttseval.phrases import ZH_DIMENSION_NAMES

N_ATTRS = 300
APS_LINE = {"en": re.compile(r"^([a-z]+): (\S.*)\.$"), "zh": re.compile(r"^(\S+?)：(\S.*)。$")}
APS_KEYS = {"en": list(DIMENSIONS), "zh": [ZH_DIMENSION_NAMES[d] for d in DIMENSIONS]}
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def attrs_list():
    rng = np.random.default_rng(1234)
    return [VoiceAttributes.sample(rng) for _ in range(N_ATTRS)]


def _aps_lines(text: str, lang: str) -> list[str]:
    lines = text.split("\n\n")
    assert len(lines) == 12, text
    keys = []
    for line in lines:
        m = APS_LINE[lang].match(line)
        assert m, f"bad APS line {line!r}"
        keys.append(m.group(1))
    assert keys == APS_KEYS[lang]
    return lines


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("task", TASKS)
def test_matched_followed_and_near_miss_one_conflict(attrs_list, task, lang):
    rng = np.random.default_rng(7)
    conflicts = {}
    for attrs in attrs_list:
        pool = POOLS[int(rng.integers(2))]
        ok = write_instruction(task, attrs, lang, rng, pool=pool)
        assert ok.task == task and ok.lang == lang
        assert "accent" not in ok.described
        assert follows(dimension_outcomes(attrs, ok.described)), (ok.text, ok.described)
        assert len(ok.described) >= (12 - 1 if task == "APS" else 2)
        bad = near_miss(task, attrs, lang, rng, pool=pool)
        assert "accent" not in bad.described
        outcomes = dimension_outcomes(attrs, bad.described)
        wrong = [d for d, o in outcomes.items() if o == "conflicts"]
        assert len(wrong) == 1, (bad.text, bad.described)
        # exactly one attribute of that dimension differs (the level or the change, not both)
        d = wrong[0]
        assert sum(a != b for a, b in zip(bad.described[d], attrs.dimension_value(d))) == 1
        assert all(v in VALUES[a] for a, v in zip(DIMENSION_ATTRIBUTES[d], bad.described[d]))
        conflicts[d] = conflicts.get(d, 0) + 1
        if task == "APS":
            _aps_lines(ok.text, lang)
            _aps_lines(bad.text, lang)
    # gender/age are preferred (~0.25 of near misses), and every supported dimension occurs
    assert 0.15 < (conflicts.get("gender", 0) + conflicts.get("age", 0)) / N_ATTRS < 0.35
    assert len(conflicts) >= 9


def test_near_miss_degree_conflicts_occur(attrs_list):
    """A shouting (loud) instruction against a normal-volume clip happens at least sometimes."""
    rng = np.random.default_rng(3)
    hits = 0
    for attrs, task in itertools.product(attrs_list, TASKS):
        bad = near_miss(task, attrs, "en", rng)
        if attrs.volume == "normal" and bad.described.get("volume", ("",))[0] == "loud":
            hits += 1
    assert hits > 0


def test_rp_role_conflicts_occur(attrs_list):
    """Some RP near misses put the conflict in the role itself (the role text, no explicit phrase)."""
    rng = np.random.default_rng(5)
    in_role = 0
    for attrs in attrs_list:
        bad = near_miss("RP", attrs, "en", rng)
        (d,) = [k for k, o in dimension_outcomes(attrs, bad.described).items() if o == "conflicts"]
        for role in roles("train"):
            if bad.text.split(". ")[0].endswith(role["en"]) and d in role["implies"]:
                in_role += 1
    assert in_role > 0


def test_dsd_keep_frequencies(attrs_list):
    rng = np.random.default_rng(11)
    n = 3000
    counts = dict.fromkeys(SUPPORTED, 0)
    for i in range(n):
        instr = write_instruction("DSD", attrs_list[i % N_ATTRS], "en", rng)
        for d in instr.described:
            counts[d] += 1
    assert dsd_keep_probability("emotion") == pytest.approx(0.95)
    assert dsd_keep_probability("gender") == pytest.approx(0.75)
    for d in SUPPORTED:
        assert abs(counts[d] / n - dsd_keep_probability(d)) < 0.03, (d, counts[d] / n)


def test_train_and_test_pools_share_no_phrase(attrs_list):
    rng = np.random.default_rng(13)
    lines = {p: {lang: set() for lang in LANGS} for p in POOLS}
    for attrs, lang, pool in itertools.product(attrs_list, LANGS, POOLS):
        for instr in (write_instruction("APS", attrs, lang, rng, pool), near_miss("APS", attrs, lang, rng, pool)):
            lines[pool][lang].update(_aps_lines(instr.text, lang))
    for lang in LANGS:
        assert lines["train"][lang] and lines["test"][lang]
        assert not lines["train"][lang] & lines["test"][lang]
    # the banks themselves: >= 4 variants per value combination, the pools disjoint
    for dim, lang in itertools.product(SUPPORTED, LANGS):
        for values in itertools.product(*(VALUES[a] for a in DIMENSION_ATTRIBUTES[dim])):
            train, test = (phrases(dim, values, lang, p) for p in POOLS)
            assert len(set(train)) == len(train) and test and len(train) + len(test) >= 4
            assert not set(train) & set(test)
    assert not {r["en"] for r in roles("train")} & {r["en"] for r in roles("test")}


def test_zh_texts_are_chinese(attrs_list):
    rng = np.random.default_rng(17)
    english = re.compile(r"\b(" + "|".join(DIMENSIONS) + r")\b", re.IGNORECASE)
    for attrs, task in itertools.product(attrs_list[:100], TASKS):
        for instr in (write_instruction(task, attrs, "zh", rng, "test"), near_miss(task, attrs, "zh", rng)):
            assert CJK.search(instr.text)
            assert not english.search(instr.text), instr.text
            assert not re.search(r"[A-Za-z]", instr.text), instr.text


def test_pitch_phrase_is_gender_relative():
    assert "low male pitch" in phrases("pitch", ("low", "steady"), "en", gender="male", inline=True)[0]
    assert phrases("pitch", ("low", "steady"), "en")[0].startswith("Low pitch")
    assert "女性" in phrases("pitch", ("high", "rising"), "zh", gender="female")[0]


def test_deterministic_by_seed(attrs_list):
    def run(seed):
        rng = np.random.default_rng(seed)
        return [(i.text, i.described) for attrs in attrs_list[:30] for task in TASKS for lang in LANGS
                for i in (write_instruction(task, attrs, lang, rng), near_miss(task, attrs, lang, rng, "test"))]

    assert run(0) == run(0)
    assert run(0) != run(1)


def test_bad_arguments():
    attrs = VoiceAttributes.sample(np.random.default_rng(0))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        write_instruction("XYZ", attrs, "en", rng)
    with pytest.raises(ValueError):
        write_instruction("APS", attrs, "fr", rng)
    with pytest.raises(ValueError):
        near_miss("APS", attrs, "en", rng, pool="val")


def test_tasks_per_clip_trades_pairs_for_clips_and_test_clips_keep_every_task(tmp_path):
    import json

    from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig, build_instruct_corpus

    cfg = InstructCorpusConfig(seed=1, languages=("en",), speakers=(2, 0, 1), clips_per_speaker=3, tasks_per_clip=1)
    pairs = [json.loads(x) for x in (build_instruct_corpus(cfg, tmp_path) / "pairs.jsonl").read_text().splitlines()]
    train = [p for p in pairs if p["split"] == "train"]
    assert len(train) == 2 * 3 * 2  # clips x (matched, mismatched) for one task each
    assert all(len({p["task"] for p in train if p["clip_id"] == c}) == 1 for c in {p["clip_id"] for p in train})
    test = [p for p in pairs if p["split"] == "test"]
    assert len(test) == 3 * 3 * 6  # every task, two wordings x three kinds
    with pytest.raises(ValueError, match="tasks_per_clip"):
        InstructCorpusConfig(tasks_per_clip=0)


def test_a_one_clip_test_split_is_refused_in_one_line_naming_the_keys(tmp_path, capsys):
    """A test clip's other-item pair borrows another test clip's instruction: one test clip per
    language (1 test speaker x 1 clip) is refused up front, not a numpy ``high <= 0`` mid-synthesis."""
    from evaluators.cli import main
    from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig

    with pytest.raises(ValueError, match="clips_per_speaker"):
        InstructCorpusConfig(languages=("en",), speakers=(1, 0, 1), clips_per_speaker=1)
    InstructCorpusConfig(languages=("en",), speakers=(1, 0, 2), clips_per_speaker=1)  # two test clips: fine
    rc = main(["synth", "instructttseval", "--out", str(tmp_path / "c"), "--languages", "en",
               "--speakers", "1", "0", "1", "--clips-per-speaker", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and "clips_per_speaker" in err and "high <= 0" not in err
