"""The import report: rows per split, labels per class, rater agreement, dropped rows with reasons,
throughput and output size (``report.json`` beside an imported corpus; ``docs/data.md``)."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: Drop reasons printed after an import (the most frequent first); report.json holds them all.
SHOWN_REASONS = 10


@dataclass
class ImportReport:
    """What an import wrote and dropped (``report.json`` beside the corpus).

    ``labels`` is per split, per label class; ``agreement`` is the task's rater-agreement summary;
    ``dropped`` lists ``{split, row, id, reason}``; ``renamed`` the ids whose file name would have
    clashed with an earlier id's and got a hash suffix (``common.FileNames``); throughput is rows
    read per second of wall time.
    """

    source: str
    kind: str
    rows: dict[str, int] = field(default_factory=dict)
    labels: dict[str, dict[str, int]] = field(default_factory=dict)
    agreement: dict = field(default_factory=dict)
    dropped: list[dict] = field(default_factory=list)
    renamed: list[dict] = field(default_factory=list)
    rows_read: int = 0
    seconds: float = 0.0
    bytes_written: int = 0
    _start: float = field(default_factory=time.perf_counter, repr=False)

    def count(self, split: str, label: str | None) -> None:
        self.rows[split] = self.rows.get(split, 0) + 1
        if label is not None:
            per = self.labels.setdefault(split, {})
            per[label] = per.get(label, 0) + 1

    def drop(self, split: str, row: int, item_id, reason: str) -> None:
        self.dropped.append({"split": split, "row": row, "id": item_id, "reason": reason})

    def finish(self, out: Path) -> dict:
        self.seconds = time.perf_counter() - self._start
        self.bytes_written = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        report = {"source": self.source, "kind": self.kind, "rows": self.rows, "labels": self.labels,
                  "agreement": self.agreement, "n_dropped": len(self.dropped),
                  "dropped_by_reason": dict(Counter(d["reason"] for d in self.dropped)),
                  "dropped": self.dropped, "renamed": self.renamed, "rows_read": self.rows_read,
                  "seconds": round(self.seconds, 3),
                  "rows_per_second": round(self.rows_read / self.seconds, 1) if self.seconds > 0 else None,
                  "bytes_written": self.bytes_written}
        (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
        return report


def summary_lines(report: dict) -> list[str]:
    """A few lines for the terminal: rows and labels per split, drops by reason, speed and size."""
    lines = [f"imported {report['source']} as a {report['kind']} corpus: "
             f"{sum(report['rows'].values())} rows ({report['rows_per_second']} rows/s read, "
             f"{report['bytes_written'] / 1e6:.2f} MB written)"]
    for split, n in report["rows"].items():
        labels = ", ".join(f"{k} {v}" for k, v in sorted(report["labels"].get(split, {}).items()))
        lines.append(f"  {split}: {n} rows ({labels})")
    reasons = sorted(report["dropped_by_reason"].items(), key=lambda kv: -kv[1])
    for reason, n in reasons[:SHOWN_REASONS]:
        lines.append(f"  dropped {n}: {reason}")
    if len(reasons) > SHOWN_REASONS:
        rest = sum(n for _, n in reasons[SHOWN_REASONS:])
        lines.append(f"  dropped {rest} more for {len(reasons) - SHOWN_REASONS} other reasons (report.json lists them)")
    if report.get("renamed"):
        lines.append(f"  renamed {len(report['renamed'])} id(s) whose file names would clash "
                     f"(a hash suffix; report.json lists them)")
    return lines
