"""The shared Whisper runner's one-line refusals: long clips (or their truncation), bad clips and
arguments, missing or broken checkpoint folders (the tiny hub-layout checkpoint and the results it
gives: tests/test_whisper_runner.py)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from test_whisper_runner import (  # noqa: F401 (fixtures)
    MAX_NEW_TOKENS,
    _sibling,
    _single_thread,
    asr,
    clips,
    speechlike,
    tiny_whisper,
)

from evaluators.measures.whisper import WhisperRunner


def test_long_clips_are_refused_or_truncated(asr, clips):
    long = speechlike(30.5, seed=9)
    with pytest.raises(ValueError, match=r"clip 1: 30\.50 s is longer than the 30 s window") as e:
        asr.transcribe([clips[0], long], "en")
    assert "\n" not in str(e.value) and "long_clips='truncate'" in str(e.value)
    [res] = _sibling(asr, long_clips="truncate").transcribe([long], "en")
    assert all(0.0 <= w["start"] <= w["end"] <= 30.0 for w in res.words)
    with pytest.raises(ValueError, match="long_clips"):
        _sibling(asr, long_clips="split")


def test_bad_clips_and_arguments_are_refused(asr, clips):
    assert asr.transcribe([], "en") == []
    for bad, why in ((np.zeros((2, 1600), np.float32), "mono"), (np.zeros(0, np.float32), "empty"),
                     (np.full(1600, np.nan, np.float32), "NaN")):
        with pytest.raises(ValueError, match=f"clip 1: .*{why}"):
            asr.transcribe([clips[0], bad], "en")
    with pytest.raises(ValueError, match="2 clips but 1 languages"):
        asr.transcribe(clips[:2], ["en"])
    with pytest.raises(ValueError, match="batch_size"):
        _sibling(asr, batch_size=0)
    with pytest.raises(ValueError, match="clip 0: 40 tokens and the prompt exceed the decoder's 32 positions"):
        asr.align(clips[:1], [[100] * 40], "en")
    # a clip of a few samples still gets word times inside it
    [tiny] = asr.transcribe([clips[0][:100]], "en")
    assert all(0.0 <= w["start"] <= w["end"] <= 100 / 16000 for w in tiny.words)


def test_missing_folder_or_file_is_a_one_line_error(tiny_whisper, asr, clips, tmp_path):
    def refused(folder, error, *names):
        with pytest.raises(error) as e:
            WhisperRunner.from_pretrained(folder)
        message = str(e.value)
        assert "\n" not in message and str(folder) in message and all(n in message for n in names), message

    refused(tmp_path / "nowhere", FileNotFoundError, "no such Whisper checkpoint folder")
    for removed, named in ((["generation_config.json"], "generation_config.json"),
                           (["model.safetensors"], "model.safetensors"),
                           (["preprocessor_config.json"], "preprocessor_config.json"),
                           (["tokenizer.json", "vocab.json"], "tokenizer.json")):
        folder = tmp_path / f"without_{removed[0]}"
        shutil.copytree(tiny_whisper, folder)
        for name in removed:
            (folder / name).unlink()
        refused(folder, FileNotFoundError, named)
    # the slow tokenizer files alone are enough, and give the same transcripts
    slow = tmp_path / "slow_tokenizer"
    shutil.copytree(tiny_whisper, slow)
    (slow / "tokenizer.json").unlink()
    from_slow = WhisperRunner.from_pretrained(slow, max_new_tokens=MAX_NEW_TOKENS)
    assert from_slow.transcribe(clips[1:2], "en") == asr.transcribe(clips[1:2], "en")
    other = tmp_path / "other_model"
    shutil.copytree(tiny_whisper, other)
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "model_type": "wav2vec2"}))
    refused(other, ValueError, "'wav2vec2'")
    no_heads = tmp_path / "no_alignment_heads"
    shutil.copytree(tiny_whisper, no_heads)
    gen = json.loads((no_heads / "generation_config.json").read_text())
    del gen["alignment_heads"]
    (no_heads / "generation_config.json").write_text(json.dumps(gen))
    refused(no_heads, ValueError, "alignment_heads")
