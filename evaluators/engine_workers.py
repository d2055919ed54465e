"""The engine's worker processes: how many data-loader workers a run starts, how they die with
the scoring process, how the model's torch threads share the cores with them, and the header-only
clip length the batch plan reads (``evaluators/engine.py``)."""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path

import soundfile as sf
import torch

log = logging.getLogger(__name__)


def default_num_workers() -> int:
    """Data-loader workers when none are asked for: this process's share of the cores (divided
    among the launcher's processes on this node) less one for the model, at most 8."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    per_process = cores // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    return max(0, min(8, per_process - 1))


def workers_for(num_workers: int, n_batches: int) -> int:
    """The data-loader processes a run starts: at most one per batch (more would sit idle, each
    holding a copy of the dataset) and at most two per core this process may use; said on stderr
    when fewer than asked for."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    n = max(0, min(num_workers, n_batches, 2 * cores))
    if n < num_workers:
        log.warning("--num-workers %d: starting %d (%d batches of work, %d cores)", num_workers, n, n_batches, cores)
    return n


def die_with_parent(parent_pid: int, _worker_id: int) -> None:
    """Data-loader ``worker_init_fn``: the worker is killed when the scoring process dies (Linux
    ``PR_SET_PDEATHSIG``). A worker orphaned by a SIGKILLed parent otherwise blocks forever
    flushing its result queue, holding the parent's stdout/stderr open."""
    import ctypes
    import signal

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the DataLoader's own parent watchdog is all there is
        return
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(0)


def header_seconds(path: Path) -> float:
    """A file's duration from its header alone (0.0 when unreadable: its error comes later)."""
    try:
        info = sf.info(str(path))
        return info.frames / info.samplerate if info.samplerate > 0 else 0.0
    except Exception:  # any unreadable header: planned as shortest, its error row comes from prepare
        return 0.0


@contextmanager
def model_threads_beside_workers(num_workers: int, device: torch.device | str):
    """Within the block, the model's torch threads on a CPU get only the cores ``num_workers``
    data-loader processes leave (oversubscribed cores made the pipeline slower than the serial
    path, docs/performance.md "Scoring throughput on the CPU"); restored after."""
    threads = torch.get_num_threads()
    if num_workers and torch.device(device).type == "cpu":
        torch.set_num_threads(max(1, threads - num_workers))
    try:
        yield
    finally:
        torch.set_num_threads(threads)
