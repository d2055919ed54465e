"""Synthetic InstructTTSEval corpus: procedural voices with known attribute values and APS / DSD /
RP instructions written from those values, matched and mismatched; deterministic by seed.

Each clip is one speaker reading one sentence with attribute values drawn by
``VoiceAttributes.sample`` and realised by ``voice.render_instructed``. Pairs per clip and task
(APS, DSD, RP), with labels that follow from the values (an instruction is followed iff no
dimension it states conflicts with the clip, so another clip's instruction that happens to fit is
labelled true, as a listener would):

* train / val clips: one *matched* pair (an instruction written from the clip's own values) and one
  *mismatched* pair: with probability ``near_miss_fraction`` a near miss (the same kind of
  instruction with exactly one conflicting dimension), otherwise another clip's instruction;
* test clips, in each of two wordings (``phrasing``): a matched pair, a near miss and another
  clip's instruction (``other_item``: how the paper's consistency protocol builds its negatives;
  paper: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction Following in
  Text-to-Speech Systems", section 4.1 and Table 4). ``seen``: written from the training phrase
  bank, every text new (none equals a training instruction); ``held_out``: written from the
  held-out phrase bank (wordings never seen in training: what a pretrained backbone's language
  knowledge is for).

Splits (by speaker AND sentence): speakers and sentences are permuted per language and cut into
train / val / test; test clips have unseen speakers reading unseen sentences.

Output folder:
    audio/<clip_id>.wav   16-bit PCM mono, 16 kHz
    clips.jsonl           {clip_id, path, lang, speaker, sentence_id, text, split, attributes, realised}
    pairs.jsonl           {id, clip_id, path, lang, task, instruction, label, kind, phrasing, described,
                           outcomes, speaker, sentence_id, split}
    corpus_config.json    the InstructCorpusConfig used
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.benchmarks.instructttseval.items import TASKS
from trainer.benchmarks.instructttseval.attributes import VoiceAttributes
from trainer.benchmarks.instructttseval.corpus_pairs import PHRASINGS, SPLITS, corpus_pairs, write_corpus  # noqa: F401 (PHRASINGS: re-exported)
from trainer.benchmarks.instructttseval.voice import Speaker, render_instructed
from trainer.synth.corpus_config import StrictFromDict, require
from evaluators.progress import progress_bar
from trainer.synth.corpus_io import split_by_fraction, write_jsonl, write_wav
from trainer.synth.everyday_sentences import SENTENCES

SAMPLE_RATE = 16000


@dataclass
class InstructCorpusConfig(StrictFromDict):
    """Size and make-up of the synthetic corpus (per language unless said otherwise)."""

    seed: int = 0  # seeds every draw: speakers, sentences, attributes, instructions, pairs
    languages: tuple[str, ...] = ("en", "zh")  # en and/or zh
    speakers: tuple[int, int, int] = (12, 0, 4)  # train / val / test speakers per language (val may be 0)
    sentence_fraction: tuple[float, float] = (0.1, 0.2)  # val / test share of each language's sentences
    clips_per_speaker: int = 10  # clips per speaker; each gives a matched and a mismatched pair per task
    near_miss_fraction: float = 0.6  # mismatched pairs that are near misses (else another clip's instruction)
    tasks_per_clip: int = 3  # train / val clips: pairs for this many of APS/DSD/RP (drawn per clip); test: all 3
    source: str = "synthetic"  # synthetic (procedural voices) | real (installed TTS engines, gender/pitch/speed/volume set and measured, labels by construction; real_corpus.py)
    render_workers: int = 2  # (real) processes rendering and measuring clips (1: in this process)

    def __post_init__(self):
        self.languages = tuple(self.languages)
        self.speakers = tuple(int(n) for n in self.speakers)
        self.sentence_fraction = tuple(float(f) for f in self.sentence_fraction)
        require(bool(self.languages) and not set(self.languages) - set(SENTENCES),
                f"languages must be a non-empty subset of {sorted(SENTENCES)}")
        require(len(self.speakers) == 3 and min(self.speakers) >= 0 and self.speakers[0] >= 1 and self.speakers[2] >= 1,
                "speakers: three counts (train >= 1, val >= 0, test >= 1)")
        require(len(self.sentence_fraction) == 2 and min(self.sentence_fraction) > 0 and sum(self.sentence_fraction) < 0.7,
                "sentence_fraction: two shares > 0 (val, test) summing below 0.7")
        require(self.clips_per_speaker >= 1, "clips_per_speaker must be >= 1")
        # a test clip's other-item pair borrows another test clip's instruction (same language)
        require(self.source != "synthetic" or self.speakers[2] * self.clips_per_speaker >= 2,
                "speakers (test) x clips_per_speaker must be >= 2: a test clip's other-item pair borrows "
                "another test clip's instruction")
        require(0.0 <= self.near_miss_fraction <= 1.0, "near_miss_fraction must be in [0, 1]")
        require(1 <= self.tasks_per_clip <= len(TASKS), f"tasks_per_clip must be in 1..{len(TASKS)}")
        require(self.source in ("synthetic", "real"), f"source must be 'synthetic' or 'real', got {self.source!r}")
        require(self.source != "real" or self.languages == ("en",),
                "source real: the engines read English only; set languages: [en]")
        require(self.render_workers >= 1, "render_workers must be >= 1")


def build_instruct_corpus(cfg: InstructCorpusConfig, out: str | Path) -> Path:
    """Render the clips and write the files listed in the module docstring; returns ``out``.
    ``source: real`` builds the real-audio corpus instead (``real_corpus.py``)."""
    if cfg.source == "real":
        from trainer.benchmarks.instructttseval.real_corpus import build_real_instruct_corpus

        return build_real_instruct_corpus(cfg, out)
    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    clips, attrs_of = [], {}
    bar = progress_bar(len(cfg.languages) * sum(cfg.speakers) * cfg.clips_per_speaker, "synth instructttseval")
    for lang in cfg.languages:
        sentences = split_by_fraction(list(range(len(SENTENCES[lang]))), cfg.sentence_fraction, rng)
        for split, n_speakers in zip(SPLITS, cfg.speakers):
            for s in range(n_speakers):
                speaker = Speaker.random(f"{lang}-{split}-spk{s}", rng)
                for c in range(cfg.clips_per_speaker):
                    sid = sentences[split][int(rng.integers(len(sentences[split])))]
                    attrs = VoiceAttributes.sample(rng)
                    clip_id = f"{speaker.id}-{c:03d}"
                    wave, realised = render_instructed(SENTENCES[lang][sid], lang, attrs, speaker, rng, sr=SAMPLE_RATE)
                    write_wav(out / "audio" / f"{clip_id}.wav", wave, SAMPLE_RATE)
                    bar.update(1)
                    clip = {"clip_id": clip_id, "path": f"audio/{clip_id}.wav", "lang": lang, "speaker": speaker.id,
                            "sentence_id": f"{lang}-{sid}", "text": SENTENCES[lang][sid], "split": split,
                            "attributes": attrs.to_dict(),
                            "realised": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in realised.items()
                                         if isinstance(v, (int, float, str))}}
                    clips.append(clip)
                    attrs_of[clip_id] = attrs
    bar.close()
    write_corpus(out, cfg, clips, corpus_pairs(clips, attrs_of, cfg, rng))
    return out


#: The one name the benchmark run's system has in ``synth``, ``score`` and ``metrics``.
BENCHMARK_SYSTEM = "ite-synth"


def write_benchmark_items(corpus: str | Path, out: str | Path, split: str = "test", seed: int = 0) -> dict[str, Path]:
    """The corpus's ``split`` clips as a benchmark run: per language ``items_<lang>.jsonl`` in the
    benchmark's item format (each task's instruction is the clip's own or another clip's, as in the
    paper's protocol, by a seeded coin), the "system outputs" of system :data:`BENCHMARK_SYSTEM`,
    ``outputs/<system>/gen_wav/<id>_<TASK>.wav`` (the clip; ``gen_path`` relative to the system folder) and
    ``truth_<lang>.jsonl``: the same rows with the corpus's label as ``gemini_score``, so
    ``omnijudge metrics instructttseval --results truth_<lang>.jsonl`` gives the true rates.
    Returns ``{"items_<lang>": path, "truth_<lang>": path, "outputs": folder}``."""
    import shutil

    corpus, out = Path(corpus), Path(out)
    system_dir = out / "outputs" / BENCHMARK_SYSTEM
    (system_dir / "gen_wav").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pairs = [p for p in load_pairs(corpus) if p["split"] == split and p.get("phrasing", "seen") == "seen"
             and p["kind"] in ("matched", "other_item")]
    by_clip: dict[str, dict[str, list[dict]]] = {}
    for p in pairs:
        by_clip.setdefault(p["clip_id"], {}).setdefault(p["task"], []).append(p)
    texts = {c["clip_id"]: c["text"] for c in (json.loads(x) for x in open(corpus / "clips.jsonl", encoding="utf-8"))}
    rows: dict[str, list[tuple[dict, dict]]] = {}
    for clip_id in sorted(by_clip):
        tasks = by_clip[clip_id]
        lang = next(iter(tasks.values()))[0]["lang"]
        item_id = f"{lang}_{len(rows.get(lang, []))}"
        item, truth = {"id": item_id, "text": texts[clip_id]}, {"id": item_id, "text": texts[clip_id]}
        for task in TASKS:
            pick = tasks[task][int(rng.integers(len(tasks[task])))]
            gen_path = f"gen_wav/{item_id}_{task}.wav"
            shutil.copyfile(pick["path"], system_dir / gen_path)
            item[task] = {"instruction": pick["instruction"], "gen_path": gen_path}
            truth[task] = {**item[task], "gemini_score": bool(pick["label"])}
        rows.setdefault(lang, []).append((item, truth))
    written: dict[str, Path] = {"outputs": system_dir}
    for lang, pairs_of_lang in rows.items():
        for name, k in (("items", 0), ("truth", 1)):
            written[f"{name}_{lang}"] = out / f"{name}_{lang}.jsonl"
            write_jsonl(written[f"{name}_{lang}"], [r[k] for r in pairs_of_lang])
    return written


def load_pairs(corpus: str | Path) -> list[dict]:
    """``pairs.jsonl`` rows with ``path`` made absolute."""
    corpus = Path(corpus)
    rows = []
    with open(corpus / "pairs.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                row["path"] = str(corpus / row["path"])
                rows.append(row)
    return rows
