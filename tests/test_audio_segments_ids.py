"""Tests for evaluators.audio_io's long-clip segments (``prepare_segments``) and item-id
sanitising (``sanitize_item_id``); reading audio files is tests/test_audio_io.py."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from evaluators.audio_io import LONG_CLIP_POLICIES, LongClipWarning, prepare_segments, sanitize_item_id

# ---- long clips -------------------------------------------------------------------------------


def test_short_clip_one_segment():
    wave = np.zeros(16000 * 5, dtype=np.float32)
    for policy in LONG_CLIP_POLICIES:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            segs = prepare_segments(wave, policy=policy)
        assert len(segs) == 1
        assert segs[0][0].shape == (80000,) and segs[0][1] == pytest.approx(5.0)


def test_exactly_max_is_not_long():
    wave = np.zeros(16000 * 30, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(prepare_segments(wave, "truncate")) == 1


def test_truncate_warns():
    wave = np.arange(16000 * 45, dtype=np.float32)
    with pytest.warns(LongClipWarning, match=r"45\.00 s.*truncated"):
        segs = prepare_segments(wave, policy="truncate")
    assert len(segs) == 1
    seg, w = segs[0]
    assert seg.shape == (16000 * 30,) and w == pytest.approx(30.0)
    np.testing.assert_array_equal(seg, wave[: 16000 * 30])


@pytest.mark.parametrize("seconds", [30.5, 60.0, 75.25, 90.01])
def test_windows_weights_sum_to_duration(seconds):
    n = int(round(16000 * seconds))
    wave = np.arange(n, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        segs = prepare_segments(wave, policy="windows")
    assert sum(w for _, w in segs) == pytest.approx(n / 16000)
    assert all(s.shape[0] <= 16000 * 30 for s, _ in segs)
    assert all(s.shape[0] / 16000 == pytest.approx(w) for s, w in segs)
    # Windows are consecutive and cover the clip exactly (short tails kept, see docstring).
    np.testing.assert_array_equal(np.concatenate([s for s, _ in segs]), wave)


def test_windows_custom_length():
    segs = prepare_segments(np.zeros(1000), policy="windows", max_seconds=0.25, sr=1000)
    assert [s.shape[0] for s, _ in segs] == [250, 250, 250, 250]


def test_prepare_segments_bad_args():
    with pytest.raises(ValueError):
        prepare_segments(np.zeros(10), policy="middle")
    with pytest.raises(ValueError):
        prepare_segments(np.zeros(0))
    with pytest.raises(ValueError):
        prepare_segments(np.zeros((2, 10)))
    with pytest.raises(ValueError):
        prepare_segments(np.zeros(10), max_seconds=0)


# ---- item ids ---------------------------------------------------------------------------------

_SAFE = re.compile(r"^[A-Za-z0-9._-]+$")


def _assert_safe(s: str):
    assert _SAFE.match(s), s
    assert ".." not in s and not s.startswith(".")
    assert "/" not in s and "\\" not in s
    assert 0 < len(s) <= 128


def test_sanitize_keeps_safe_ids():
    for raw in ["clip_0001", "spk-3.utt-12", "A.B_c-9"]:
        assert sanitize_item_id(raw) == raw


@pytest.mark.parametrize(
    "raw",
    ["../../etc/passwd", "a/b", "a\\b", "..", ".hidden", "x\x00y", "line\nbreak", "tab\there",
     "普通话-001", "café", "emoji🙂", "CON", "nul.txt", "-", "...", "  spaced id  ", "x" * 500],
)
def test_sanitize_unsafe_ids(raw):
    out = sanitize_item_id(raw)
    _assert_safe(out)
    assert out != raw


def test_sanitize_examples():
    assert sanitize_item_id("../../etc/passwd").startswith("etc_passwd-")
    assert sanitize_item_id("a/b").startswith("a_b-")


def test_sanitize_distinct():
    raws = ["a/b", "a_b", "a\\b", "a:b", "普通话", "粤语", "日本語", "../a", "a", ".a", "CON", "con",
            "x" * 200, "x" * 201, "x" * 200 + "y"]
    outs = [sanitize_item_id(r) for r in raws]
    assert len(set(outs)) == len(raws)
    for o in outs:
        _assert_safe(o)


def test_sanitize_deterministic_and_idempotent_for_safe():
    raw = "語音/../x"
    assert sanitize_item_id(raw) == sanitize_item_id(raw)
    once = sanitize_item_id(raw)
    assert sanitize_item_id(once) == once


def test_sanitize_long_safe_id_truncated():
    out = sanitize_item_id("a" * 128)
    assert out == "a" * 128
    out = sanitize_item_id("a" * 129)
    assert len(out) == 128 and out != "a" * 129


@pytest.mark.parametrize("raw", ["", "   ", "\n"])
def test_sanitize_empty(raw):
    with pytest.raises(ValueError):
        sanitize_item_id(raw)


def test_sanitize_type():
    with pytest.raises(TypeError):
        sanitize_item_id(123)  # type: ignore[arg-type]
