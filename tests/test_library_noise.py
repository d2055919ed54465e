"""Library notices that mean nothing to a user are dropped; anything else a library says still
shows, and nothing is printed twice."""

import logging
import warnings

from evaluators.library_noise import quiet_library_warnings


def _warn_from(module: str, message: str, category=FutureWarning):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_library_warnings.__globals__["_NOISE"] = None  # install the filters inside this context
        quiet_library_warnings()
        warnings.warn_explicit(message, category, filename="x.py", lineno=1, module=module)
    return [str(w.message) for w in caught]


def test_known_deprecations_are_dropped_and_others_kept():
    assert _warn_from("transformers.modeling_utils", "`is_gradient_checkpointing` is deprecated and will be "
                                                      "removed in v6.") == []
    assert _warn_from("peft.peft_model", "`gradient_checkpointing_enable` is deprecated and will be removed") == []
    leaf = "`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) and treespec.is_leaf()`"
    assert _warn_from("lightning.pytorch.utilities._pytree", leaf) == []  # torch's words, Lightning's call
    assert _warn_from("torch.utils._pytree", leaf) == [leaf]
    kept = "`torch_dtype` is deprecated! Use `dtype` instead!"
    assert _warn_from("transformers.modeling_utils", kept) == [kept]
    # the same words from our own code are not hidden
    assert _warn_from("evaluators.x", "`is_gradient_checkpointing` is deprecated") == [
        "`is_gradient_checkpointing` is deprecated"]


def test_transformers_generation_notices_are_dropped(caplog):
    import transformers  # noqa: F401 - its logger and handler exist once imported

    quiet_library_warnings()
    log = logging.getLogger("transformers.generation.utils")
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("transformers").addHandler(handler)
    try:
        log.warning("Passing `generation_config` together with generation-related arguments=({'x'}) is deprecated")
        log.warning("The attention mask is not set with a batched input, and cannot be inferred")
        log.warning("something else")
    finally:
        logging.getLogger("transformers").removeHandler(handler)
    assert [r.getMessage() for r in records] == ["something else"]


def test_hub_warnings_print_once(tmp_path, capsys):
    from evaluators.cli import main

    main(["metrics", "att", "--predictions", str(tmp_path / "none.jsonl"), "--labels", str(tmp_path / "n.jsonl")])
    hub = logging.getLogger("huggingface_hub")
    assert hub.propagate is False and hub.handlers  # its own handler prints; the root one no longer repeats it


def test_a_recorded_library_warning_passed_on_is_still_dropped(monkeypatch):
    """The judge loader records the backbone load's warnings and passes them on; passed on without
    their module they escaped every filter (PEFT's ``is_gradient_checkpointing`` notice on each load
    of a LoRA judge); now they keep it: the notice is dropped, anything else still shows, once."""
    import transformers.modeling_utils as mu

    from evaluators.judges import persistence
    from evaluators.library_noise import module_of

    assert module_of(mu.__file__) == "transformers.modeling_utils"

    def load_backbone(*args, **kwargs):
        warnings.warn_explicit("`is_gradient_checkpointing` is deprecated and will be removed in v6.", FutureWarning,
                               mu.__file__, 3303, module="transformers.modeling_utils")
        warnings.warn_explicit("something else", UserWarning, mu.__file__, 1, module="transformers.modeling_utils")
        return "loaded"

    monkeypatch.setattr(persistence, "load_backbone", load_backbone)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_library_warnings.__globals__["_NOISE"] = None
        quiet_library_warnings()
        assert persistence._load_backbone_whole("folder", {}, None, "cpu", None) == "loaded"
    assert [(str(w.message), w.filename) for w in caught] == [("something else", mu.__file__)]


def test_loading_a_lora_judge_folder_says_nothing(tmp_path):
    """End to end: a LoRA judge saved and loaded again (what ``score audio --judge <folder>`` does)."""
    from pathlib import Path

    from evaluators.backbones import AudioLLM
    from evaluators.judges.presets import get_preset
    from evaluators.judges.registry import load_judge
    from evaluators.judges.verbalizer import VerbalizerJudge
    from trainer.config import load_config
    from trainer.lora import apply_lora

    quiet_library_warnings()
    cfg = load_config(Path(__file__).resolve().parents[1] / "configs" / "att" / "tiny.yaml", {})
    judge = VerbalizerJudge(apply_lora(AudioLLM.tiny("qwen2_5_omni", seed=0), cfg), get_preset("auto-att"))
    judge.save_pretrained(tmp_path / "judge")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_library_warnings.__globals__["_NOISE"] = None
        quiet_library_warnings()
        load_judge(tmp_path / "judge", device="cpu", dtype="float32")
    assert [str(w.message) for w in caught if "checkpointing" in str(w.message)] == []
