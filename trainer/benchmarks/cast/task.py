"""Word-level stress detector: a word tagger trained with per-word BCE on stress labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio
from evaluators.jsonl import read_jsonl
from evaluators.judges.word_tagger import HEAD_WEIGHTS, WordTaggerJudge
from trainer.config import TrainConfig
from trainer.lora import apply_lora, load_backbone
from trainer.task import JudgeTask

STRESS_PROMPT = "Listen to the speech and mark the words the speaker emphasises."


def word_f1(probs: list[np.ndarray], labels: list[list[int]], threshold: float = 0.5) -> dict:
    """Pooled word-level precision / recall / F1 (every word of every sentence is one decision)."""
    tp = fp = fn = 0
    for p, y in zip(probs, labels):
        pred = np.asarray(p).reshape(-1) >= threshold
        gold = np.asarray(y, dtype=bool)
        tp += int(np.sum(pred & gold))
        fp += int(np.sum(pred & ~gold))
        fn += int(np.sum(~pred & gold))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def load_stress_rows(corpus_dir: str | Path) -> list[dict]:
    """Rows of a stress corpus (``items.jsonl``): absolute ``path`` and a 0/1 ``labels`` per word."""
    corpus_dir = Path(corpus_dir)
    items_path = corpus_dir / "items.jsonl"
    rows = []
    for r in read_jsonl(items_path, required=("id", "audio", "words", "stressed", "split")):
        words = r["words"]
        if not words or any(not isinstance(i, int) or not 0 <= i < len(words) for i in r["stressed"]):
            raise ValueError(f"{items_path}:{r['_line']}: stressed indices {r['stressed']} do not index words")
        labels = [0] * len(words)
        for i in r["stressed"]:
            labels[i] = 1
        rows.append({"id": r["id"], "path": str((corpus_dir / r["audio"]).resolve()), "words": words,
                     "labels": labels, "lang": r.get("lang", "en"), "split": r["split"],
                     "pair_id": r.get("pair_id"), "side": r.get("side"), "stressed_word": r.get("stressed_word"),
                     "sentence": r.get("sentence", " ".join(words)), "speaker": r.get("speaker"),
                     "word_times": r.get("word_times")})
    return rows


class WordStressTask(JudgeTask):
    """Stress detector on the shared backbone; mini-batches from one language."""

    name = "word_stress"
    group_key = "lang"

    def build_corpus(self, cfg: TrainConfig, corpus: Path) -> None:
        from trainer.benchmarks.cast.corpus import StressCorpusConfig, build_stress_corpus

        build_stress_corpus(StressCorpusConfig(seed=cfg.data.synth_seed), corpus)

    def load_rows(self, cfg: TrainConfig) -> tuple[list[dict], dict]:
        rows = load_stress_rows(self.ensure_corpus(cfg))
        summary = {split: {"items": sum(r["split"] == split for r in rows),
                           "words": sum(len(r["words"]) for r in rows if r["split"] == split),
                           "stressed_words": sum(sum(r["labels"]) for r in rows if r["split"] == split)}
                   for split in sorted({r["split"] for r in rows})}
        return rows, summary

    def build_judge(self, cfg: TrainConfig) -> WordTaggerJudge:
        backbone = apply_lora(load_backbone(cfg), cfg)
        head = WordTaggerJudge.new_head(backbone, n_outputs=1, seed=cfg.seed, mode=cfg.head.mode,
                                        width=cfg.head.width, mixer_layers=cfg.head.mixer_layers)
        return WordTaggerJudge(backbone, head, prompt=STRESS_PROMPT, output_names=("stressed",),
                               system_prompt=cfg.system_prompt, max_seconds=cfg.max_seconds,
                               name=cfg.judge_name, seed=cfg.seed)

    def trainable_modules(self, judge: WordTaggerJudge) -> list[torch.nn.Module]:
        return [judge.backbone.model, judge.head]

    def example(self, judge: WordTaggerJudge, row: dict) -> dict:
        return judge.prepare(load_audio(row["path"]), row["words"], row["lang"], row.get("word_times"))

    def collate(self, judge: WordTaggerJudge, examples: list[dict], rows: list[dict]) -> dict:
        batch = judge.collate(examples)
        labels = torch.zeros(batch["slot_mask"].shape, dtype=torch.float32)
        for i, r in enumerate(rows):
            labels[i, : len(r["labels"])] = torch.tensor(r["labels"], dtype=torch.float32)
        batch["labels"] = labels
        return batch

    def _logits(self, judge: WordTaggerJudge, batch: dict) -> torch.Tensor:
        inputs = {k: v for k, v in batch.items() if k != "labels"}
        return judge.word_logits(inputs)[..., 0]

    def loss(self, judge: WordTaggerJudge, batch: dict, cfg: TrainConfig) -> torch.Tensor:
        logits = self._logits(judge, batch)
        mask = batch["slot_mask"].to(logits.device)
        labels = batch["labels"].to(logits.device)
        pos_weight = torch.tensor(cfg.loss.word_pos_weight, device=logits.device)
        per_word = F.binary_cross_entropy_with_logits(logits, labels, pos_weight=pos_weight, reduction="none")
        return (per_word * mask).sum() / mask.sum().clamp(min=1)

    def predict(self, judge: WordTaggerJudge, batch: dict) -> list[np.ndarray]:
        probs = torch.sigmoid(self._logits(judge, batch)).float().cpu().numpy()
        counts = batch["slot_mask"].sum(1).tolist()
        return [p[:n] for p, n in zip(probs, counts)]

    def val_metrics(self, rows: list[dict], preds: list[np.ndarray]) -> dict[str, float]:
        out = {"val/word_f1": word_f1(preds, [r["labels"] for r in rows])["f1"]}
        for lang in sorted({r["lang"] for r in rows}):
            sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
            out[f"val/word_f1/{lang}"] = word_f1([preds[i] for i in sel], [rows[i]["labels"] for i in sel])["f1"]
        return out

    def export(self, judge: WordTaggerJudge, cfg: TrainConfig, out: Path, extra: dict) -> Path:
        from trainer.release import write_judge_folder

        fields = {"prompt": judge.prompt, "prompt_version": judge.prompt_version, "system_prompt": judge.system_prompt,
                  "output_names": list(judge.output_names), "threshold": judge.threshold,
                  "head": judge.head.config.to_dict(),
                  "read_at": "final-layer hidden state at each transcript word's last token"
                             + (" + audio states in the word's time span" if judge.needs_word_times else "")}
        write_judge_folder(judge.backbone.model, cfg, out, "word_tagger", fields, extra)
        judge.save_head(out)
        if not (out / HEAD_WEIGHTS).is_file():
            raise RuntimeError(f"head weights missing in {out}")
        return out

    def validate(self, judge_dir: Path, cfg: TrainConfig, out: Path | None = None) -> dict:
        from trainer.benchmarks.cast.validation import validate_stress_judge

        report = validate_stress_judge(WordTaggerJudge.from_pretrained(judge_dir),
                                       load_stress_rows(cfg.data.corpus_dir))
        if out:
            Path(out).write_text(json.dumps(report, indent=2))
        return report
