import json
import os

# The suite runs in 2 pytest-xdist processes on 2 cores (pyproject addopts): one math thread per
# process, and the same for the child processes tests start (they inherit the environment), since
# two processes spinning 2 OpenMP threads each on 2 cores run many times slower, not 2x.
# (Set in the workers only: the controlling process's environment is what they start from.)
# Each worker also keeps its own numba cache: two processes compiling one of librosa's cached
# gufuncs at once can leave a mismatched pair of cache files that segfaults the next reader
# (numba issue 10128; seen on a fresh install, where nothing is cached yet).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
_THREADS = 1 if _WORKER else 2
if _WORKER:
    import hashlib
    import tempfile

    _checkout = hashlib.sha1(os.path.dirname(os.path.abspath(__file__)).encode()).hexdigest()[:8]
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), f"omnijudge-numba-{_checkout}-{_WORKER}")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import soundfile as sf  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(_THREADS)


@pytest.fixture(scope="session")
def tiny_omni():
    from evaluators.backbones import AudioLLM

    return AudioLLM.tiny("qwen2_5_omni", seed=0)


def speechlike(seconds: float, seed: int = 0, sr: int = 16000) -> np.ndarray:
    """A deterministic voiced-ish test waveform (harmonics + noise), float32 in [-1, 1]."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    f0 = 110 + 30 * rng.random()
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))
    x = x + 0.05 * rng.standard_normal(len(t))
    return (0.3 * x / np.abs(x).max()).astype(np.float32)


@pytest.fixture
def audio_folder(tmp_path):
    """Five good clips in two systems, with varied formats and rates."""
    root = tmp_path / "outputs"
    for i, (system, sr, ext) in enumerate([("sysA", 16000, "wav"), ("sysA", 44100, "flac"), ("sysB", 22050, "ogg"),
                                           ("sysB", 8000, "wav"), ("sysB", 48000, "wav")]):
        (root / system).mkdir(parents=True, exist_ok=True)
        wave = speechlike(0.8 + 0.4 * i, seed=i, sr=sr)
        sf.write(root / system / f"clip{i}.{ext}", np.stack([wave, wave], 1) if i == 4 else wave, sr)
    return root


@pytest.fixture(scope="session")
def stand_in(tmp_path_factory):
    """``stand_in(backbone)``: the tiny hub-layout checkpoint of ``backbone`` with the real Qwen
    vocabulary (built once per session; see ``evaluators.backbones.stand_in``)."""
    from evaluators.backbones.stand_in import write_stand_in

    built: dict[str, object] = {}

    def get(backbone: str):
        if backbone not in built:
            built[backbone] = write_stand_in(backbone, tmp_path_factory.mktemp(f"hub_{backbone}"), lm_head_std=0.15)
        return built[backbone]

    return get


_KILL_AFTER_FIRST_FSYNC = """
import os, signal, sys
real = os.fsync
def fsync_then_die(fd):
    real(fd)
    if os.readlink(f"/proc/self/fd/{fd}").endswith(".jsonl"):  # rows, not a library's cache file
        os.kill(os.getpid(), signal.SIGKILL)
os.fsync = fsync_then_die
from evaluators.cli import main
main(sys.argv[1:])
"""


def run_killed_after_first_flush(argv: list[str]) -> int:
    """Run ``omnijudge <argv>`` in a child process that SIGKILLs itself right after its first
    fsync of a JSONL file (its first durable rows); returns the exit code (-9 when the kill
    landed), failing with the child's stderr if it exited any other way."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _KILL_AFTER_FIRST_FSYNC, *argv], timeout=600,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert done.returncode == -9, f"exit {done.returncode}: {done.stderr[-3000:]}"
    return done.returncode


def assert_same_rows(got_lines: list[str], want_lines: list[str], key) -> None:
    """Two JSONL row sets are the same rows: one per key each, equal fields, numbers equal to
    1e-5 (a row computed in another process may differ in the last float32 bits, which
    can flip the last digit of a rounded field)."""
    got = [json.loads(line) for line in got_lines]
    want = [json.loads(line) for line in want_lines]
    assert len({key(r) for r in got}) == len(got), "duplicate rows"
    by_key = {key(r): r for r in want}
    assert {key(r) for r in got} == set(by_key), "rows lost or added"
    for r in got:
        _assert_close(r, by_key[key(r)], key(r))


def _assert_close(a, b, where) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _assert_close(a[k], b[k], (where, k))
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), where
        for x, y in zip(a, b):
            _assert_close(x, y, where)
    elif isinstance(a, float) or isinstance(b, float):
        assert abs(a - b) <= 1e-5, (where, a, b)
    else:
        assert a == b, (where, a, b)
