"""Every ``omnijudge score <benchmark>`` shards under a launcher (docs/scoring.md): the same command
run as 2 launcher ranks (``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` in the environment, as ``torchrun``
sets them; the real ``torchrun`` launch is ``test_scoring.py::test_two_launcher_processes_...``)
writes the rows and tables one process writes, leaves no part, marker or lock behind, exits 0 on
both ranks, and a second 2-rank launch on the finished output changes nothing. A rank killed mid
run leaves a part that the next launch resumes to the same output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import soundfile as sf

from conftest import _assert_close, assert_same_rows, speechlike
from test_toy_benchmark import toy  # noqa: F401  (the fixture: the toy's synth runs in this process)

TESTS = Path(__file__).resolve().parent
#: ``omnijudge <argv>`` in a child process; the toy benchmark (tests/toy_benchmark/) is registered
#: first, as ``test_toy_benchmark.py``'s fixture does in-process. ``KILL_PART`` set: the process
#: SIGKILLs itself right after its first fsync of a rank's part file (its first durable rows).
RUNNER = f"""
import os, signal, sys
sys.path.insert(0, {str(TESTS)!r})
import evaluators.benchmarks as benchmarks
from evaluators.judges.presets import PRESETS
benchmarks.BENCHMARKS["toy"] = "toy_benchmark.evaluators_side:BENCHMARK"
PRESETS.update(benchmarks.get_benchmark("toy").presets)
if os.environ.get("KILL_PART"):
    real = os.fsync
    def fsync_then_die(fd):
        real(fd)
        if ".part-" in os.readlink(f"/proc/self/fd/{{fd}}"):
            os.kill(os.getpid(), signal.SIGKILL)
    os.fsync = fsync_then_die
from evaluators.cli import main
sys.exit(main(sys.argv[1:]))
"""
LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def launch(argv: list, world: int = 2, env: dict | None = None) -> list[subprocess.Popen]:
    """Start ``omnijudge <argv>`` as ``world`` concurrent launcher ranks (``world=1``: one plain
    process, no launcher variables); ``env[rank]`` adds variables to one rank."""
    base = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS} | {"OMP_NUM_THREADS": "1"}
    procs = []
    for rank in range(world):
        ranked = {} if world == 1 else {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank)}
        # files, not pipes: a rank blocked on a full pipe would never mark its part done for rank 0
        logs = (tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+"))
        procs.append(subprocess.Popen([sys.executable, "-c", RUNNER, *map(str, argv)], text=True,
                                      env=base | ranked | (env or {}).get(rank, {}), stdout=logs[0], stderr=logs[1]))
        procs[-1].logs = logs
    return procs


def finish(procs: list[subprocess.Popen], timeout: float = 600) -> list[subprocess.CompletedProcess]:
    """Each started rank's result (exit status, stdout, stderr), once all have ended."""
    deadline = time.monotonic() + timeout
    # until every rank ends, one fails (its peers would wait for its marker in vain) or time is up;
    # then the rest are ended, as a launcher ends them
    while any(p.poll() is None for p in procs) and not any(p.poll() for p in procs) and time.monotonic() < deadline:
        time.sleep(0.2)
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    results = []
    for p in procs:
        for f in p.logs:
            f.seek(0)
        results.append(subprocess.CompletedProcess(p.args, p.returncode, *(f.read() for f in p.logs)))
    return results


def run_ranks(argv: list, world: int = 2, env: dict | None = None) -> list[subprocess.CompletedProcess]:
    """``omnijudge <argv>`` as ``world`` launcher ranks (:func:`launch`), run to their end."""
    return finish(launch(argv, world, env))


def _ok(results: list[subprocess.CompletedProcess], sharded: bool = False) -> None:
    """Every rank exited 0; ``sharded``: rank 1 scored a shard and stopped for rank 0 to merge."""
    for rank, r in enumerate(results):
        assert r.returncode == 0, f"rank {rank}: exit {r.returncode}\n{r.stderr[-3000:]}"
    assert not sharded or "rank 1 of 2: its shard is scored" in results[1].stderr, results[1].stderr[-3000:]


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, by path relative to it."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}




def _named(x) -> bool:
    return isinstance(x, str) or isinstance(x, dict) and "id" in x


def _unordered(v):
    """``v`` with every list of items (names, or records with an ``id``, e.g. cast's ``no_speech``)
    sorted: such lists follow the rows file's order, which the merge makes rank by rank (one
    process: the work's order)."""
    if isinstance(v, dict):
        return {k: _unordered(x) for k, x in v.items()}
    if isinstance(v, list):
        v = [_unordered(x) for x in v]
        return sorted(v, key=lambda x: json.dumps(x, sort_keys=True)) if all(_named(x) for x in v) else v
    return v


def _same(a, b, where) -> None:
    """Parsed JSON equal, numbers to 1e-5 (a batch of other items pads a clip otherwise, which moves
    its float32 result in the last bits), lists of items in any order (:func:`_unordered`)."""
    _assert_close(_unordered(a), _unordered(b), where)


def _without(value, drop: tuple[str, ...]):
    """``value`` (parsed JSON) without the keys starting with a name of ``drop``, at any depth."""
    if isinstance(value, dict):
        return {k: _without(v, drop) for k, v in value.items() if not k.startswith(drop)}
    return [_without(v, drop) for v in value] if isinstance(value, list) else value


def _lines(data: bytes, drop: tuple[str, ...]) -> list[str]:
    return [json.dumps(_without(json.loads(x), drop)) for x in data.decode().splitlines()]


def check_sharded_equals_one(argv: list, tmp_path: Path, key, drop: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Run ``argv`` (``{out}`` in an argument: a fresh folder) as one process and as 2 ranks and
    compare every file they wrote: rows files as rows (``key`` per row: the merge appends the
    parts rank by rank, so the order differs; numbers to 1e-5, see :func:`_same`), JSON parsed
    (:func:`_same`), both without the fields named in ``drop`` (wall times; no other field of any of
    these files differs between runs), every other file (tables, figures) byte for byte. Then a
    second 2-rank launch must leave the 2-rank folder as it was. Returns that folder's files."""
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
    single = launch([str(a).replace("{out}", str(one)) for a in argv], world=1)  # beside the ranks: less wall time
    _ok(finish(launch([str(a).replace("{out}", str(two)) for a in argv])), sharded=True)
    _ok(finish(single))
    got, want = _files(two), _files(one)
    assert got and set(got) == set(want), sorted(set(got) ^ set(want))
    assert not [n for n in got if any(m in n for m in (".part-", ".done", ".lock", ".tmp"))], sorted(got)
    for name, data in want.items():
        if name.endswith(".jsonl"):
            assert_same_rows(_lines(got[name], drop), _lines(data, drop), key=key)
        elif name.endswith(".json"):
            _same(_without(json.loads(got[name]), drop), _without(json.loads(data), drop), name)
        else:
            assert got[name] == data, name
    _ok(run_ranks([str(a).replace("{out}", str(two)) for a in argv]), sharded=True)
    assert _files(two) == got  # a finished output: nothing scored, nothing rewritten
    return got


# ---- the scorers ----------------------------------------------------------------------------------


def _wavs(folder: Path, names: list[str], seconds: float = 1.2) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for k, name in enumerate(names):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        sf.write(folder / name, speechlike(seconds + 0.1 * k, seed=k), 16000)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _toy_corpus(root: Path, n: int = 3) -> Path:
    from evaluators.cli import main

    assert main(["synth", "toy", "--out", str(root / "corpus"), "--n-train", str(n), "--n-test", str(n)]) == 0
    return root / "corpus"


def test_toy(toy, tmp_path):
    _toy_corpus(tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text((tmp_path / "corpus" / "items.jsonl").read_text() + '{"id": "gone", "level": "quiet"}\n')
    check_sharded_equals_one(["score", "toy", "--judge", "toy-loudness", "--base", "tiny", "--items", items,
                              "--outputs", tmp_path / "corpus" / "clips", "--num-workers", "0", "--batch-size", "2",
                              "--device", "cpu", "--dtype", "float32", "--out", "{out}"], tmp_path,
                             key=lambda r: r["id"])


def test_a_rank_killed_mid_run_resumes_to_the_one_process_output(toy, tmp_path):
    _toy_corpus(tmp_path, n=5)  # 10 items: rank 1 scores 5, fsynced per pool of 4 (batch size 1)
    argv = ["score", "toy", "--judge", "toy-loudness", "--base", "tiny", "--items", tmp_path / "corpus" / "items.jsonl",
            "--outputs", tmp_path / "corpus" / "clips", "--num-workers", "0", "--batch-size", "1",
            "--device", "cpu", "--dtype", "float32"]
    out = tmp_path / "two"
    # rank 1 dies; rank 0, waiting for its marker in vain, is ended as a launcher ends it
    killed = finish(launch([*argv, "--out", out], env={1: {"KILL_PART": "1"}}))[1]
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    part = out / "predictions.jsonl.part-00001-of-00002"
    assert len(part.read_text().splitlines()) == 4 and not part.with_name(part.name + ".done").exists()
    single = launch([*argv, "--out", tmp_path / "one"], world=1)
    _ok(run_ranks([*argv, "--out", out]), sharded=True)
    _ok(finish(single))
    got, want = _files(out), _files(tmp_path / "one")
    assert set(got) == set(want)
    assert_same_rows(got["predictions.jsonl"].decode().splitlines(), want["predictions.jsonl"].decode().splitlines(),
                     key=lambda r: r["id"])
    _assert_close(json.loads(got["metrics.json"]), json.loads(want["metrics.json"]), "metrics.json")


def test_cast(tmp_path):
    from evaluators.backbones import AudioLLM
    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.word_tagger import WordTaggerJudge

    llm = AudioLLM.tiny()
    judge = WordTaggerJudge(llm, WordTaggerJudge.new_head(llm), HeadPrompt("Mark stressed words.")).save_pretrained(
        tmp_path / "judge")
    items = [{"id": f"i{k}", "pair_id": f"p{k // 2}", "side": "AB"[k % 2], "context": "Ctx.",
              "sentence": "I never said she stole it.", "stressed_word": ["never", "she"][k % 2], "mode": "none"}
             for k in range(6)]
    _wavs(tmp_path / "outs" / "none", [f"i{k}.wav" for k in range(5)])  # i5: no output, its error row
    check_sharded_equals_one(["score", "cast", "--items", _jsonl(tmp_path / "items.jsonl", items), "--outputs",
                              tmp_path / "outs", "--judge", judge, "--num-workers", "0", "--n-resamples", "50",
                              "--out", "{out}"],
                             tmp_path, key=lambda r: (r["mode"], r["id"]))


def test_pairs(tiny_omni, tmp_path):
    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.scalar_reward import ScalarRewardJudge
    from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus

    build_pairs_corpus(PairsCorpusConfig(n_voices=3, test_voices=1, sentences_per_voice=2, max_seconds=1.0),
                       tmp_path / "corpus")
    judge = ScalarRewardJudge(tiny_omni, ScalarRewardJudge.new_head(tiny_omni, seed=1),
                              HeadPrompt("Score it.", "Text: {text}", "You judge speech.", "t1"), name="tiny-reward")
    folder = judge.save_pretrained(tmp_path / "judge")
    got = check_sharded_equals_one(["score", "pairs", "--judge", folder, "--pairs", tmp_path / "corpus" / "pairs.jsonl",
                                    "--batch-size", "3", "--num-workers", "0", "--out", "{out}/verdicts.jsonl",
                                    "--report", "{out}/report.json"], tmp_path, key=lambda r: r["id"])
    assert set(got) == {"verdicts.jsonl", "report.json"}


def test_nvv_verifier_a_rater_and_a_measure(tmp_path):
    """One command: the verifier's rows (predictions/), a Likert rater's (likert/quality/) and DNSMOS's
    (measures/dnsmos/), each file sharded."""
    from evaluators.backbones import AudioLLM
    from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
    from evaluators.judges.verbalizer import VerbalizerJudge

    llm = AudioLLM.tiny()
    judge = NvvVerifierJudge(llm, NvvVerifierJudge.new_head(llm)).save_pretrained(tmp_path / "judge")
    rater = VerbalizerJudge.from_preset("likert-quality", base="tiny").save_pretrained(tmp_path / "rater")
    items = [{"id": f"en_{k}", "text": "Well I do not know what to say.", "nvv_list": ["laughing"],
              "text_with_nvv": "Well <laughing> I do not know what to say."} for k in range(6)]
    words = [[w, 0.1 * i, 0.1 * i + 0.08] for i, w in enumerate("Well I do not know what to say.".split())]
    _wavs(tmp_path / "outs", [f"en_{k}.wav" for k in range(5)], seconds=1.5)  # en_5: no output
    _jsonl(tmp_path / "outs" / "manifest.jsonl",
           [{"id": f"en_{k}", "audio": f"en_{k}.wav", "word_timestamps": words} for k in range(5)])
    # a measure's row records its clip's wall time ("seconds"), table3.json their mean per measure
    # ("seconds_per_clip_dnsmos"): the only fields that differ from run to run
    got = check_sharded_equals_one(["score", "nvv", "--items", _jsonl(tmp_path / "items.jsonl", items), "--outputs",
                                    tmp_path / "outs", "--judge", judge, "--raters", f"quality={rater}", "--measure",
                                    "dnsmos", "--num-workers", "0", "--system", "mine", "--out", "{out}"],
                                   tmp_path, key=lambda r: r["id"], drop=("seconds",))
    assert {"predictions/mine.jsonl", "likert/quality/mine.jsonl", "measures/dnsmos/mine.jsonl"} <= set(got)


@pytest.mark.slow  # the heaviest case (~35-70 s on 2 busy cores: a synthetic corpus, then a 3-task judge x 5 runs)
def test_instructttseval(tmp_path):
    from trainer.benchmarks.instructttseval.corpus import (InstructCorpusConfig, build_instruct_corpus,
                                                           write_benchmark_items)

    corpus = build_instruct_corpus(InstructCorpusConfig(seed=0, speakers=(1, 1, 1), clips_per_speaker=2),
                                   tmp_path / "corpus")
    bench = write_benchmark_items(corpus, tmp_path / "bench")
    check_sharded_equals_one(["score", "instructttseval", "--items", bench["items_en"], "--outputs", bench["outputs"],
                              "--judge", "instruct-follow", "--base", "tiny", "--batch-size", "2",
                              "--num-workers", "0", "--out", "{out}"], tmp_path, key=lambda r: (r["id"], r.get("task")))


def test_speecheditbench(tmp_path):
    from trainer.benchmarks.speecheditbench.corpus import SYSTEM, build_edited_corpus

    build_edited_corpus(tmp_path / "corpus", seed=0)
    outputs = tmp_path / "corpus" / "outputs" / SYSTEM
    check_sharded_equals_one(["score", "speecheditbench", "--items", tmp_path / "corpus" / "data", "--outputs", outputs,
                              "--manifest", outputs / "manifest.jsonl", "--tasks", "content", "style",
                              "--num-workers", "0", "--out", "{out}"], tmp_path, key=lambda r: r["id"])
