"""Offline, a command whose default (or named) model is a Hub download stops within 5 s of being
typed, interpreter start-up included, with one line naming the model and how to get it, before any
other work: the check runs before torch is imported (it took 13-19 s when it ran where the model
loads)."""

import json
import os
import subprocess
import sys
import time

import pytest

from evaluators.hub_access import BACKBONE_HUB_IDS, DEFAULT_BACKBONE

#: The issue's bound: seconds from typing the command to its one-line error.
LIMIT_S = 5.0
_RUN = """
import json, sys
from evaluators.cli import main
code = main({argv!r})
print(json.dumps([code, "torch" in sys.modules]))
"""


def _offline_run(argv, tmp_path):
    """(exit code, torch imported, seconds, stderr lines) of ``omnijudge ARGV`` in a fresh interpreter
    with ``HF_HUB_OFFLINE=1`` and an empty Hugging Face cache."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hf_cache")}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _RUN.format(argv=[str(a) for a in argv])], capture_output=True,
                          text=True, env=env, timeout=120)
    seconds = time.monotonic() - start
    code, torch_imported = json.loads(done.stdout.strip().splitlines()[-1])
    return code, torch_imported, seconds, [line for line in done.stderr.splitlines() if line.strip()]


def _wav(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.wav").write_bytes(b"RIFF")
    return folder


def _seb_items(folder):
    row = {"task": "acoustic_editing", "sample_id": "noise_0", "audio_path": "s.wav", "instruction": "Add crowd noise.",
           "transcript": "the lamps", "language": "en",
           "anchor": {"type": "acoustic", "subtask": "env_transfer", "env_type": "noise", "env_subtype": "crowd"}}
    (folder / "acoustic_editing").mkdir(parents=True)
    (folder / "acoustic_editing" / "samples.jsonl").write_text(json.dumps(row) + "\n")
    return folder


def _nvv_items(path):
    path.write_text(json.dumps({"id": "en_exhale_000", "lang": "en", "text": "I told you already.",
                                "text_with_mark": "I told <exhale> you already.", "non_verbal_events": ["exhale"],
                                "target_type": "exhale", "gt_position": 2}) + "\n")
    return path


def _routes(path):
    path.write_text("models:\n  judge:\n    families:\n      auto-att-released: {}\n")
    return path


CASES = {
    "score audio preset default base": (
        lambda t: ["score", "audio", "--judge", "auto-att", "--audio", _wav(t / "a"), "--out", t / "s.jsonl"],
        "preset auto-att (its default base) Qwen/Qwen2.5-Omni-7B"),
    "score att released preset": (
        lambda t: ["score", "att", "--judge", "auto-att-released", "--audio", _wav(t / "a"), "--out", t / "s.jsonl"],
        "preset auto-att-released (its default base) Meituan/Auto-ATT"),
    "score pairs preset default base": (
        lambda t: ["score", "pairs", "--judge", "auto-att", "--pairs", t / "p.jsonl", "--out", t / "s.jsonl"],
        "preset auto-att (its default base)"),
    "score instructttseval drop-in": (
        lambda t: ["score", "instructttseval", "--items", t / "i.jsonl", "--outputs", t, "--judge", "instruct-follow",
                   "--out", t / "r"],
        "preset instruct-follow (its default base)"),
    "score nvv likert preset": (
        lambda t: ["score", "nvv", "--items", _nvv_items(t / "i.jsonl"), "--outputs", t, "--out", t / "r",
                   "--raters", "quality=likert-quality"],
        "preset likert-quality (its default base)"),
    "score speecheditbench default asr": (
        lambda t: ["score", "speecheditbench", "--items", _seb_items(t / "d"), "--outputs", t, "--out", t / "r"],
        "--asr openai/whisper-large-v3"),
    "score speecheditbench default scene": (
        lambda t: ["score", "speecheditbench", "--items", _seb_items(t / "d"), "--outputs", t, "--out", t / "r",
                   "--asr", "whisper-base"],
        "--scene MIT/ast-finetuned-audioset-10-10-0.4593"),
    "score speecheditbench preset judge": (
        lambda t: ["score", "speecheditbench", "--items", _seb_items(t / "d"), "--outputs", t, "--out", t / "r",
                   "--manifest", t / "m.jsonl", "--judges", "emotion=seb-emotion"],
        "preset seb-emotion (its default base)"),
    "serve default routes": (
        lambda t: ["serve", "--folder", t / "serve", "--port", "18777"], "(its default base) Qwen/Qwen2.5-Omni-7B"),
    "serve routes file": (
        lambda t: ["serve", "--routes", _routes(t / "routes.yaml"), "--folder", t / "serve", "--port", "18777"],
        "preset auto-att-released (its default base) Meituan/Auto-ATT"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_offline_hub_default_stops_within_5_s_before_torch(case, tmp_path):
    argv, names = CASES[case]
    code, torch_imported, seconds, lines = _offline_run(argv(tmp_path), tmp_path)
    assert len(lines) == 1, lines
    assert code == 2 and names in lines[0] and "huggingface-cli download" in lines[0], lines[0]
    assert not torch_imported, "the Hub check must come before the model code"
    assert seconds < LIMIT_S, f"{case}: {seconds:.1f} s"


def test_backbone_hub_ids_are_the_backbones():
    """The spelled-out checkpoints agree with the registry, and cover every backbone a preset binds."""
    from evaluators.backbones.specs import BACKBONES
    from evaluators.judges.presets import PRESETS

    for name, hub_id in BACKBONE_HUB_IDS.items():
        assert name in BACKBONES and BACKBONES[name].hub_id == hub_id, name
    bound = {p.backbone for p in PRESETS.values() if p.backbone and not p.base_model} | {DEFAULT_BACKBONE}
    assert bound <= set(BACKBONE_HUB_IDS)
