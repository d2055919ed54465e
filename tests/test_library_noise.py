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
