"""NVV-SuperBench tag-controllability metrics by the paper's definitions (protocol ``paper``, the
default; ``upstream.py`` reproduces the public scripts instead). Definitions and every difference
between the two: ``docs/benchmarks.md#nvv-superbench``.

Verifier rows: :mod:`evaluators.benchmarks.nvv.predictions`. Positions: :mod:`...nvv.items` (EN
words = whitespace tokens with a letter or digit, ZH = non-space characters).

Per utterance u (an item in scope) with target type t_u:
    G = positions of the GT tags of type t_u (1-3 per real item);
    P = positions of the predicted tags that resolve to t_u (only when ``present``; a present row
        with no tag at all is one *unplaced* prediction that matches nothing);
    S = spurious reports: each ``hallucinated_events`` entry (counted whether or not ``present``)
        plus each non-target tag inside a present row's ``text_with_mark``. A report whose type is
        one of the item's unscored non-target GT events (en_278/en_286 ``<laugh>``) is not spurious.
    Matching: predicted and GT positions are paired one-to-one, same type, ``|p - g| <= delta``,
    maximising the number of pairs, then minimising the summed distance (exact DP on sorted
    positions; in 1-D crossing pairs can always be uncrossed).
    ``multi="utterance"`` (default): u has one GT NVV, matched when >= 1 pair exists (a verifier
        that marks any occurrence of a repeated target is right): tp_u = 1[pairs], fn_u = 1 - tp_u.
    ``multi="event"``: every GT tag counts: tp_u = #pairs, fn_u = |G| - #pairs.
    Both: fp_u = (|P| - #pairs) + |S|. ``present=false`` predicts nothing: all GT are FN.
    A missing row is a miss (FN) and is listed in ``missing_ids``.
Totals: P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2TP/(2TP+FP+FN) (0 when a denominator is 0).
NTD = mean over matched utterances of d_u / L_u, d_u = mean |p - g| of u's pairs, L_u = units of
u's clean transcript (null when nothing matched); TPD = the same without / L_u (in units).
Coverage = supported types / 45: from ``system`` (paper Table 2 vocabulary) or ``supported_types``
(items of unsupported types are then out of scope, as the paper only synthesises supported types),
or a given number; with none of these it is *assumed* 1.0 (every type requested: the prompt-based
convention) and the report says so in ``warnings``. CA-F1 = 2 F1 Cov / (F1 + Cov).
Several runs: each metric's mean and sample std (ddof=1, the public aggregate_runs.py convention).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from evaluators.benchmarks.nvv.items import (
    DEFAULT_DELTA,
    TAG_RE,
    UNIT,
    NVVDataError,
    NVVItem,
    parse_marked_text,
)
from evaluators.benchmarks.nvv.taxonomy import (
    N_TYPES,
    UnknownTagError,
    get_system,
    load_taxonomy,
    normalise_spelling,
)
from evaluators.benchmarks.nvv.predictions import Prediction, predictions_by_id

RUN_METRICS = ("precision", "recall", "f1", "ntd", "tpd", "coverage", "ca_f1", "tp", "fp", "fn")
COVERAGE_ASSUMED = ("coverage assumed 1.0: no --system or --supported-types given, so every one of the "
                    "45 types counts as requested (the prompt-based convention); a tag-based system's "
                    "coverage is its supported types / 45")


def match_positions(gt: list[int], pred: list[int], delta: int) -> list[tuple[int, int]]:
    """Max-cardinality one-to-one pairs with ``|p - g| <= delta``, ties broken by least total distance.

    ``gt``, ``pred``: positions (any order). Returns (g, p) pairs. Exact O(|gt| * |pred|) DP over the
    sorted lists: in 1-D an optimal matching never needs crossing pairs.
    """
    g, p = sorted(gt), sorted(pred)
    # best[i][j] = (pairs, -distance) using g[:i], p[:j]
    best = [[(0, 0)] * (len(p) + 1) for _ in range(len(g) + 1)]
    for i in range(1, len(g) + 1):
        for j in range(1, len(p) + 1):
            cand = max(best[i - 1][j], best[i][j - 1])
            d = abs(g[i - 1] - p[j - 1])
            if d <= delta:
                n, neg = best[i - 1][j - 1]
                cand = max(cand, (n + 1, neg - d))
            best[i][j] = cand
    pairs, i, j = [], len(g), len(p)
    while i and j:  # walk back along the choices that produced best[i][j]
        if best[i][j] == best[i - 1][j]:
            i -= 1
        elif best[i][j] == best[i][j - 1]:
            j -= 1
        else:
            pairs.append((g[i - 1], p[j - 1]))
            i, j = i - 1, j - 1
    return pairs[::-1]


@dataclass
class ItemScore:
    """Counts of one utterance (see module docstring); ``distance`` is None unless matched."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    distance: float | None = None
    n_units: int = 0
    unplaced: bool = False
    spurious: list[str] = field(default_factory=list)
    exempt: int = 0
    text_mismatch: bool = False


def _seq(text: str, lang: str) -> list[str]:
    # the units themselves, to check that a verifier kept the reference transcript verbatim
    clean = TAG_RE.sub(" ", text)
    return [c for c in clean if not c.isspace()] if lang == "zh" else re.findall(r"[^\W_]+", clean.lower())


def score_item(item: NVVItem, pred: Prediction | None, delta: int, multi: str = "utterance") -> ItemScore:
    """Score one utterance; ``pred=None`` is a missing row (all GT are FN)."""
    tax = load_taxonomy()
    n_gt = 1 if multi == "utterance" else len(item.target_events)
    s = ItemScore(n_units=item.n_units)
    if pred is None:
        s.fn = n_gt
        return s
    pred_pos: list[int] = []
    reported: list[tuple[str, str]] = []  # (type or "?:spelling", raw) of non-target reports
    if pred.present:
        try:
            _, events = parse_marked_text(pred.text_with_mark, item.lang, prefer=item.target_type, taxonomy=tax)
        except UnknownTagError as e:
            raise NVVDataError(f"{pred.source}: {pred.id}: {e}") from None
        pred_pos = [e.position for e in events if e.type == item.target_type]
        reported += [(e.type, e.tag) for e in events if e.type != item.target_type]
        s.unplaced = not events  # "present" yet no marker at all: one prediction that cannot match
        s.text_mismatch = _seq(pred.text_with_mark, item.lang) not in (
            _seq(item.reference_text, item.lang), _seq(item.text, item.lang))
    for h in pred.hallucinated:
        # free-text reports are still spurious NVVs even when no type matches: keep their spelling
        reported.append((tax.normalise(h) or f"?:{normalise_spelling(h)}", h))
    real_other = Counter(e.type for e in item.other_events)
    for ty, raw in reported:
        if real_other[ty] > 0:  # present in the GT, just not asked about: not spurious
            real_other[ty] -= 1
            s.exempt += 1
        else:
            s.spurious.append(ty)
    n_pred = len(pred_pos) + (1 if s.unplaced else 0)
    pairs = match_positions([e.position for e in item.target_events], pred_pos, delta)
    s.tp = min(len(pairs), n_gt)
    s.fn = n_gt - s.tp
    s.fp = (n_pred - len(pairs)) + len(s.spurious)
    if pairs:
        s.distance = float(np.mean([abs(g - p) for g, p in pairs]))
    return s


def _prf(counts: list) -> dict:
    """P/R/F1 and NTD/TPD from per-type counts [tp, fp, fn, [(d_u, L_u) of matched utterances]],
    summed over the list."""
    tp, fp, fn = (sum(c[k] for c in counts) for k in range(3))
    dists = [x for c in counts for x in c[3]]
    ntd = [d / L for d, L in dists if L > 0]
    return {
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
        "ntd": float(np.mean(ntd)) if ntd else None,
        "tpd": float(np.mean([d for d, _ in dists])) if dists else None,
        "tp": tp, "fp": fp, "fn": fn, "n_matched": len(dists),
    }


def _harmonic(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a > 0 and b > 0 else 0.0


def resolve_supported_types(types) -> frozenset[str]:
    """Taxonomy type ids of ``types`` (ids, labels or tag spellings such as ``<humming>``); an
    unknown name raises ``ValueError`` naming it."""
    tax = load_taxonomy()
    out = set()
    for t in types:
        ty = tax.normalise(str(t))
        if ty is None:
            raise ValueError(f"--supported-types: {t!r} is not an NVV-SuperBench type or tag spelling")
        out.add(ty)
    if not out:
        raise ValueError("--supported-types: no types given")
    return frozenset(out)


def score_run(items: list[NVVItem], predictions: list[Prediction], *, delta: int | None = None,
              system: str | None = None, coverage: float | None = None, multi: str = "utterance",
              supported_types=None) -> dict:
    """The metrics of one synthesis run (one PRED file) as a JSON-ready dict (see module docstring).

    ``delta``: tolerance in units (default 2 for EN items, 5 for ZH). ``system``: a Table 2 system
    name, or ``supported_types`` (type ids or tag spellings): sets coverage and restricts scoring to
    the supported types. ``coverage``: override, a share in [0, 1]. Duplicate prediction ids (only
    possible for rows not read by ``load_predictions``, which refuses them): the last row wins
    (public code) and the ids are listed.
    """
    _check_run_options(delta, coverage, multi, system, supported_types)
    supported = None
    if system is not None:
        vocab = get_system(system)
        supported, system = vocab.supported_types, vocab.name
    elif supported_types is not None:
        supported = resolve_supported_types(supported_types)
    cov = coverage if coverage is not None else (len(supported) / N_TYPES if supported is not None else 1.0)
    warnings = [COVERAGE_ASSUMED] if coverage is None and supported is None else []
    by_id, dup = predictions_by_id(predictions)
    scope = [it for it in items if supported is None or it.target_type in supported]
    langs = sorted({it.lang for it in scope})
    tally = _RunTally()
    for it in scope:
        tally.add(it, by_id.get(it.id), delta if delta is not None else DEFAULT_DELTA[it.lang], multi)
    report = _prf(list(tally.counts.values()))
    report.update(coverage=cov, ca_f1=_harmonic(report["f1"], cov))
    report.update({
        "n_items": len(items), "n_scored": len(scope), "n_out_of_scope": len(items) - len(scope),
        "n_predictions": len(predictions),
        "lang": langs[0] if len(langs) == 1 else langs,
        "unit": UNIT[langs[0]] if len(langs) == 1 else {l: UNIT[l] for l in langs},
        "delta": delta if delta is not None else (DEFAULT_DELTA[langs[0]] if len(langs) == 1
                                                  else {l: DEFAULT_DELTA[l] for l in langs}),
        "multi": multi, "system": system,
        "supported_types": sorted(supported) if supported is not None else None,
        "protocol": "paper",
        "coverage_source": ("given" if coverage is not None else "system vocabulary" if system is not None
                            else "supported types given" if supported is not None
                            else "assumed 1.0 (no system or supported types given)"),
        "warnings": warnings,
        "missing_ids": tally.missing,
        "extra_ids": sorted(set(by_id) - {it.id for it in items}),
        "duplicate_ids": sorted(dup),
        "n_spurious": sum(tally.spurious_by_type.values()), "n_spurious_exempt": tally.n_exempt,
        "spurious_by_type": dict(sorted(tally.spurious_by_type.items())),
        "n_unplaced": tally.n_unplaced, "n_text_mismatch": tally.n_mismatch,
        **tally.breakdown(),
    })
    return report


def _check_run_options(delta, coverage, multi: str, system, supported_types) -> None:
    """Refuse :func:`score_run` options it cannot score under (ValueError naming the option)."""
    if multi not in ("utterance", "event"):
        raise ValueError(f"multi must be 'utterance' or 'event', got {multi!r}")
    if delta is not None and (isinstance(delta, bool) or not isinstance(delta, int) or delta < 0):
        raise ValueError(f"--delta must be an integer >= 0 (units), got {delta!r}")
    if coverage is not None and (isinstance(coverage, bool) or not isinstance(coverage, (int, float))
                                 or not 0.0 <= coverage <= 1.0):  # NaN fails the comparison too
        raise ValueError(f"--coverage must be a share in [0, 1], got {coverage!r}")
    if system is not None and supported_types is not None:
        raise ValueError("give --system or --supported-types, not both")


@dataclass
class _RunTally:
    """The item scores of one run summed: per target type ``counts`` [tp, fp, fn, [(d_u, L_u) of
    matched utterances]] and ``n_items``; over the run the missing ids, spurious reports by type and
    the unplaced / exempt / text-mismatch counts."""

    counts: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0, []]))
    n_items: Counter = field(default_factory=Counter)
    missing: list = field(default_factory=list)
    spurious_by_type: Counter = field(default_factory=Counter)
    n_unplaced: int = 0
    n_exempt: int = 0
    n_mismatch: int = 0

    def add(self, it: NVVItem, pred: Prediction | None, delta: int, multi: str) -> None:
        if pred is None:
            self.missing.append(it.id)
        s = score_item(it, pred, delta, multi)
        c = self.counts[it.target_type]
        for k, n in enumerate((s.tp, s.fp, s.fn)):
            c[k] += n
        if s.distance is not None and s.tp:
            c[3].append((s.distance, s.n_units))
        self.n_items[it.target_type] += 1
        self.spurious_by_type.update(s.spurious)
        self.n_unplaced += s.unplaced
        self.n_exempt += s.exempt
        self.n_mismatch += s.text_mismatch

    def breakdown(self) -> dict:
        """``per_type`` and ``per_category`` metrics (taxonomy order, scored types only)."""
        tax = load_taxonomy()
        per_type, per_cat = {}, {}
        for t in tax.types:
            if self.n_items[t.id]:
                per_type[t.id] = {"category": t.category, "n_items": self.n_items[t.id],
                                  **_prf([self.counts[t.id]])}
        for cat in tax.categories:
            ids = [t for t in tax.types_in(cat) if t in per_type]
            if ids:
                per_cat[cat] = {"n_items": sum(self.n_items[t] for t in ids), "n_types": len(ids),
                                **_prf([self.counts[t] for t in ids])}
        return {"per_type": per_type, "per_category": per_cat}


def _mean_std(values: list) -> tuple[float | None, float | None]:
    v = [float(x) for x in values if x is not None]
    if not v:
        return None, None
    return float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0


def _aggregate_table(tables: list[dict]) -> tuple[dict, dict]:
    # per_type / per_category: mean and std of every numeric field over the runs that have the key
    mean, std = {}, {}
    for key in dict.fromkeys(k for t in tables for k in t):
        rows = [t[key] for t in tables if key in t]
        mean[key], std[key] = {}, {}
        for f, v in rows[0].items():
            if isinstance(v, (int, float)) or v is None:
                mean[key][f], std[key][f] = _mean_std([r.get(f) for r in rows])
            else:
                mean[key][f] = v
    return mean, std


def aggregate_runs(runs: list[dict]) -> dict:
    """Combine per-run reports: top-level metrics = mean over runs, ``std`` = sample std (0 for 1 run).

    Also ``n_runs``, ``runs`` (the per-run reports, when more than one), ``missing_ids`` = union,
    and ``per_type`` / ``per_category`` means with ``per_type_std`` / ``per_category_std``.
    """
    if not runs:
        raise ValueError("no runs to aggregate")
    if len(runs) == 1:
        return {**runs[0], "n_runs": 1, "std": {k: 0.0 if runs[0][k] is not None else None for k in RUN_METRICS}}
    out = {k: v for k, v in runs[0].items() if k not in ("runs",)}
    out["std"] = {}
    counts = ("n_matched", "n_spurious", "n_unplaced", "n_text_mismatch", "n_paired", "n_gt_not_found")
    for k in RUN_METRICS + tuple(c for c in counts if c in runs[0]):
        out[k], sd = _mean_std([r[k] for r in runs])
        if k in RUN_METRICS:
            out["std"][k] = sd
    for k in ("missing_ids", "extra_ids", "duplicate_ids"):
        out[k] = sorted(set().union(*(r[k] for r in runs)))
    for table in ("per_type", "per_category"):
        if table in runs[0]:
            out[table], out[f"{table}_std"] = _aggregate_table([r[table] for r in runs])
    out["n_runs"] = len(runs)
    if "predictions" in runs[0]:
        out["predictions"] = [r["predictions"] for r in runs]
    out["runs"] = runs
    return out
