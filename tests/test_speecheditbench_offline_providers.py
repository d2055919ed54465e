"""SpeechEditBench's offline providers (``--speaker auto`` / resemblyzer, ``--distillmos``) and the
one resumable, failure-isolating measure pass every provider measures through (``ProviderSet.measure_files``); the
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
    from evaluators.benchmarks.speecheditbench.manifest import ManifestValues
    from evaluators.benchmarks.speecheditbench.measure import Job, measure_ahead, plan, read_audio
    from evaluators.benchmarks.speecheditbench.measure_diagnostics import measure_diagnostics
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
    providers = ProviderSet(speaker="resemblyzer", source_similarity=True, distillmos=True)
    measure_ahead(jobs, providers, ManifestValues(), tmp_path / "measures", "sys",
                  kinds=("speaker", "distillmos"))
    measure_diagnostics(jobs, providers)
    m = jobs[0].measured
    uses = plan(jobs[0], providers, ManifestValues())[0]
    assert {k: uses[k] for k in ("source_similarity", "distillmos")} == {
        "source_similarity": "resemblyzer-ge2e:0.1.4", "distillmos": "distillmos:0.9.1:distill_mos_v7"}
    s, o = ResemblyzerSpeaker.load().embed([m.source, m.output])
    assert m.source_similarity == round(float(cosine(s, o)), 4)
    assert 0.8 < m.source_similarity < 0.9  # one speaker (0.8374 in tests/test_real_measures.py)
    assert m.distillmos == pytest.approx(DistillMos.load().score([m.output])[0], abs=1e-6)
    assert len((tmp_path / "measures" / "distillmos" / "sys.jsonl").read_text().splitlines()) == 1


def test_every_provider_measures_through_one_resumable_isolating_pass(tmp_path):
    """``ProviderSet.measure_files``: a measure pass on the engine per kind (``evaluators/measure_pass.py``):
    one batched call; a batch the model refuses is run clip by clip, the clip that fails alone is
    ``Failed`` (an error row), the others have rows that a rerun keeps without the model, and a
    file rewritten in place (new size or modification time) is measured again, its new row
    superseding the old one."""
    import soundfile as sf

    from evaluators.benchmarks.speecheditbench.provider_cache import DEFAULT_SCENE, Failed, ProviderSet
    from evaluators.rows_file import read_done_rows
    from evaluators.run_options import RunOptions

    calls = []

    class Scene:  # the AudioSet provider's interface: group_scores(waves) -> one dict per wave
        def group_scores(self, waves):
            calls.append(len(waves))
            if any(float(np.max(w)) > 0.6 for w in waves):
                raise ValueError("audio too loud")
            return [{"outdoor": round(float(np.max(w)), 3), "crowd": 0.0, "music": 0.0} for w in waves]

    clips = []
    for k, value in enumerate((0.25, 0.75, 0.5)):
        path = tmp_path / f"{k}.wav"
        sf.write(path, np.full(16_000, value, dtype=np.float32), 16_000)
        clips.append((k, path, None))
    folder, planned = tmp_path / "measures", [("scene", "en", p) for _, p, _ in clips]

    def measured(run=RunOptions(batch_size=8)):
        providers = ProviderSet(speaker="resemblyzer")
        providers._models[providers.identity("scene")] = Scene()
        providers.measure_files(planned, folder, "sys", run)
        return providers.measure("scene", clips)

    values = measured()
    assert calls == [3, 1, 1, 1]
    assert values[0]["outdoor"] == 0.25 and values[2]["outdoor"] == 0.5
    assert isinstance(values[1], Failed) and values[1]["__error__"] == "audio too loud"
    rows_path = folder / "scene" / "sys.jsonl"
    before = rows_path.read_bytes()
    rows = read_done_rows(rows_path)
    assert ["error" in r for r in rows] == [False, True, False]
    assert all(r["provenance"] == {"provider": f"audioset:{DEFAULT_SCENE}"} and r["file"] for r in rows)
    assert measured() == values and calls == [3, 1, 1, 1] and rows_path.read_bytes() == before  # the rows stand
    sf.write(clips[2][1], np.full(8_000, 0.125, dtype=np.float32), 16_000)  # rewritten in place
    again = measured()
    assert calls == [3, 1, 1, 1, 1] and again[2]["outdoor"] == 0.125 and again[0] == values[0]
    assert len(read_done_rows(rows_path)) == 3  # the superseded row is compacted away
    assert measured(RunOptions(retry_errors=True))[1]["__error__"] == "audio too loud" and calls[-1] == 1
