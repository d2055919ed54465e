"""Word timestamps -> one span per transcript word, and the aligned head's span arithmetic (golden values)."""

import pytest
import torch

from evaluators.word_alignment import transcript_word_times
from evaluators.judges.slot_head import WordHead, WordHeadConfig, span_token_ranges


def test_exact_match_is_copied():
    timed = [("Hello,", 0.0, 0.5), ("world.", 0.6, 1.0)]
    assert transcript_word_times(timed, ["hello", "World"]) == [[0.0, 0.5], [0.6, 1.0]]


def test_missed_word_is_interpolated_between_neighbours():
    timed = [("the", 0.0, 0.2), ("cat", 0.5, 0.8)]
    assert transcript_word_times(timed, ["the", "big", "cat"]) == [[0.0, 0.2], [0.2, 0.5], [0.5, 0.8]]


def test_missed_last_word_runs_to_the_clip_end():
    timed = [("a", 0.0, 0.2), ("b", 0.2, 0.4)]
    out = transcript_word_times(timed, ["a", "b", "c", "d"], duration_s=1.0)
    assert out[2] == [0.4, pytest.approx(0.7)] and out[3] == [pytest.approx(0.7), 1.0]


def test_chinese_chunks_split_into_characters():
    timed = [("今天", 0.0, 0.4), ("很好。", 0.5, 0.9)]
    out = transcript_word_times(timed, ["今天", "很", "好"])
    assert out[0] == [0.0, 0.4]
    assert out[1] == pytest.approx([0.5, 0.7]) and out[2] == pytest.approx([0.7, 0.9])


def test_nothing_recognised_spreads_words_evenly():
    assert transcript_word_times([("zzz", 0.0, 1.0)], ["a", "b"]) == [[0.0, 0.5], [0.5, 1.0]]
    assert transcript_word_times([], ["a", "b"], duration_s=2.0) == [[0.0, 1.0], [1.0, 2.0]]
    with pytest.raises(ValueError, match="no recognised words"):
        transcript_word_times([], ["a"])


def test_punctuation_only_word_gets_a_zero_length_span():
    out = transcript_word_times([("hi", 0.0, 0.3), ("there", 0.4, 0.8)], ["hi", "—", "there"])
    assert out == [[0.0, 0.3], [0.3, 0.3], [0.4, 0.8]]


def test_span_token_ranges_golden():
    # 25 tokens/s: [0, 0.1] s -> tokens 0..2 (ceil 2.5 = 3); a zero-length span at 0.1 s -> token 2;
    # a span past the clip end is clipped to the last token.
    out = span_token_ranges([[0.0, 0.1], [0.1, 0.1], [0.5, 9.0]], n_audio_tokens=20)
    assert out.tolist() == [[0, 3], [2, 3], [12, 20]]
    with pytest.raises(ValueError, match="end >= start"):
        span_token_ranges([[0.5, 0.4]], 10)


def test_aligned_head_pools_only_the_words_span():
    torch.manual_seed(0)
    head = WordHead(8, WordHeadConfig(n_outputs=1, mode="aligned", width=16, mixer_layers=0)).eval()
    hidden = torch.randn(1, 12, 8)
    batch = {"slot_index": torch.tensor([[10, 11]]), "slot_mask": torch.tensor([[True, True]]),
             "span_tokens": torch.tensor([[[2, 4], [4, 8]]]), "span_seconds": torch.tensor([[0.1, 0.2]]),
             "audio_range": torch.tensor([[2, 8]])}
    base = head(hidden, batch)
    moved = hidden.clone()
    moved[0, 0:2] += 5.0  # outside the audio: no effect
    assert torch.allclose(head(moved, batch), base)
    moved = hidden.clone()
    moved[0, 5] += 5.0  # inside word 2's span only: word 1 changes through the clip mean, word 2 directly
    changed = (head(moved, batch) - base).abs()[0, :, 0]
    assert changed[1] > 1e-4


def test_head_config_is_validated():
    with pytest.raises(ValueError, match="mode"):
        WordHeadConfig(mode="attention")
    with pytest.raises(ValueError, match="width"):
        WordHeadConfig(width=10)
