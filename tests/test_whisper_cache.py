"""The decode cache's model fingerprint (evaluators/measures/whisper_cache.py)."""

from __future__ import annotations

import gc

import torch

from evaluators.measures import whisper_cache


def test_fingerprint_follows_the_weights_and_is_dropped_with_the_model():
    torch.manual_seed(0)
    a, b = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    fa, fb = whisper_cache.weights_sha256(a), whisper_cache.weights_sha256(b)
    assert fa != fb and len(fa) == 64
    c = torch.nn.Linear(4, 3)
    c.load_state_dict(a.state_dict())
    assert whisper_cache.weights_sha256(c) == fa  # same weights, same identity
    before = len(whisper_cache._fingerprints)
    del a, b, c
    gc.collect()
    # a freed model's entry goes with it: a later model at its address cannot read its fingerprint
    assert len(whisper_cache._fingerprints) == before - 3
