"""Qwen3-Omni-30B-A3B (thinker) and Qwen2.5-Omni-3B against their stock processors on tiny
stand-ins in the real hub layout with the real Qwen vocabularies: identical prompt ids (one audio
placeholder per encoder frame, counted by the processor), identical features, the same label
probabilities; label scores equal between batch 1 and batch 16; backbone detection and refusal."""

import json

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, Qwen2_5OmniProcessor, Qwen3OmniMoeProcessor, WhisperFeatureExtractor
from transformers.image_processing_utils import ImageProcessingMixin
from transformers.processing_utils import ProcessorMixin

from evaluators.backbones import AudioLLM, BackboneMismatchError, audio_token_count, detect_backbone
from evaluators.backbones.chat_prompt import conversation
from evaluators.backbones.qwen3_omni import qwen3_omni_audio_token_count
from evaluators.backbones.stand_in import write_stand_in

#: 20 clip lengths over 1-40 s, several past 30 s (the 30 s cut transformers 4.57.0 had).
CLIP_SECONDS = (1.0, 1.5, 2.37, 3.0, 4.2, 5.02 + 1 / 16000, 6.66, 8.0, 9.99, 12.5, 15.0, 18.3, 21.0, 24.7, 29.9,
                30.0, 31.0, 33.3, 37.5, 40.0)
PROMPT = "Listen to the speech clip. Answer with one word: Good, Fair or Bad."
LABEL_WORDS = ("Good", "Fair", "Bad")
#: Qwen3OmniMoeProcessor's <|audio_pad|> counts (computed by the stock processor on these clips).
QWEN3_TOKENS = {1.0: 13, 2.37: 31, 5.02 + 1 / 16000: 66, 31.0: 403, 40.0: 520}


def last_logits(llm, examples: list[dict], ids: torch.Tensor) -> torch.Tensor:
    """(B, n) LM-head logits of ``ids`` at each example's last prompt position (what a verbalizer reads)."""
    return llm.token_logits(llm.last_hidden_state(**llm.collate(examples))[:, -1, :], ids)


def _wave(seconds: float, seed: int = 0) -> np.ndarray:
    n = int(round(seconds * 16000))
    t = np.arange(n) / 16000
    rng = np.random.default_rng(seed)
    return (0.3 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t)) + 0.02 * rng.standard_normal(n)
            ).astype(np.float32)


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory):
    root = tmp_path_factory.mktemp("stand_ins")
    return {b: write_stand_in(b, root / b) for b in ("qwen3_omni", "qwen2_5_omni_3b")}


def stock_processor(folder, backbone: str, monkeypatch):
    """The processor ``AutoProcessor`` would build (image / video processors stubbed: they need
    torchvision and audio-only inputs never call them)."""
    cls = Qwen3OmniMoeProcessor if backbone == "qwen3_omni" else Qwen2_5OmniProcessor

    class StubImageProcessor(ImageProcessingMixin):
        pass

    check = ProcessorMixin.check_argument_for_proper_class
    monkeypatch.setattr(cls, "check_argument_for_proper_class",
                        lambda self, name, arg: None if name in ("image_processor", "video_processor")
                        else check(self, name, arg))
    template = json.loads((folder / "chat_template.json").read_text())["chat_template"]
    return cls(image_processor=StubImageProcessor(), video_processor=object(),
               feature_extractor=WhisperFeatureExtractor.from_pretrained(folder),
               tokenizer=AutoTokenizer.from_pretrained(folder), chat_template=template)


def test_qwen3_omni_token_arithmetic_is_13_per_second():
    assert [qwen3_omni_audio_token_count(f) for f in (0, 1, 99, 100, 101, 200, 237, 502, 3000, 3100)] == \
        [0, 1, 13, 13, 14, 26, 31, 66, 390, 403]


@pytest.mark.parametrize("backbone", ["qwen3_omni", "qwen2_5_omni_3b"])
def test_prompt_ids_features_and_probabilities_match_the_stock_processor(stand_ins, backbone, monkeypatch):
    folder = stand_ins[backbone]
    llm = AudioLLM.from_pretrained(folder)
    assert llm.spec.name == backbone and detect_backbone(folder) == backbone
    proc = stock_processor(folder, backbone, monkeypatch)
    tok = proc.tokenizer
    label_ids = torch.tensor([tok(w, add_special_tokens=False)["input_ids"][0] for w in LABEL_WORDS])
    text = proc.apply_chat_template(conversation(llm.spec.system_prompt, "", PROMPT), add_generation_prompt=True,
                                    tokenize=False)
    assert text == llm.prompt(PROMPT).text  # prompt bytes
    for i, seconds in enumerate(CLIP_SECONDS):
        wave = _wave(seconds, seed=i)
        stock = proc(text=text, audio=[wave], sampling_rate=16000, return_tensors="pt", padding=True)
        ours = llm.prepare(wave, PROMPT)
        assert ours["input_ids"].tolist() == stock["input_ids"][0].tolist(), seconds
        n_audio = int((stock["input_ids"][0] == llm.audio_token_id).sum())
        if backbone == "qwen3_omni":
            assert n_audio == QWEN3_TOKENS.get(seconds, n_audio), seconds
        else:
            assert n_audio == audio_token_count(-(-int(round(seconds * 16000)) // 160)), seconds  # 25 per second
        assert ours["n_frames"] == int(stock["feature_attention_mask"].sum())
        width = ours["input_features"].shape[1]
        np.testing.assert_allclose(ours["input_features"], stock["input_features"][0, :, :width].numpy(), atol=1e-5)
        if i % 5 == 0:  # the forward pass is the slow part; every fifth clip
            with torch.no_grad():
                p_stock = torch.softmax(llm.model(**stock).logits[0, -1, label_ids].double(), -1)
                p_ours = torch.softmax(last_logits(llm, [ours], label_ids)[0].double(), -1)
            assert torch.max(torch.abs(p_stock - p_ours)).item() <= 1e-5, seconds


def test_qwen3_omni_label_scores_do_not_depend_on_the_batch():
    llm = AudioLLM.tiny("qwen3_omni", seed=3)
    ids = torch.tensor([llm.tokenizer.convert_tokens_to_ids(w) for w in LABEL_WORDS])
    examples = [llm.prepare(_wave(s, seed=i), PROMPT) for i, s in enumerate(np.linspace(1.0, 40.0, 16))]
    with torch.no_grad():
        alone = torch.cat([last_logits(llm, [e], ids) for e in examples])
        batched = last_logits(llm, examples, ids)
    assert torch.max(torch.abs(torch.softmax(alone, -1) - torch.softmax(batched, -1))).item() <= 1e-5


def test_a_checkpoint_of_another_backbone_is_refused_before_loading(stand_ins, monkeypatch):
    from evaluators.backbones import BACKBONES

    def never(*a, **k):
        raise AssertionError("weights were loaded")

    for spec in BACKBONES.values():
        monkeypatch.setattr(spec.model_class, "from_pretrained", never)
    with pytest.raises(BackboneMismatchError, match="qwen3_omni.*--backbone"):
        AudioLLM.from_pretrained(stand_ins["qwen3_omni"], backbone="qwen2_5_omni")
    with pytest.raises(BackboneMismatchError, match="qwen2_5_omni_3b.*--backbone qwen2_5_omni_3b"):
        AudioLLM.from_pretrained(stand_ins["qwen2_5_omni_3b"], backbone="qwen2_5_omni")


@pytest.mark.parametrize("backbone", ["qwen3_omni", "qwen2_5_omni"])
def test_token_budget_estimate_equals_the_prompt_length(backbone):
    """The engine plans token-budget batches from a clip's length alone: the estimate must be the
    prompt the judge builds, on each backbone's own arithmetic (Qwen3-Omni: 13 audio tokens per second)."""
    import numpy as np

    from evaluators.judges.verbalizer import VerbalizerJudge

    judge = VerbalizerJudge.from_preset("auto-att", backbone=backbone, base="tiny")
    for seconds in (0.5, 1.0, 2.37, 7.0):
        wave = np.zeros(int(seconds * 16000), np.float32)
        assert judge.estimated_tokens(seconds) == len(judge.prepare(wave)["input_ids"]), seconds
