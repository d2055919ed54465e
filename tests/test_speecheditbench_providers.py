"""SpeechEditBench speaker and scene providers on tiny random checkpoints in the real on-disk
layouts (``config.json`` + safetensors + ``preprocessor_config.json``, written by
``save_pretrained`` and loaded back through ``from_pretrained``): shapes, determinism, batch
invariance, agreement with the stock transformers forward, the public grouping of AudioSet
scores, and the load errors."""

from __future__ import annotations

import json
import math
import shutil
import warnings

import numpy as np
import pytest
import torch
from conftest import speechlike
from transformers import (
    ASTConfig,
    ASTFeatureExtractor,
    ASTForAudioClassification,
    Wav2Vec2FeatureExtractor,
    WavLMConfig,
    WavLMForXVector,
    WavLMModel,
)

from evaluators.benchmarks.speecheditbench.providers.scene import (
    SCENE_GROUP_NAMES,
    SCENE_GROUPS,
    AudioSetScene,
    MissingSceneLabelWarning,
    SceneClassifier,
    aggregate_groups,
    group_label_indices,
)
from evaluators.benchmarks.speecheditbench.providers.speaker import SpeakerEmbedder, WavLMSpeaker, cosine

# The AST feature extractor's numpy log-mel path warns about its (real) 128-mel filterbank, and
# torch about the mask types WavLM's attention passes it; neither is this module's doing.
pytestmark = [pytest.mark.filterwarnings("ignore:At least one mel filter has all zero values:UserWarning"),
              pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask:UserWarning")]

#: Real AudioSet display names: some of each group's, plus classes outside every group.
AST_LABELS = ["Speech", "Music", "Singing", "Electronic music", "Crowd", "Hubbub, speech noise, speech babble",
              "Applause", "Vehicle", "Wind", "Bird", "Outside, urban or manmade", "Silence", "Dog"]
#: AST window in the tiny checkpoints, frames (the AudioSet checkpoints use 1024).
AST_FRAMES = 48
#: Clip lengths, s: below, near and above one tiny AST window (0.495 s); mixed for padding.
SECONDS = (0.4, 1.1, 0.7, 1.6, 0.47)


def _waves(seconds=SECONDS) -> list[np.ndarray]:
    return [speechlike(s, seed=i) for i, s in enumerate(seconds)]


def _wavlm_config(norm: str) -> WavLMConfig:
    """The real convolution stack, TDNN kernels and dilations; tiny widths. ``"group"`` is laid
    out like the base-size ``-sv`` checkpoints, ``"layer"`` like the large ones. A wide init
    gives embeddings of norm about 1 (at the default 0.02 they are about 1e-7, hiding errors)."""
    return WavLMConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                       conv_dim=(16,) * 7, feat_extract_norm=norm, do_stable_layer_norm=norm == "layer",
                       num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, num_buckets=32,
                       max_bucket_distance=100, tdnn_dim=(16, 16, 16, 16, 32), xvector_output_dim=16,
                       use_weighted_layer_sum=True, initializer_range=0.2)


def _wavlm_preprocessor() -> Wav2Vec2FeatureExtractor:
    return Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True,
                                    return_attention_mask=True)


def _write_ast(folder, labels, max_length=AST_FRAMES, fe_max_length=None):
    cfg = ASTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                    max_length=max_length, num_mel_bins=128, initializer_range=0.2,
                    id2label=dict(enumerate(labels)), label2id={name: i for i, name in enumerate(labels)})
    torch.manual_seed(1)
    ASTForAudioClassification(cfg).eval().save_pretrained(folder)
    ASTFeatureExtractor(max_length=fe_max_length or max_length, num_mel_bins=128).save_pretrained(folder)
    return folder


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """One intra-op thread while this module runs. These models are tiny: a second thread adds
    only synchronisation, and on a busy 2-core machine the two spin against each other (measured:
    the module's tests took 7-12 s each with two threads, under 2 s with one)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def wavlm_sv(tmp_path_factory):
    """``wavlm_sv(norm)``: a tiny ``WavLMForXVector`` folder (built once per session)."""
    built = {}

    def get(norm: str):
        if norm not in built:
            folder = tmp_path_factory.mktemp(f"wavlm_sv_{norm}")
            torch.manual_seed(0)
            WavLMForXVector(_wavlm_config(norm)).eval().save_pretrained(folder)
            _wavlm_preprocessor().save_pretrained(folder)
            built[norm] = folder
        return built[norm]

    return get


@pytest.fixture(scope="session")
def ast_audioset(tmp_path_factory):
    return _write_ast(tmp_path_factory.mktemp("ast_audioset"), AST_LABELS)


@pytest.fixture(scope="session")
def ast_scene(ast_audioset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingSceneLabelWarning)
        return AudioSetScene.from_pretrained(ast_audioset, batch_size=4)


# ---- speaker ----------------------------------------------------------------------------------

def test_cosine_golden_values():
    assert cosine([1, 0], [1, 1]) == pytest.approx(1 / math.sqrt(2), abs=1e-12)
    assert cosine([1, 0], [0, 3]) == pytest.approx(0.0, abs=1e-12)
    assert cosine([2, 0], [-5, 0]) == pytest.approx(-1.0, abs=1e-12)
    assert cosine([3, 4], [6, 8]) == pytest.approx(1.0, abs=1e-12)
    rows = cosine(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 1.0], [1.0, -1.0]]))
    np.testing.assert_allclose(rows, [1 / math.sqrt(2), 0.0], atol=1e-12)
    np.testing.assert_allclose(cosine([1, 0], np.array([[1, 1], [0, 1]])), [1 / math.sqrt(2), 0.0], atol=1e-12)
    with pytest.raises(ValueError, match="zero vector"):
        cosine([0, 0], [1, 1])
    with pytest.raises(ValueError, match="one dim"):
        cosine([1, 0, 0], [1, 1])


@pytest.mark.parametrize("norm", ["group", "layer"])
def test_embeddings_have_their_shape_and_are_deterministic(wavlm_sv, norm):
    speaker = WavLMSpeaker.from_pretrained(wavlm_sv(norm), batch_size=2)
    assert isinstance(speaker, SpeakerEmbedder) and speaker.name == wavlm_sv(norm).name
    waves = _waves()
    emb = speaker.embed(waves)
    assert emb.shape == (len(waves), 16) == (len(waves), speaker.dim) and emb.dtype == np.float32
    assert np.all(np.isfinite(emb))
    np.testing.assert_array_equal(speaker.embed(waves), emb)
    np.testing.assert_array_equal(WavLMSpeaker.from_pretrained(wavlm_sv(norm), batch_size=2).embed(waves), emb)
    assert speaker.embed([]).shape == (0, 16)


@pytest.mark.parametrize("norm", ["group", "layer"])
def test_batched_equals_one_by_one_whatever_the_padding(wavlm_sv, norm):
    """Each clip alone, then batched with others up to four times its length (so mostly
    padding), in any order: the same embedding within 1e-4. The tiny model's embeddings have
    norm about 1 and differ between clips by far more than that, so the check has teeth."""
    speaker = WavLMSpeaker.from_pretrained(wavlm_sv(norm), batch_size=1)
    waves = _waves()
    alone = np.stack([speaker.embed([w])[0] for w in waves])
    assert np.min(np.linalg.norm(alone, axis=1)) > 0.5
    assert min(np.abs(alone[i] - alone[j]).max() for i in range(len(waves)) for j in range(i)) > 1e-2
    speaker.batch_size = 5
    np.testing.assert_allclose(speaker.embed(waves), alone, atol=1e-4)
    perm = [3, 0, 4, 2, 1]
    speaker.batch_size = 3
    np.testing.assert_allclose(speaker.embed([waves[i] for i in perm]), alone[perm], atol=1e-4)
    assert cosine(speaker.embed([waves[0], waves[3]])[0], alone[0]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("norm", ["group", "layer"])
def test_an_embedding_is_the_stock_forward_on_the_clip_alone(wavlm_sv, norm):
    speaker = WavLMSpeaker.from_pretrained(wavlm_sv(norm))
    stock = WavLMForXVector.from_pretrained(wavlm_sv(norm)).eval()
    fe = Wav2Vec2FeatureExtractor.from_pretrained(wavlm_sv(norm))
    waves = _waves()
    with torch.no_grad():
        want = np.stack([stock(**fe(w, sampling_rate=16000, return_tensors="pt")).embeddings[0].numpy()
                         for w in waves])
    np.testing.assert_allclose(speaker.embed(waves), want, atol=1e-5)


def test_clips_it_cannot_embed_are_refused_by_index(wavlm_sv):
    speaker = WavLMSpeaker.from_pretrained(wavlm_sv("layer"))
    assert speaker.min_samples == 5200  # 16 encoder frames: 2 pooled after the dilated TDNN
    speaker.embed([speechlike(0.4), np.zeros(5200, dtype=np.float32) + 0.01])
    with pytest.raises(ValueError, match=r"clip 1: 0\.300 s is too short"):
        speaker.embed([speechlike(0.4), speechlike(0.3)])
    with pytest.raises(ValueError, match="clip 0: expected mono"):
        speaker.embed([np.zeros((2, 8000), dtype=np.float32)])
    bad = speechlike(0.5)
    bad[7] = np.nan
    with pytest.raises(ValueError, match="clip 0: audio has NaN"):
        speaker.embed([bad])


# ---- loading ----------------------------------------------------------------------------------

@pytest.mark.parametrize("provider", [WavLMSpeaker, AudioSetScene])
def test_a_missing_checkpoint_is_a_one_line_error_naming_it(provider, tmp_path, monkeypatch):
    import huggingface_hub.constants

    # an unknown hub id must fail without reaching the network (tests never download)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    missing = tmp_path / "models" / "no-such-checkpoint"
    with pytest.raises(FileNotFoundError) as err:
        provider.from_pretrained(missing)
    assert str(missing) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(FileNotFoundError, match="not a hub id that could be loaded") as err:
        provider.from_pretrained("omnijudge-tests/never-published")
    assert "\n" not in str(err.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="empty: no config.json"):
        provider.from_pretrained(tmp_path / "empty")


def test_checkpoints_of_another_kind_are_refused(wavlm_sv, ast_audioset, tmp_path):
    with pytest.raises(ValueError, match="'audio-spectrogram-transformer' checkpoint.*'wavlm'"):
        WavLMSpeaker.from_pretrained(ast_audioset)
    with pytest.raises(ValueError, match="'wavlm' checkpoint.*'audio-spectrogram-transformer'"):
        AudioSetScene.from_pretrained(wavlm_sv("group"))
    # a bare WavLM encoder would get a randomly initialised x-vector head
    bare = tmp_path / "wavlm-bare"
    WavLMModel(_wavlm_config("group")).save_pretrained(bare)
    _wavlm_preprocessor().save_pretrained(bare)
    with pytest.raises(ValueError, match="not a complete WavLMForXVector checkpoint; missing weights"):
        WavLMSpeaker.from_pretrained(bare)
    # weights only training reads may be left out of a checkpoint
    lean = tmp_path / "wavlm-sv-lean"
    full = WavLMForXVector.from_pretrained(wavlm_sv("group"))
    kept = {k: v for k, v in full.state_dict().items() if k not in ("objective.weight", "wavlm.masked_spec_embed")}
    assert len(kept) == len(full.state_dict()) - 2
    full.save_pretrained(lean, state_dict=kept)
    _wavlm_preprocessor().save_pretrained(lean)
    wave = speechlike(0.6)
    np.testing.assert_array_equal(WavLMSpeaker.from_pretrained(lean).embed([wave]),
                                  WavLMSpeaker.from_pretrained(wavlm_sv("group")).embed([wave]))
    no_fe = tmp_path / "no-preprocessor"
    shutil.copytree(wavlm_sv("group"), no_fe)
    (no_fe / "preprocessor_config.json").unlink()
    with pytest.raises(FileNotFoundError, match="no-preprocessor: no preprocessor_config.json"):
        WavLMSpeaker.from_pretrained(no_fe)


# ---- scene ------------------------------------------------------------------------------------

def test_scene_groups_are_the_public_audioset_lists():
    assert SCENE_GROUP_NAMES == ("outdoor", "crowd", "music")
    assert [len(SCENE_GROUPS[g]) for g in SCENE_GROUP_NAMES] == [9, 5, 6]
    assert SCENE_GROUPS["crowd"] == ("Crowd", "Hubbub, speech noise, speech babble", "Cheering", "Applause",
                                     "Children shouting")
    assert "Motor vehicle (road)" in SCENE_GROUPS["outdoor"] and "Background music" in SCENE_GROUPS["music"]


def test_group_scores_are_the_max_of_their_classes_on_hand_made_logits():
    """sigmoid(0) = 1/2, sigmoid(ln 3) = 3/4, sigmoid(-ln 3) = 1/4, sigmoid(ln 9) = 9/10."""
    labels = ["Speech", "Music", "Singing", "Crowd", "Applause", "Wind", "Rain"]
    with pytest.warns(MissingSceneLabelWarning):
        indices = group_label_indices(dict(enumerate(labels)))
    assert indices == {"outdoor": (5, 6), "crowd": (3, 4), "music": (1, 2)}
    ln3, ln9 = math.log(3), math.log(9)
    logits = np.array([[ln9, 0.0, -ln3, ln3, -ln3, -ln3, -ln3],
                       [-ln9, -ln3, ln3, -ln3, 0.0, ln9, ln3]])
    probs = 1 / (1 + np.exp(-logits))
    got = aggregate_groups(probs, indices)
    want = [{"outdoor": 0.25, "crowd": 0.75, "music": 0.5}, {"outdoor": 0.9, "crowd": 0.5, "music": 0.75}]
    assert [list(g) for g in got] == [list(SCENE_GROUP_NAMES)] * 2
    for g, w in zip(got, want):
        assert g == pytest.approx(w, abs=1e-12)  # "Speech" (logit ln 9 in row 0) is in no group
    with pytest.raises(ValueError, match="n_clips, n_classes"):
        aggregate_groups(probs[0], indices)


def test_missing_classes_warn_once_and_a_group_with_none_is_refused():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        group_label_indices(dict(enumerate(AST_LABELS)), source="tiny-ast")
    assert len(caught) == 1 and caught[0].category is MissingSceneLabelWarning
    message = str(caught[0].message)
    assert message.startswith("tiny-ast: 10 AudioSet class(es)") and "crowd: 'Cheering'" in message
    complete = [name for names in SCENE_GROUPS.values() for name in names]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert group_label_indices(dict(enumerate(complete)))["music"] == tuple(range(14, 20))
    no_crowd = [name for name in AST_LABELS if name not in SCENE_GROUPS["crowd"]]
    with pytest.raises(ValueError, match=r"tiny-ast: has none of the AudioSet classes of scene group\(s\) 'crowd'"):
        group_label_indices(dict(enumerate(no_crowd)), source="tiny-ast")


def test_ast_scores_grouped_batched_and_deterministic(ast_scene, ast_audioset):
    assert isinstance(ast_scene, SceneClassifier) and ast_scene.labels == tuple(AST_LABELS)
    waves = _waves()
    probs = ast_scene.scores(waves)
    assert probs.shape == (len(waves), len(AST_LABELS)) and probs.dtype == np.float32
    assert np.all((probs > 0) & (probs < 1))
    groups = ast_scene.group_scores(waves)
    assert [tuple(g) for g in groups] == [SCENE_GROUP_NAMES] * len(waves)
    music = [AST_LABELS.index(n) for n in ("Music", "Singing", "Electronic music")]
    assert [g["music"] for g in groups] == pytest.approx(probs[:, music].max(axis=1).tolist(), abs=1e-7)
    alone = np.stack([ast_scene.scores([w])[0] for w in waves])
    np.testing.assert_allclose(probs, alone, atol=1e-5)
    assert np.abs(alone[0] - alone[3]).max() > 1e-3  # different clips, different scores
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingSceneLabelWarning)
        again = AudioSetScene.from_pretrained(ast_audioset, batch_size=4)
    np.testing.assert_array_equal(again.scores(waves), probs)


def test_a_long_clip_takes_each_class_max_over_its_windows(ast_scene):
    assert ast_scene.window == 400 + 160 * (AST_FRAMES - 1) and ast_scene.step == 160 * AST_FRAMES
    wave = speechlike(1.3, seed=9)  # 20800 samples: windows at 0, 7680 and 12880 (the last ends at the end)
    starts = [0, 7680, len(wave) - ast_scene.window]
    per_window = ast_scene.scores([wave[s:s + ast_scene.window] for s in starts])
    assert not np.allclose(per_window[0], per_window[2], atol=1e-4)
    np.testing.assert_allclose(ast_scene.scores([wave])[0], per_window.max(axis=0), atol=1e-6)
    with pytest.raises(ValueError, match="clip 1: 399 samples"):
        ast_scene.scores([wave, wave[:399]])


def test_ast_load_reports_missing_classes_once_and_refuses_unusable_checkpoints(ast_audioset, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        AudioSetScene.from_pretrained(ast_audioset)
    assert [w.category for w in caught if issubclass(w.category, MissingSceneLabelWarning)] == \
        [MissingSceneLabelWarning]
    no_crowd = tmp_path / "ast-no-crowd"
    shutil.copytree(ast_audioset, no_crowd)
    cfg = json.loads((no_crowd / "config.json").read_text())
    cfg["id2label"] = {i: ("Dog" if name in SCENE_GROUPS["crowd"] else name) for i, name in cfg["id2label"].items()}
    cfg["label2id"] = {}
    (no_crowd / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="ast-no-crowd: has none of the AudioSet classes of scene group.*'crowd'"):
        AudioSetScene.from_pretrained(no_crowd)
    mismatched = _write_ast(tmp_path / "ast-mismatch", AST_LABELS, fe_max_length=64)
    with pytest.warns(MissingSceneLabelWarning), pytest.raises(ValueError, match="makes 64 frames x 128 mels but the "
                                                                                "model takes 48 x 128"):
        AudioSetScene.from_pretrained(mismatched)
