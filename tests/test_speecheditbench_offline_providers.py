"""SpeechEditBench's offline providers (``--speaker auto`` / resemblyzer, ``--distillmos``) and the
one cached, failure-isolating path every provider measures through (``ProviderSet.measure``); the
speaker and scene providers on tiny checkpoints: tests/test_speecheditbench_providers.py."""

from __future__ import annotations

import numpy as np
import pytest
from test_speecheditbench_providers import _one_torch_thread, pytestmark  # noqa: F401 (autouse fixture, marks)

from evaluators.benchmarks.speecheditbench.providers.speaker import cosine


# ---- the offline providers: --speaker auto / resemblyzer, --distillmos ------------------------------

def test_speaker_auto_resolves_to_the_cached_wavlm_or_resemblyzer(monkeypatch):
    from evaluators.benchmarks.speecheditbench.provider_cache import DEFAULT_SPEAKER, ProviderSet
    from evaluators.benchmarks.speecheditbench.providers import speaker as speaker_module

    assert DEFAULT_SPEAKER == "auto"
    monkeypatch.setattr(speaker_module, "hub_checkpoint_cached", lambda repo: False)
    assert speaker_module.resolve_speaker("auto") == "resemblyzer"
    assert ProviderSet().speaker == "resemblyzer"
    monkeypatch.setattr(speaker_module, "hub_checkpoint_cached", lambda repo: repo == speaker_module.WAVLM_SPEAKER)
    assert ProviderSet().speaker == "microsoft/wavlm-base-plus-sv"
    assert ProviderSet().identity("speaker") == "wavlm-xvector:microsoft/wavlm-base-plus-sv"
    assert ProviderSet(speaker="some/folder").speaker == "some/folder"  # anything else as given
    with pytest.raises(ValueError, match="--speaker: empty"):
        speaker_module.resolve_speaker(" ")


def test_hub_checkpoint_cached_reads_only_the_local_cache(monkeypatch, tmp_path):
    import huggingface_hub

    from evaluators.benchmarks.speecheditbench.providers import speaker as speaker_module

    snap = tmp_path / "models--org--sv" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (tmp_path / "models--org--sv" / "refs").mkdir()
    (tmp_path / "models--org--sv" / "refs" / "main").write_text("abc")
    real = huggingface_hub.try_to_load_from_cache
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache",
                        lambda repo, name: real(repo, name, cache_dir=str(tmp_path)))
    assert not speaker_module.hub_checkpoint_cached("org/sv")
    for name in ("config.json", "preprocessor_config.json"):
        (snap / name).write_text("{}")
    assert not speaker_module.hub_checkpoint_cached("org/sv")  # no weights yet
    (snap / "model.safetensors").write_bytes(b"x")
    assert speaker_module.hub_checkpoint_cached("org/sv")


def _real_clip(name: str):
    from pathlib import Path

    path = Path("/usr/share/pocketsphinx/test/data/cards") / name
    if not path.is_file():
        pytest.skip("apt-get install -y pocketsphinx-testdata")
    return path


def test_the_measurement_pass_with_resemblyzer_and_distillmos(tmp_path):
    import importlib.util

    from evaluators.benchmarks.speecheditbench.items import EditItem
    from evaluators.benchmarks.speecheditbench.measure import Job, read_audio
    from evaluators.benchmarks.speecheditbench.measure_diagnostics import measure_diagnostics, planned_diagnostic_uses
    from evaluators.benchmarks.speecheditbench.provider_cache import ProviderSet
    from evaluators.measures.distillmos import DistillMos
    from evaluators.measures.speaker_similarity import ResemblyzerSpeaker

    for package in ("resemblyzer", "distillmos"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} not installed (.ci/run installs it)")
    src, out = _real_clip("005.wav"), _real_clip("002.wav")
    item = EditItem("a", "content_editing", "en", "x", {"edit_type": "insert"}, src, None)
    jobs = [Job(item, out, ("content",), source_similarity=True)]
    read_audio(jobs, False)
    providers = ProviderSet(speaker="resemblyzer", source_similarity=True, distillmos=True,
                            cache_dir=tmp_path / "cache")
    measure_diagnostics(jobs, providers)
    m = jobs[0].measured
    assert jobs[0].uses == planned_diagnostic_uses(providers) == {
        "source_similarity": "resemblyzer-ge2e:0.1.4", "distillmos": "distillmos:0.9.1:distill_mos_v7"}
    s, o = ResemblyzerSpeaker.load().embed([m.source, m.output])
    assert m.source_similarity == round(float(cosine(s, o)), 4)
    assert 0.8 < m.source_similarity < 0.9  # one speaker (0.8374 in tests/test_real_measures.py)
    assert m.distillmos == pytest.approx(DistillMos.load().score([m.output])[0], abs=1e-6)
    providers.flush()
    assert len((tmp_path / "cache" / "distillmos.jsonl").read_text().splitlines()) == 1


def test_every_provider_measures_through_one_cached_isolating_path(tmp_path):
    """``ProviderSet.measure``: one batched call; a batch the model refuses is run clip by clip, the
    clip that fails alone is ``Failed`` (and not cached), the others are cached and a rerun reads
    them without the model."""
    from evaluators.benchmarks.speecheditbench.provider_cache import Failed, ProviderSet

    calls = []

    class Scene:  # the AudioSet provider's interface: group_scores(waves) -> one dict per wave
        def group_scores(self, waves):
            calls.append(len(waves))
            if any(not np.all(np.isfinite(w)) for w in waves):
                raise ValueError("audio has NaN")
            return [{"outdoor": float(w[0]), "crowd": 0.0, "music": 0.0} for w in waves]

    clips = []
    for k, value in enumerate((0.25, float("nan"), 0.5)):
        path = tmp_path / f"{k}.wav"
        path.write_bytes(b"x" * (k + 1))  # the cache key is the file's path, size and mtime
        clips.append((k, path, np.full(16_000, value, dtype=np.float32)))
    providers = ProviderSet(speaker="resemblyzer", cache_dir=tmp_path / "cache")
    providers._models[providers.identity("scene")] = Scene()
    values = providers.measure("scene", clips)
    assert calls == [3, 1, 1, 1]
    assert values[0]["outdoor"] == 0.25 and values[2]["outdoor"] == 0.5
    assert isinstance(values[1], Failed) and "NaN" in values[1]["__error__"]
    providers.flush()
    assert len((tmp_path / "cache" / "scene.jsonl").read_text().splitlines()) == 2
    again = ProviderSet(speaker="resemblyzer", cache_dir=tmp_path / "cache")
    again._models[again.identity("scene")] = Scene()
    assert again.measure("scene", [clips[0], clips[2]]) == {0: values[0], 2: values[2]}
    assert calls == [3, 1, 1, 1]  # read from the cache
