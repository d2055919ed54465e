"""Per-system tables from score rows: mean score with a 95% bootstrap CI."""

from __future__ import annotations

from collections import defaultdict

from evaluators.metrics.correlation import bootstrap_ci


def system_score_table(rows: list[dict], n_resamples: int = 10_000, seed: int = 0) -> list[dict]:
    """Group score rows by ``system``; rows with ``error`` are counted, not averaged.

    Returns one dict per system, best first: ``system``, ``mean``, ``ci_low``, ``ci_high`` (95%
    percentile bootstrap over clips), ``n`` (scored clips), ``n_errors``, ``n_no_speech`` (scored
    clips in which the VAD heard no speech; included in the mean).
    """
    scores: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    silent: dict[str, int] = defaultdict(int)
    for r in rows:
        system = r.get("system") or "(all)"
        if "error" in r:
            errors[system] += 1
        else:
            scores[system].append(float(r["score"]))
            silent[system] += bool(r.get("no_speech"))
    table = []
    for system in sorted(set(scores) | set(errors)):
        vals = scores.get(system, [])
        if vals:
            mean, lo, hi = bootstrap_ci(vals, n_resamples=n_resamples, seed=seed)
        else:
            mean = lo = hi = float("nan")
        table.append({"system": system, "mean": mean, "ci_low": lo, "ci_high": hi, "n": len(vals),
                      "n_errors": errors.get(system, 0), "n_no_speech": silent.get(system, 0)})
    return sorted(table, key=lambda t: -t["mean"] if t["n"] else float("inf"))


def format_system_table(table: list[dict], score_name: str = "HLS") -> str:
    """Markdown rendering of ``system_score_table``."""
    lines = [f"| system | {score_name} | 95% CI | clips | errors | no speech |", "|---|---|---|---|---|---|"]
    for t in table:
        lines.append(f"| {t['system']} | {t['mean']:.3f} | [{t['ci_low']:.3f}, {t['ci_high']:.3f}] | {t['n']} | "
                     f"{t['n_errors']} | {t.get('n_no_speech', 0)} |")
    return "\n".join(lines)
