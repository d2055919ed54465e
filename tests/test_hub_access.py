"""Hub models offline: one line naming the model and how to get it, within seconds; a cached
model loads offline; ``release --push`` offline says what was written and exits 1."""

import json
import time

import pytest

from evaluators import hub_access
from evaluators.cli import build_parser, main
from evaluators.hub_access import HubUnavailableError, require_model

#: Seconds a command may take to refuse a Hub model it cannot get (the import time is not counted).
FAST_S = 5.0


@pytest.fixture(autouse=True)
def _fresh_probe(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf_cache"))
    hub_access.reset_probe()
    yield
    hub_access.reset_probe()


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def unreachable(monkeypatch):
    """Offline mode unset, the endpoint a closed local port: the probe must fail fast by itself."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")


def test_hub_ids_and_paths(tmp_path):
    assert hub_access.is_hub_id("openai/whisper-large-v3")
    assert not hub_access.is_hub_id(str(tmp_path))  # an existing folder
    assert not hub_access.is_hub_id("./models/x") and not hub_access.is_hub_id("/abs/x")
    assert not hub_access.is_hub_id("whisper-base") and not hub_access.is_hub_id("resemblyzer")
    require_model("whisper-base", "--asr")  # packaged names and folders pass without a probe
    require_model(str(tmp_path), "--asr")


@pytest.mark.parametrize("mode", ["offline", "unreachable"])
def test_missing_model_is_one_line_naming_it_and_the_alternative(mode, request):
    request.getfixturevalue(mode)
    start = time.monotonic()
    with pytest.raises(HubUnavailableError) as e:
        require_model("openai/whisper-large-v3", "--asr", "--asr whisper-base")
    assert time.monotonic() - start < FAST_S
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("--asr openai/whisper-large-v3: not in the local Hugging Face cache")
    assert "huggingface-cli download openai/whisper-large-v3" in msg and "--asr whisper-base" in msg
    assert ("HF_HUB_OFFLINE is set" if mode == "offline" else "unreachable") in msg


def _cache_config(tmp_path, repo_id):
    """A model's config.json in the Hugging Face cache layout."""
    folder = tmp_path / "hf_cache" / f"models--{repo_id.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text("abc")
    snap = folder / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")


def test_cached_model_passes_and_switches_to_offline(tmp_path, unreachable, monkeypatch):
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf_cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    _cache_config(tmp_path, "org/cached-model")
    require_model("org/cached-model", "--asr")
    assert constants.HF_HUB_OFFLINE is True  # the libraries read the cache without retrying the Hub
    monkeypatch.delenv("HF_HUB_OFFLINE")


def test_reachable_hub_announces_the_download_once(monkeypatch, capsys):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub_access, "hub_reachable", lambda timeout=3.0: (True, ""))
    require_model("org/not-cached", "--speaker")
    require_model("org/not-cached", "--speaker")
    err = capsys.readouterr().err
    assert err.count("downloading from the Hugging Face Hub") == 1 and "--speaker org/not-cached" in err


def _timed_main(args, capsys):
    """Exit code, seconds and stderr of ``omnijudge ARGS``; the parser is built once before the clock
    starts (its imports are the CLI's start-up, not the Hub check)."""
    build_parser()
    start = time.monotonic()
    code = main(args)
    return code, time.monotonic() - start, capsys.readouterr().err


def _one_line(err):
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("mode", ["offline", "unreachable"])
def test_score_nvv_asr_stops_fast_before_the_judge(tmp_path, capsys, mode, request):
    request.getfixturevalue(mode)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "en_exhale_000", "lang": "en", "text": "I told you already.",
                                 "text_with_mark": "I told <exhale> you already.", "non_verbal_events": ["exhale"],
                                 "target_type": "exhale", "gt_position": 2}) + "\n")
    (tmp_path / "outputs").mkdir()
    code, seconds, err = _timed_main(["score", "nvv", "--items", str(items), "--outputs", str(tmp_path / "outputs"),
                                      "--judge", str(tmp_path / "no-judge"), "--out", str(tmp_path / "r"),
                                      "--measure", "wer", "--asr", "openai/whisper-large-v3"], capsys)
    assert code == 2 and seconds < FAST_S
    line = _one_line(err)
    assert line.startswith("omnijudge score nvv: --asr openai/whisper-large-v3: not in the local Hugging Face cache")
    assert "--asr whisper-base" in line


def test_score_att_released_preset_stops_fast(tmp_path, capsys, unreachable):
    (tmp_path / "a.wav").write_bytes(b"")
    code, seconds, err = _timed_main(["score", "att", "--judge", "auto-att-released", "--audio", str(tmp_path),
                                      "--out", str(tmp_path / "s.jsonl")], capsys)
    assert code == 2 and seconds < FAST_S
    line = _one_line(err)
    assert "preset auto-att-released (its default base)" in line and "huggingface-cli download" in line


def test_instruct_follow_default_base_stops_fast(capsys, offline):
    from evaluators.judges.verbalizer import VerbalizerJudge

    start = time.monotonic()
    with pytest.raises(HubUnavailableError, match=r"preset instruct-follow \(its default base\) Qwen/"):
        VerbalizerJudge.from_preset("instruct-follow")
    assert time.monotonic() - start < FAST_S


def test_speecheditbench_default_asr_stops_fast(tmp_path, offline):
    from evaluators.benchmarks.speecheditbench.provider_cache import ProviderSet

    providers = ProviderSet(speaker="resemblyzer")
    start = time.monotonic()
    with pytest.raises(HubUnavailableError, match=r"--asr openai/whisper-large-v3: .*--asr whisper-base"):
        providers.require("asr", "en", "--asr")
    with pytest.raises(HubUnavailableError, match=r"--speaker microsoft/wavlm-base-plus-sv: .*--speaker resemblyzer"):
        ProviderSet(speaker="microsoft/wavlm-base-plus-sv").require("speaker", "en", "--speaker")
    providers.require("speaker", "en", "--speaker")  # resemblyzer: offline, no probe
    assert time.monotonic() - start < FAST_S


def test_data_import_from_the_hub_stops_fast(tmp_path, capsys, unreachable):
    code, seconds, err = _timed_main(["data", "import", "speechjudge", "--out", str(tmp_path / "c")], capsys)
    assert code == 2 and seconds < FAST_S
    line = _one_line(err)
    assert "not in the local Hugging Face cache" in line and "huggingface-cli download --repo-type dataset" in line


def test_release_push_offline_is_one_line_and_exit_1(tmp_path, capsys, unreachable):
    from tests.test_cli import _judge_folder

    judge = _judge_folder(tmp_path / "j")
    out = tmp_path / "rel"
    code, seconds, err = _timed_main(["release", "--checkpoint", str(judge), "--out", str(out),
                                      "--push", "--repo-id", "me/judge"], capsys)
    assert code == 1 and seconds < FAST_S
    line = _one_line(err)
    assert line.startswith(f"omnijudge release: release folder written to {out}; --push to me/judge failed")
    assert "huggingface-cli upload me/judge" in line
    assert (out / "judge_config.json").is_file() and (out / "README.md").is_file()
