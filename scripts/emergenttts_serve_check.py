"""EmergentTTS-Eval's judge request against ``omnijudge serve``, measured (``docs/serve.md#pairwise-judging-emergenttts-eval``).

Starts the server (``--routes``, or the family on its default judges on ``--base``) and sends each
pair, the six categories in turn, as ``api_clients.OpenAIClient.generate_w_audio_comparison`` does,
three times: forward, swapped, forward again. Counts replies its validator refuses, swapped winners
that are not the forward winner swapped, repeats that differ, ties; with ``--pairs`` (labelled
order, ``docs/data.md#pairs``) also the accuracy (a tie counts as wrong).

    python scripts/emergenttts_serve_check.py --base tiny --clips 16          # 16 synthetic pairs x 6 categories
    python scripts/emergenttts_serve_check.py --routes ROUTES.yaml --pairs bench/pairs/pairs.jsonl --split test
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
from pathlib import Path

from bench_common import serving, speech_wav_files, timed
from evaluators.benchmarks.emergenttts.prompts import categories, win_rate_prompts

FAMILY = "emergenttts-win-rate"
KEYS = ("reasoning_system_1", "reasoning_system_2", "system_comparison", "score_1", "score_2")
SWAP = {0: 0, 1: 2, 2: 1}


def parse(raw: str):
    """The runner's reading of a reply (``json_repair.loads``; ``json.loads`` without it), or None."""
    try:
        import json_repair
        return json_repair.loads(raw)
    except ImportError:
        try:
            return json.loads(raw)
        except ValueError:
            return None


def valid(reply) -> bool:
    """``EmergentTextSpeech.validate_win_rate_response``'s checks."""
    return isinstance(reply, dict) and all(k in reply for k in KEYS) and reply.get("winner") in [0, 1, 2]


def synthetic_pairs(n: int, folder: Path) -> list[dict]:
    """``n`` pairs of speech-like clips of different lengths (no known order)."""

    paths = speech_wav_files(2 * n, 2.0, folder)
    return [{"id": f"pair{k}", "path_a": str(paths[2 * k]), "path_b": str(paths[2 * k + 1]),
             "target_text": f"Sentence {k}: is it over? Yes... it is."} for k in range(n)]


def win_rate_messages(text: str, category: str, clips: tuple[str, str]) -> list[dict]:
    """The judge request's messages as ``OpenAIClient.generate_w_audio_comparison`` sends them: the
    system prompt, then one user message: text, clip 1, text, clip 2 (base64 WAV)."""
    system, user, post = win_rate_prompts(text, category)
    audio = [{"type": "input_audio", "input_audio": {"data": c, "format": "wav"}} for c in clips]
    return [{"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": user}, audio[0], {"type": "text", "text": post},
                                         audio[1]]}]


def ask(client, model: str, pair: dict, category: str, swapped: bool) -> str:
    first, second = (pair["path_b"], pair["path_a"]) if swapped else (pair["path_a"], pair["path_b"])
    clips = tuple(base64.b64encode(Path(p).read_bytes()).decode("utf-8") for p in (first, second))
    completion = client.chat.completions.create(model=model, temperature=0, top_p=0.9, max_tokens=16384,
                                                messages=win_rate_messages(pair.get("target_text") or "", category, clips))
    return completion.choices[0].message.content


def measure(base: str, model: str, pairs: list[dict]) -> dict:
    from openai import OpenAI

    client = OpenAI(api_key="local", base_url=base + "v1", max_retries=0, timeout=600)
    counts = {"pairs": len(pairs), "requests": 0, "invalid": 0, "swap_inconsistent": 0, "not_deterministic": 0,
              "ties": 0, "labelled": 0, "correct": 0}
    per_category: dict[str, dict] = {}
    for k, pair in enumerate(pairs):
        category = categories()[k % len(categories())]
        raws = [ask(client, model, pair, category, swapped) for swapped in (False, True, False)]
        replies = [parse(r) for r in raws]
        counts["requests"] += 3
        bad = sum(not valid(r) for r in replies)
        counts["invalid"] += bad
        cell = per_category.setdefault(category, {"pairs": 0, "invalid": 0})
        cell["pairs"] += 1
        cell["invalid"] += bad
        if bad:
            continue
        forward, swapped = replies[0]["winner"], replies[1]["winner"]
        counts["swap_inconsistent"] += swapped != SWAP[forward]
        counts["not_deterministic"] += raws[2] != raws[0]
        counts["ties"] += forward == 0
        if pair.get("naturalness_label") in ("A", "B"):
            counts["labelled"] += 1
            counts["correct"] += forward == {"A": 1, "B": 2}[pair["naturalness_label"]]
    counts["accuracy"] = round(counts["correct"] / counts["labelled"], 4) if counts["labelled"] else None
    return {**counts, "per_category": per_category}


def main(argv: list[str] | None = None) -> int:
    from evaluators.serve.app import ServeOptions, create_app
    from evaluators.serve.routes import JudgeLoader, ModelRoute, Routes, load_route_judges

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--routes", help="ROUTES.yaml (default: the family on its default judges on --base)")
    p.add_argument("--base", default="tiny", help="base of the default judges without --routes (default tiny)")
    p.add_argument("--model", default="omnijudge-local", help="the judge model name sent (a route of --routes)")
    p.add_argument("--tie-band", type=float, default=None, help="the route's tie_band without --routes")
    p.add_argument("--pairs", help="a pairs file (docs/data.md#pairs); default: synthetic clips")
    p.add_argument("--split", help="only the pairs of this split")
    p.add_argument("--clips", type=int, default=12, help="synthetic pairs without --pairs (default 12)")
    p.add_argument("--port", type=int, default=8766)
    args = p.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="emergenttts_check_"))
    if args.pairs:
        from evaluators.benchmarks.pairs.metrics import read_pairs
        pairs = [x for x in read_pairs(args.pairs) if args.split is None or x.get("split") == args.split]
    else:
        pairs = synthetic_pairs(args.clips, folder)
    if args.routes:
        routes = Routes.from_yaml(args.routes)
    else:
        settings = {} if args.tie_band is None else {"tie_band": args.tie_band}
        routes = Routes({args.model: ModelRoute(args.model, {FAMILY: settings}, args.base)})
    app = create_app(load_route_judges(routes, JudgeLoader()), ServeOptions(folder=folder / "server"),
                     settings=routes.settings())
    with serving(app, args.port) as base:
        report, seconds = timed(measure, base, args.model, pairs)
        report["wall_s"] = round(seconds, 1)
    print(json.dumps(report, indent=2))
    return 0 if report["invalid"] == report["swap_inconsistent"] == report["not_deterministic"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
