"""The scalar_reward judge kind and the SpeechJudge BTRM importer (SpeechJudge, arXiv 2511.07931),
on a tiny Qwen2.5-Omni stand-in in the hub layout with the real Qwen vocabulary: a fake BTRM
checkpoint in the public layout (peft LoRA on the thinker in ``lora/`` + a pickled
``Linear(hidden, 1)`` state dict in ``reward_head.pt``) is imported and its rewards are checked
against a float32 replay of the public inference pipeline."""

import json

import numpy as np
import pytest
import torch
from torch import nn
from transformers import AutoTokenizer, Qwen2_5OmniProcessor, WhisperFeatureExtractor
from transformers.image_processing_utils import ImageProcessingMixin
from transformers.processing_utils import ProcessorMixin

from conftest import speechlike
from evaluators.judges import load_judge
from evaluators.judges.import_speechjudge import SpeechJudgeImportError, import_btrm, main
from evaluators.judges.scalar_reward import REWARD_HEAD, SPEECHJUDGE_SYSTEM_PROMPT, ScalarRewardJudge

TEXTS = ("The worn leather, once supple and inviting, now hangs limp.", "Hello world.", "Its time has passed.")
SECONDS = (1.3, 0.7, 2.1)


def build_rm_conversation(wav_path, target_text):
    """SpeechJudge's public BTRM conversation (verbatim but for line breaks)."""
    return [
        {"role": "system", "content": [{"type": "text", "text": SPEECHJUDGE_SYSTEM_PROMPT}]},
        {"role": "user", "content": [
            {"type": "text", "text": "We are evaluating the naturalness of Text-to-Speech model's output. The "
                                     "model need to generate a natural speech for the target text."},
            {"type": "text", "text": f"Target text: {target_text}"},
            {"type": "text", "text": "Output:"},
            {"type": "audio", "audio": wav_path},
            {"type": "text", "text": "Analysis the output above, and score it with number from 1 to 10. Note that: "
                                     "you only need to reply me a score (such as 7) and nothing else."},
        ]},
    ]


class PublicRewardModel(nn.Module):
    """SpeechJudge's public ``RewardModel`` forward, in float32 (the public code runs bfloat16 on CUDA)."""

    def __init__(self, base_model, head_state):
        super().__init__()
        self.model = base_model
        self.to_reward = nn.Linear(base_model.config.text_config.hidden_size, 1)
        self.to_reward.load_state_dict(head_state)

    def forward(self, inputs):
        outputs = self.model(**inputs, output_hidden_states=True)
        hidden = self.to_reward(outputs.hidden_states[-1])
        return hidden[:, -1, :]  # left padding: the last position is every row's final token


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    from evaluators.backbones.stand_in import write_stand_in

    return write_stand_in("qwen2_5_omni", tmp_path_factory.mktemp("hub_omni"))


def _flat_layout(key):
    """An adapter key as transformers 4.52 (SpeechJudge's pinned version) names the thinker's
    modules: audio and vision towers at the top, the LLM's layers under ``model.``."""
    for nested, flat in (("model.language_model.", "model."), ("model.audio_tower.", "audio_tower."),
                         ("model.visual.", "visual.")):
        key = key.replace("base_model.model." + nested, "base_model.model." + flat)
    return key


@pytest.fixture(scope="module")
def ckpt(base, tmp_path_factory):
    """A fake BTRM checkpoint in the public layout: a LoRA adapter (random A and B, so it changes
    the model) on every attention and MLP projection of the thinker, audio and vision towers
    included, with its keys in transformers 4.52 names, and a bfloat16 head saved with torch.save.
    ``native/lora`` holds the same adapter as the installed peft saves it, for the replay."""
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import load_file, save_file
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    root = tmp_path_factory.mktemp("btrm")
    thinker = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(str(base), dtype=torch.float32)
    torch.manual_seed(1)
    model = get_peft_model(thinker, LoraConfig(r=4, lora_alpha=8, init_lora_weights=False, target_modules=[
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
    model.save_pretrained(str(root / "native" / "lora"))
    (root / "lora").mkdir()
    native = root / "native" / "lora"
    (root / "lora" / "adapter_config.json").write_text((native / "adapter_config.json").read_text())
    state = load_file(str(native / "adapter_model.safetensors"))
    assert any(".audio_tower." in k for k in state)
    save_file({_flat_layout(k): v for k, v in state.items()}, str(root / "lora" / "adapter_model.safetensors"))
    head = nn.Linear(thinker.config.text_config.hidden_size, 1)
    nn.init.normal_(head.weight, std=0.5)
    torch.save(head.to(torch.bfloat16).state_dict(), root / "reward_head.pt")
    return root


@pytest.fixture(scope="module")
def folder(base, ckpt, tmp_path_factory):
    out = tmp_path_factory.mktemp("judges") / "speechjudge-btrm"
    assert main(["--ckpt", str(ckpt), "--out", str(out), "--base", str(base)]) == 0
    return out


@pytest.fixture(scope="module")
def judge(folder):
    return load_judge(folder, dtype="float32")


@pytest.fixture(scope="module")
def public(base, ckpt):
    """The public pipeline's model and processor (image/video processors need torchvision, which
    stays out of the environment: audio-only inputs never call them, so stubs stand in)."""
    from peft import PeftModel
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    thinker = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(str(base), dtype=torch.float32)
    model = PeftModel.from_pretrained(thinker, str(ckpt / "native" / "lora"))
    head = torch.load(ckpt / "reward_head.pt", map_location="cpu", weights_only=True)
    head = {k: v.float() for k, v in head.items()}
    reward_model = PublicRewardModel(model, head).eval()

    class StubImageProcessor(ImageProcessingMixin):
        pass

    check = ProcessorMixin.check_argument_for_proper_class
    patch = pytest.MonkeyPatch()
    patch.setattr(Qwen2_5OmniProcessor, "check_argument_for_proper_class",
                  lambda self, name, arg: None if name in ("image_processor", "video_processor")
                  else check(self, name, arg))
    template = json.loads((base / "chat_template.json").read_text())["chat_template"]
    processor = Qwen2_5OmniProcessor(image_processor=StubImageProcessor(), video_processor=object(),
                                     feature_extractor=WhisperFeatureExtractor.from_pretrained(str(base)),
                                     tokenizer=AutoTokenizer.from_pretrained(str(base)), chat_template=template)
    patch.undo()

    @torch.no_grad()
    def rewards(waves, texts):
        """get_pointwise_reward (one clip) / get_pairwise_rewards (two, one padded batch)."""
        conversations = [build_rm_conversation("clip.wav", t) for t in texts]
        text = processor.apply_chat_template(conversations, add_generation_prompt=True, tokenize=False)
        inputs = processor(text=text, audio=list(waves), images=None, videos=None, return_tensors="pt",
                           padding=True, use_audio_in_video=False)
        return [r[0] for r in reward_model(inputs).tolist()], inputs

    return rewards


def _waves():
    return [speechlike(s, seed=i) for i, s in enumerate(SECONDS)]


def _inputs():
    return [{"wave": w, "fields": {"text": t}} for w, t in zip(_waves(), TEXTS)]


@pytest.fixture(scope="module")
def batched(judge):
    """The judge's rewards of the three clips, scored as one batch."""
    return [r["score"] for r in judge.score(_inputs(), batch_size=3)]


def test_imported_folder_loads_as_a_scalar_reward_judge(judge, folder, base):
    cfg = json.loads((folder / "judge_config.json").read_text())
    assert isinstance(judge, ScalarRewardJudge) and cfg["kind"] == "scalar_reward"
    assert cfg["base_model"] == str(base.resolve()) and cfg["imported_from"]["head_dtype"] == "bfloat16"
    assert cfg["imported_from"]["adapter_keys_renamed"] > 0  # 4.52 names -> the installed transformers' names
    assert (folder / REWARD_HEAD).is_file() and (folder / "adapter_model.safetensors").is_file()
    assert not list(folder.glob("*.pt")) and not list(folder.glob("*.bin"))
    prov = judge.provenance()
    assert prov["judge"] == "speechjudge-btrm" and prov["prompt_version"] == "speechjudge-btrm"
    assert prov["dtype"] == "float32" and len(prov["checkpoint_sha256"]) == 16


def test_rewards_equal_the_public_pipeline(judge, public, batched):
    for wave, text, score in zip(_waves(), TEXTS, batched):
        (expected,), inputs = public([wave], [text])
        # the same token sequence: SpeechJudge's three text items render with no separator
        assert judge.prepare(wave, {"text": text})["input_ids"].tolist() == inputs["input_ids"][0].tolist()
        assert abs(score - expected) <= 1e-5, (score, expected)
    assert np.std(batched) > 1e-3  # the rewards differ, so the comparison above means something
    with judge.backbone.model.disable_adapter():  # and the adapter counts in them
        assert abs(judge.score(_inputs()[:1])[0]["score"] - batched[0]) > 1e-3


def test_rewards_do_not_depend_on_batch_size(judge, batched):
    for batch_size in (1, 2):
        scores = [r["score"] for r in judge.score(_inputs(), batch_size=batch_size)]
        assert np.max(np.abs(np.array(scores) - batched)) <= 1e-5


def test_pair_rewards_match_the_public_pairwise_result(judge, public):
    """Two renditions of one text scored in one batch, as SpeechJudge's pairwise inference does."""
    a, b = _waves()[:2]
    text = TEXTS[0]
    (pa, pb), _ = public([a, b], [text, text])
    ra, rb = (r["score"] for r in judge.score([{"wave": w, "fields": {"text": text}} for w in (a, b)], batch_size=2))
    assert abs(ra - pa) <= 1e-5 and abs(rb - pb) <= 1e-5 and pa != pb


def test_save_and_reload_keep_the_rewards(judge, batched, tmp_path):
    again = load_judge(judge.save_pretrained(tmp_path / "copy"), dtype="float32")
    assert isinstance(again, ScalarRewardJudge) and again.checkpoint_hash == judge.checkpoint_hash
    assert [r["score"] for r in again.score(_inputs(), batch_size=3)] == pytest.approx(batched, abs=1e-6)
    with pytest.raises(ValueError, match=r"needs prompt fields \['text'\]"):
        judge.score([{"wave": _waves()[0]}])


def _copy_ckpt(ckpt, dst):
    import shutil

    shutil.copytree(ckpt, dst)
    return dst


def test_a_bin_adapter_imports_to_the_same_tensors(base, ckpt, folder, tmp_path):
    from safetensors.torch import load_file

    alt = _copy_ckpt(ckpt, tmp_path / "ckpt")
    state = load_file(str(alt / "lora" / "adapter_model.safetensors"))
    (alt / "lora" / "adapter_model.safetensors").unlink()
    torch.save(state, alt / "lora" / "adapter_model.bin")
    out = import_btrm(alt, base=base, out=tmp_path / "judge")
    got = load_file(str(out / "adapter_model.safetensors"))
    want = load_file(str(folder / "adapter_model.safetensors"))
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)


def test_a_target_pattern_of_the_old_layout_is_replaced_by_the_adapter_modules(base, ckpt, batched, tmp_path):
    """A regex ``target_modules`` written for transformers 4.52 names matches nothing in the
    installed layout; the importer then names the adapter's modules exactly, and the rewards hold."""
    alt = _copy_ckpt(ckpt, tmp_path / "ckpt")
    path = alt / "lora" / "adapter_config.json"
    config = json.loads(path.read_text())
    config["target_modules"] = r"^(model\.layers|audio_tower\.layers|visual\.blocks)\.\d+\..*_proj$"
    path.write_text(json.dumps(config))
    out = import_btrm(alt, base=base, out=tmp_path / "judge")
    targets = json.loads((out / "adapter_config.json").read_text())["target_modules"]
    assert isinstance(targets, list) and any(t.startswith("model.audio_tower.") for t in targets)
    again = load_judge(out, dtype="float32")
    assert [r["score"] for r in again.score(_inputs(), batch_size=3)] == pytest.approx(batched, abs=1e-6)


def test_an_adapter_of_another_model_is_refused_naming_the_file(base, ckpt, tmp_path):
    from safetensors.torch import load_file, save_file

    alt = _copy_ckpt(ckpt, tmp_path / "ckpt")
    path = alt / "lora" / "adapter_model.safetensors"
    state = load_file(str(path))
    key = next(k for k in state if k.endswith("model.layers.1.mlp.up_proj.lora_A.weight"))
    save_file({**state, key: torch.zeros(4, 48)}, str(path))
    match = r"adapter_model\.safetensors: .*up_proj\.lora_A\.weight has shape \(4, 48\), but .* is Linear\(32, 64\)"
    with pytest.raises(SpeechJudgeImportError, match=match):
        import_btrm(alt, base=base, out=tmp_path / "judge")
    assert not (tmp_path / "judge").exists()


@pytest.mark.parametrize("bad", ["shape", "keys", "pickle"])
def test_a_bad_reward_head_is_refused_naming_the_file(base, ckpt, tmp_path, bad):
    alt = _copy_ckpt(ckpt, tmp_path / "ckpt")
    path = alt / "reward_head.pt"
    marker = tmp_path / "unpickled"
    if bad == "shape":
        torch.save({"weight": torch.zeros(1, 33), "bias": torch.zeros(1)}, path)
        match = r"reward_head\.pt: weight \(1, 33\) and bias \(1,\), expected weight \(1, 32\)"
    elif bad == "keys":
        torch.save({"to_reward.weight": torch.zeros(1, 32), "to_reward.bias": torch.zeros(1)}, path)
        match = r"reward_head\.pt: keys \['to_reward\.bias', 'to_reward\.weight'\]"
    else:
        torch.save({"weight": torch.zeros(1, 32), "bias": torch.zeros(1), "x": _Payload(str(marker))}, path)
        match = r"reward_head\.pt: not a plain tensor state dict, refused by torch\.load\(weights_only=True\)"
    with pytest.raises(SpeechJudgeImportError, match=match) as e:
        import_btrm(alt, base=base, out=tmp_path / "judge")
    assert "\n" not in str(e.value) and str(path) in str(e.value)
    assert not marker.exists() and not (tmp_path / "judge").exists()  # nothing unpickled, nothing written
    with pytest.raises(SystemExit, match="import_speechjudge: .*reward_head.pt"):
        main(["--ckpt", str(alt), "--out", str(tmp_path / "judge"), "--base", str(base)])


class _Payload:
    """Unpickling this without ``weights_only`` would create a file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_folder_whose_adapter_misses_modules_is_refused(folder, tmp_path):
    """Adapter keys of another transformers layout load as "missing" in peft (a warning only):
    the judge refuses to run with part of its adapter silently absent."""
    import shutil

    from safetensors.torch import load_file, save_file

    from evaluators.judges import JudgeFolderError

    alt = tmp_path / "judge"
    shutil.copytree(folder, alt)
    state = load_file(str(alt / "adapter_model.safetensors"))
    save_file({_flat_layout(k): v for k, v in state.items()}, str(alt / "adapter_model.safetensors"))
    with pytest.raises(JudgeFolderError, match=r"adapter_model\.safetensors does not fit the base model"):
        load_judge(alt, dtype="float32")
