"""UTMOS22 and source-output speaker similarity (the public per-task diagnostics): the real loading
code on tiny stand-ins saved in the real layouts (the demo's Lightning ``epoch=3-step=7459.ckpt``
and the converted ``utmos_state_dict.pt``), and the similarity by hand with a stand-in embedder."""

import functools

import numpy as np
import pytest
import torch

from evaluators.benchmarks.speecheditbench.providers.diagnostics import Utmos22, source_output_similarity

TINY_W2V = {"encoder_layers": 1, "encoder_ffn_embed_dim": 16, "conv_pos": 16, "conv_pos_groups": 16,
            "conv_feature_layers": "[(8, 10, 5)] + [(8, 3, 2)] * 4 + [(8, 2, 2)] + [(8, 2, 2)]"}


@pytest.fixture
def tiny_utmos(monkeypatch):
    """UTMOS22's own modules with a 1-layer, 8-channel wav2vec 2.0 (the model keeps its 768-wide
    encoder output, listener table, BLSTM and projection): the same state-dict keys, small shapes."""
    import utmos_pytorch.utmos_torch as U
    from utmos_pytorch.wav2vec2 import Wav2Vec2Config

    monkeypatch.setattr(U, "Wav2Vec2Config", functools.partial(Wav2Vec2Config, **TINY_W2V))
    torch.manual_seed(0)
    return U.UTMOSModel().eval()


def _wave(seed, seconds=0.5):
    t = np.arange(int(16_000 * seconds)) / 16_000
    return (0.3 * np.sin(2 * np.pi * (120 + 30 * seed) * t)).astype(np.float32)


def test_both_checkpoint_layouts_load_and_score_the_same(tiny_utmos, tmp_path):
    state = tiny_utmos.state_dict()
    converted = tmp_path / "converted"
    converted.mkdir()
    torch.save(state, converted / "utmos_state_dict.pt")
    demo = tmp_path / "UTMOS-demo"
    demo.mkdir()
    # the demo's Lightning checkpoint: weights under "state_dict", with a key the fairseq model has and ours not
    torch.save({"state_dict": {**state, "feature_extractors.0.ssl_model.mask_emb": torch.zeros(768)},
                "epoch": 3, "global_step": 7459}, demo / "epoch=3-step=7459.ckpt")
    a, b = Utmos22.from_pretrained(converted), Utmos22.from_pretrained(demo / "epoch=3-step=7459.ckpt")
    assert a.name == "utmos22:utmos_state_dict.pt" and b.name == "utmos22:epoch=3-step=7459.ckpt"
    waves = [_wave(0), _wave(1, 0.3)]
    sa, sb = a.score(waves), b.score(waves)
    assert sa == sb and len(sa) == 2 and all(np.isfinite(sa))
    # the demo's formula on the same modules: mean over frames x 2 + 3 (domain 0, listener 288)
    with torch.inference_mode():
        x = torch.from_numpy(waves[0]).view(1, 1, -1)
        frames = a.model(x, domains=torch.zeros(1, dtype=torch.int), judge_id=torch.full((1,), 288, dtype=torch.int))
    assert sa[0] == round(float(frames.mean() * 2 + 3), 4)
    # one clip at a time: a clip's score does not depend on the others
    assert a.score([waves[1]]) == [sa[1]]


def test_a_bad_checkpoint_is_one_line_naming_the_file(tiny_utmos, tmp_path):
    with pytest.raises(OSError, match="no UTMOS22 checkpoint"):
        Utmos22.from_pretrained(tmp_path)
    partial = {k: v for k, v in tiny_utmos.state_dict().items() if not k.startswith("output_layers.1.")}
    torch.save(partial, tmp_path / "utmos_state_dict.pt")
    with pytest.raises(OSError, match=r"utmos_state_dict.pt: \d+ UTMOS22 weights missing, e.g. 'output_layers.1"):
        Utmos22.from_pretrained(tmp_path)
    (tmp_path / "utmos_state_dict.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(OSError, match="not a readable UTMOS22 checkpoint"):
        Utmos22.from_pretrained(tmp_path / "utmos_state_dict.pt")


class _Embedder:
    """A stand-in speaker embedder: a clip's embedding is (mean, max, first sample)."""

    name = "stand-in"

    def embed(self, waves):
        return np.stack([[float(np.mean(w)), float(np.max(w)), float(w[0])] for w in waves])


def test_source_output_similarity_by_hand():
    src = [np.array([1.0, 1.0], np.float32), np.array([1.0, -1.0], np.float32)]
    out = [np.array([1.0, 1.0], np.float32), np.array([0.0, 1.0], np.float32)]
    # pair 1: (1, 1, 1) vs (1, 1, 1) -> 1; pair 2: (0, 1, 1) vs (0.5, 1, 0) -> 1 / (sqrt 2 * sqrt 1.25)
    sims = source_output_similarity(_Embedder(), src, out)
    assert sims == [1.0, round(1 / (np.sqrt(2) * np.sqrt(1.25)), 4)]
    assert source_output_similarity(_Embedder(), [], []) == []
    with pytest.raises(ValueError, match="1 sources for 2 outputs"):
        source_output_similarity(_Embedder(), src[:1], out)
