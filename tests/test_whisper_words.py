"""Golden values of the Whisper word-timing pieces (evaluators/measures/whisper_words.py): the DTW
path against the scalar recurrence, and token-to-word grouping at spaces, characters and punctuation."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.measures.whisper_words import dtw_path, group_words


def test_dtw_path_matches_the_scalar_recurrence():
    def scalar(x):
        n, m = x.shape
        acc = np.full((n + 1, m + 1), np.inf, dtype=np.float32)
        acc[0, 0] = 0
        trace = -np.ones((n + 1, m + 1))
        for j in range(1, m + 1):
            for i in range(1, n + 1):
                c0, c1, c2 = acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1]
                c, t = (c0, 0) if c0 < c1 and c0 < c2 else (c1, 1) if c1 < c0 and c1 < c2 else (c2, 2)
                acc[i, j], trace[i, j] = x[i - 1, j - 1] + c, t
        trace[0, :], trace[:, 0] = 2, 1
        path, i, j = [], n, m
        while i > 0 or j > 0:
            path.append((i - 1, j - 1))
            i, j = (i - 1, j - 1) if trace[i, j] == 0 else (i - 1, j) if trace[i, j] == 1 else (i, j - 1)
        return path[::-1]

    rng = np.random.default_rng(0)
    for shape in [(1, 1), (1, 5), (5, 1), (4, 9), (9, 4), (7, 13)]:
        for x in (rng.standard_normal(shape), np.zeros(shape), rng.integers(0, 2, shape).astype(float)):
            rows, cols = dtw_path(x)
            assert list(zip(rows.tolist(), cols.tolist())) == scalar(x)
    rows, cols = dtw_path(np.array([[0.0, 9, 9, 9], [9, 0, 0, 9], [9, 9, 9, 0]]))
    assert rows.tolist() == [0, 1, 1, 2] and cols.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="non-empty"):
        dtw_path(np.zeros((0, 3)))


def test_words_group_tokens_at_spaces_characters_and_punctuation():
    spans = [[0.0, 0.1], [0.1, 0.2], [0.2, 0.25], [0.25, 0.4], [0.4, 0.5], [0.5, 0.55]]
    words = group_words([b" Hel", b"lo", b",", b" wor", b"ld", b"."], spans, "en")
    assert words == [{"word": "Hello,", "start": 0.0, "end": 0.25}, {"word": "world.", "start": 0.25, "end": 0.55}]
    quoted = group_words([b" (", b"yes", b")", b" no"], spans[:4], "en")
    assert [w["word"] for w in quoted] == ["(yes)", "no"] and quoted[0]["start"] == 0.0
    # 今 split over two byte tokens, then 天 and 。: words are whole characters, 。 joins 天
    zh = group_words([b"\xe4\xbb", b"\x8a", "天".encode(), "。".encode()], spans[:4], "zh")
    assert zh == [{"word": "今", "start": 0.0, "end": 0.2}, {"word": "天。", "start": 0.2, "end": 0.4}]
    assert [w["word"] for w in group_words([b"\xff", b" ok"], spans[:2], "en")] == ["\ufffd", "ok"]
    assert group_words([b" ", b" "], spans[:2], "en") == []
    with pytest.raises(ValueError, match="2 tokens but 1 token spans"):
        group_words([b"a", b"b"], spans[:1], "en")
