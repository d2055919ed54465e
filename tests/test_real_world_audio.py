"""Audio files as benchmark systems really write them: one item's problem is that item's row
with a reason, never a silently chosen file or a misread clip."""

from types import SimpleNamespace

import numpy as np
import soundfile as sf

from tests.conftest import speechlike


def test_nvv_two_output_files_for_one_item_are_its_error_not_a_silent_pick(tmp_path):
    from evaluators.benchmarks.nvv.scorer import collect_outputs

    out = tmp_path / "outs"
    out.mkdir()
    sf.write(out / "en_0.wav", speechlike(1.0), 16000)
    sf.write(out / "en_0.flac", np.zeros(16000, np.float32), 16000)  # a rerun in another format
    sf.write(out / "en_1.wav", speechlike(1.0, seed=1), 16000)
    items = [SimpleNamespace(id=f"en_{k}") for k in range(2)]  # only the id is looked up
    by = {o.id: o for o in collect_outputs(out, items, system="s")}
    assert by["en_1"].checked_path() == out / "en_1.wav"
    problem = by["en_0"].problem
    assert problem is not None and "en_0.flac" in problem and "en_0.wav" in problem


def test_cast_two_output_files_for_one_item_are_its_error_not_a_silent_pick(tmp_path):
    from evaluators.benchmarks.cast.scorer import collect_outputs

    root = tmp_path / "outs" / "none"
    root.mkdir(parents=True)
    sf.write(root / "i0.wav", speechlike(1.0), 16000)
    sf.write(root / "i0.mp3" if "MP3" in sf.available_formats() else root / "i0.ogg", speechlike(1.0, seed=2), 16000)
    sf.write(root / "i1.wav", speechlike(1.0, seed=1), 16000)
    items = [{"id": f"i{k}", "pair_id": "p", "side": "AB"[k], "sentence": "a b", "stressed_word": "a"}
             for k in range(2)]
    by = {o.id: o for o in collect_outputs(tmp_path / "outs", items, system="s")}
    assert by["i1"].problem is None and by["i1"].path == root / "i1.wav"
    assert by["i0"].problem is not None and "i0.wav" in by["i0"].problem
