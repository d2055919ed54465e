"""NVV-SuperBench Table 3 (NVV paper, "Objective results of prompt-based and tag-based systems across
three independent generation runs"): per system WER/CER, DNSMOS P.835 SIG/BAK/OVRL, CLAP score,
coverage, precision, recall, F1 and NTD (plus CA-F1), each the mean +- sample std over runs.

A run is one ``omnijudge score nvv`` results folder: its ``table.json`` (the verifier's NVV metrics
per system, when a verifier ran) and ``measures/<measure>/<system>.jsonl`` (``measure_pass.py``).
WER/CER is the mean per-utterance rate x 100 (the public ``average_wer.py``); DNSMOS and CLAP are
means over clips. A column no run measured is None ("not run" in the markdown). ``docs/nvv.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evaluators.benchmarks.nvv.measure_pass import measure_summary
from evaluators.rows_file import read_done_rows

COLUMNS = ("wer", "sig", "bak", "ovrl", "clap", "coverage", "precision", "recall", "f1", "ntd", "ca_f1")
HEADERS = ("WER/CER", "SIG", "BAK", "OVRL", "CLAP", "Coverage", "P", "R", "F1", "NTD", "CA-F1")
_NVV = ("coverage", "precision", "recall", "f1", "ntd", "ca_f1")


def _lang(rows: list[dict]) -> str | None:
    langs = {str(r.get("id", "")).split("_", 1)[0] for r in rows} & {"en", "zh"}
    return langs.pop().upper() if len(langs) == 1 else None


def run_columns(results_dir: str | Path) -> dict[str, dict]:
    """system -> Table 3 values of one run (missing columns absent), with ``lang`` and the
    measures' clip counts ``n_<measure>`` and ``seconds_per_clip_<measure>``."""
    results_dir = Path(results_dir)
    out: dict[str, dict] = {}
    table = results_dir / "table.json"
    if table.is_file():
        for row in json.loads(table.read_text()):
            out.setdefault(row["system"], {}).update({k: row.get(k) for k in _NVV})
    measures = results_dir / "measures"
    for folder in sorted(p for p in measures.iterdir() if p.is_dir()) if measures.is_dir() else []:
        for f in sorted(folder.glob("*.jsonl")):
            rows = read_done_rows(f)
            systems = {r.get("system") for r in rows if r.get("system")}
            system = systems.pop() if len(systems) == 1 else f.stem
            s = measure_summary(measures, folder.name, system)
            cell = out.setdefault(system, {})
            for k, v in s.items():
                if k in ("n", "n_errors", "seconds_per_clip"):
                    cell[f"{k}_{folder.name}"] = v
                elif v is not None and not (folder.name == "dnsmos_personalized" and "sig" in cell):
                    cell[k] = v * 100 if k == "wer" else v
            cell.setdefault("lang", _lang(rows))
    return out


def table3(results_dirs: list[str | Path]) -> list[dict]:
    """One row per system: ``{system, lang, n_runs, <column>: {"mean", "std", "n"}}`` over the runs
    that measured it (sample std, ddof 1, as the public aggregate script; 0 for one run)."""
    runs = [run_columns(d) for d in results_dirs]
    rows = []
    for system in sorted({s for r in runs for s in r}):
        cells = [r[system] for r in runs if system in r]
        row = {"system": system, "lang": next((c.get("lang") for c in cells if c.get("lang")), None),
               "n_runs": len(cells)}
        for col in COLUMNS:
            vals = [float(c[col]) for c in cells if c.get(col) is not None]
            row[col] = None if not vals else {"mean": float(np.mean(vals)), "n": len(vals),
                                              "std": float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0}
        row.update({k: v for c in cells for k, v in c.items() if k.startswith(("n_", "seconds_per_clip_"))})
        rows.append(row)
    return rows


def format_table3(rows: list[dict]) -> str:
    """Markdown Table 3: ``mean ± std`` per column, "not run" where nothing measured it."""
    def cell(v, col):
        if v is None:
            return "not run"
        digits = 2 if col in ("wer", "sig", "bak", "ovrl", "clap") else 3
        return f"{v['mean']:.{digits}f} ± {v['std']:.{digits}f}"
    lines = ["| System | Lang | " + " | ".join(HEADERS) + " |", "|---|---|" + "---|" * len(HEADERS)]
    lines += [f"| {r['system']} | {r['lang'] or '-'} | " + " | ".join(cell(r[c], c) for c in COLUMNS) + " |"
              for r in rows]
    return "\n".join(lines)
