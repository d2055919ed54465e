"""WhiStress hosted: the public checkpoint layout loaded by its real code path, scored with the
paper's rules (right shift, any sub-token stressed, 30-token cut), on a tiny stand-in; and through
``omnijudge score cast`` and ``metrics cast --listeners``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
import torch

from evaluators.judges.whistress import (
    MAX_TOKENS,
    WhiStressDetector,
    is_whistress_folder,
    merge_stressed_tokens,
)
from evaluators.judges.whistress_stand_in import write_whistress_stand_in

SENTENCE = "The manager booked the flight to Paris."
LONG = ("The manager booked the flight to Paris yesterday, and then she said she would call Tom tomorrow "
        "after the children played in the garden.")


def _wave(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    return (0.3 * np.sin(2 * np.pi * (120 + 80 * rng.random()) * t) + 0.02 * rng.standard_normal(t.size)).astype(
        np.float32)


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    return write_whistress_stand_in(tmp_path_factory.mktemp("whistress"))


@pytest.fixture(scope="module")
def detector(stand_in):
    from evaluators.benchmarks.cast.cli import stress_detector_class

    return stress_detector_class(str(stand_in)).from_pretrained(stand_in)


def test_word_rule_golden():
    """The public docstring's example: " didn" + "'t" is one word, stressed when any part is."""
    tokens = [("I", 0.1), (" didn", 0.2), ("'t", 0.7), (" say", 0.4), (" sto", 0.3), ("le", 0.6), (".", 0.9)]
    assert merge_stressed_tokens(tokens) == [("I", 0.1), ("didn't", 0.7), ("say", 0.4), ("stole.", 0.9)]


def _public_reference(stand_in, wave, transcription):
    """The public inference_from_audio_and_transcription, step by step, on the stand-in's files:
    argmax labels, the right shift, special tokens dropped, then merged with max over 0/1."""
    from transformers import WhisperForConditionalGeneration, WhisperProcessor
    from transformers.models.whisper.modeling_whisper import WhisperDecoderLayer

    from evaluators.judges.whistress import FCNN

    whisper = WhisperForConditionalGeneration.from_pretrained(stand_in / "whisper", attn_implementation="sdpa").eval()
    processor = WhisperProcessor.from_pretrained(stand_in / "whisper")
    block, classifier = WhisperDecoderLayer(whisper.config).eval(), FCNN(whisper.config.d_model, 2).eval()
    block.load_state_dict(torch.load(stand_in / "weights" / "additional_decoder_block.pt", weights_only=False))
    classifier.load_state_dict(torch.load(stand_in / "weights" / "classifier.pt", weights_only=False))
    layer = json.loads((stand_in / "weights" / "metadata.json").read_text())["layer_for_head"]
    feats = processor.feature_extractor(wave, sampling_rate=16000, return_tensors="pt")["input_features"]
    ids = processor.tokenizer(transcription, return_tensors="pt", padding="max_length", truncation=True,
                              max_length=30)["input_ids"]
    with torch.no_grad():
        out = whisper(input_features=feats, decoder_input_ids=ids, output_hidden_states=True)
        hidden = block(hidden_states=out.decoder_hidden_states[layer], encoder_hidden_states=out.encoder_hidden_states[layer])
        preds = torch.argmax(torch.softmax(classifier(hidden), dim=-1), dim=-1)
    shifted = torch.cat((preds[:, -1:], preds[:, :-1]), dim=1)[0].tolist()
    pairs = [(processor.tokenizer.decode([i], skip_special_tokens=False), s) for i, s in zip(ids[0].tolist(), shifted)
             if i not in processor.tokenizer.all_special_ids]
    merged, word, stress = [], "", 0
    for token, s in pairs:
        if token.startswith(" ") or word == "":
            if word:
                merged.append((word.strip(), stress))
            word, stress = token, s
        else:
            word, stress = word + token, max(stress, s)
    return merged + [(word.strip(), stress)] if word else merged


def test_stand_in_scores_as_the_public_inference(stand_in, detector):
    assert is_whistress_folder(stand_in) and is_whistress_folder(stand_in / "weights")
    assert not is_whistress_folder(stand_in / "whisper")
    assert isinstance(detector, WhiStressDetector) and detector.layer_for_head == 9
    inputs = [{"wave": _wave(1.5, 0), "words": ["unused"], "sentence": SENTENCE},
              {"wave": _wave(2.5, 1), "words": LONG.split()}]
    out = detector.score(inputs, batch_size=2)
    for x, o in zip(inputs, out):
        ref = _public_reference(stand_in, x["wave"], x.get("sentence") or " ".join(x["words"]))
        assert [(w, int(p >= 0.5)) for w, p in zip(o["words"], o["probs"])] == ref
    assert out[0]["words"] == ["The", "manager", "booked", "the", "flight", "to", "Paris."]
    assert 0 < sum(p >= 0.5 for p in out[1]["probs"]) < len(out[1]["probs"])  # the stand-in decides both ways
    # the 30-token cut: the long transcript loses its tail, the prefix and end tokens count too
    assert out[1]["n_tokens"] <= MAX_TOKENS - 2 and len(out[1]["words"]) < len(LONG.split())
    assert out[1]["words"] == LONG.split()[:len(out[1]["words"]) - 1] + out[1]["words"][-1:]
    # batch invariance
    alone = detector.score(inputs[1:], batch_size=1)[0]
    assert alone["probs"] == pytest.approx(out[1]["probs"], abs=1e-6)
    assert detector.provenance()["judge"] == "whistress:whisper" and len(detector.checkpoint_hash) == 16


def test_bad_layouts_are_refused(stand_in, tmp_path):
    with pytest.raises(FileNotFoundError, match="no WhiStress weights"):
        WhiStressDetector.from_pretrained(tmp_path)
    bad = tmp_path / "bad"
    (bad / "weights").mkdir(parents=True)
    for name in ("additional_decoder_block.pt", "classifier.pt"):
        (bad / "weights" / name).write_bytes((stand_in / "weights" / name).read_bytes())
    (bad / "weights" / "metadata.json").write_text('{"layer_for_head": 40}')
    with pytest.raises(ValueError, match="outside"):
        WhiStressDetector.from_pretrained(bad, whisper=stand_in / "whisper")
    with pytest.raises(ValueError, match="sdpa"):
        WhiStressDetector.from_pretrained(stand_in, attn_implementation="eager")


def test_score_cast_and_listener_metrics_with_whistress(stand_in, tmp_path, capsys):
    from evaluators.cli import main

    pairs = {"p1": ("The manager booked the flight.", "manager", "flight"),
             "p2": ("She said she would call Tom tomorrow.", "Tom", "tomorrow")}
    items, listeners = [], []
    (tmp_path / "outs" / "none").mkdir(parents=True)
    for k, (pid, (sentence, a, b)) in enumerate(pairs.items()):
        for side, word in (("A", a), ("B", b)):
            iid = f"{pid}{side}"
            items.append({"id": iid, "pair_id": pid, "side": side, "context": "", "sentence": sentence,
                          "stressed_word": word, "mode": "none"})
            sf.write(tmp_path / "outs" / "none" / f"{iid}.wav", _wave(1.2 + 0.3 * k, k), 16000)
            target = sentence.split().index(word + ("." if word in ("flight", "tomorrow") else ""))
            listeners += [{"id": iid, "listener": name, "stressed": [target] if name != "c" else [0]}
                          for name in ("a", "b", "c")]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (tmp_path / "listeners.jsonl").write_text("".join(json.dumps(r) + "\n" for r in listeners))
    assert main(["score", "cast", "--judge", str(stand_in), "--items", str(tmp_path / "items.jsonl"),
                 "--outputs", str(tmp_path / "outs"), "--out", str(tmp_path / "res"), "--n-resamples", "50",
                 "--num-workers", "0"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "res" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["judge"] == "whistress:whisper" and len(r["words"]) == len(r["probs"]) for r in rows)
    assert rows[0]["words"][-1].endswith(".")  # WhiStress's own words of the sentence as written
    metrics = json.loads((tmp_path / "res" / "metrics.json").read_text())
    assert metrics["overall"]["n_pairs"] == 2 and metrics["overall"]["targets_not_in_transcript"] == 0
    capsys.readouterr()
    preds = tmp_path / "whistress.jsonl"
    preds.write_text((tmp_path / "res" / "predictions.jsonl").read_text())
    assert main(["metrics", "cast", "--predictions", str(preds), "--listeners", str(tmp_path / "listeners.jsonl"),
                 "--items", str(tmp_path / "items.jsonl")]) == 0
    report = json.loads(capsys.readouterr().out)["detectors"]["whistress"]
    assert report["n_items"] == 4 and report["unaligned_words"] == 0
    assert report["n_words"] == sum(len(it["sentence"].split()) for it in items)


@pytest.mark.parametrize("dtype, expected", [("float32", torch.float32), ("bfloat16", torch.bfloat16),
                                             (None, torch.float32), ("auto", torch.float32)])
def test_dtype_names_load_as_every_other_judge_does(stand_in, dtype, expected):
    """``--dtype`` reaches WhiStress as a name (``score cast --dtype bfloat16``): Whisper, the extra
    layer and the classifier all take it; ``auto``/None is float32 on CPU."""
    detector = WhiStressDetector.from_pretrained(stand_in, dtype=dtype)
    assert {p.dtype for p in detector.parameters()} == {expected}
