"""A stand-in for FunASR's ``paraformer-zh`` (ModelScope
``iic/speech_seaco_paraformer_large_asr_nat-zh-cn-16k-common-vocab8404-pytorch``, the model
NVV-SuperBench's ``wer_cer/run_wer.py`` loads with ``AutoModel(model="paraformer-zh")``): a folder in
the layout FunASR downloads, with random weights made by FunASR's own ``SeacoParaformer`` class
(docs/nvv.md#wercer).

The folder holds ``configuration.json`` (ModelScope's ``file_path_metas``), ``config.yaml`` (the
released model's sections and keys; ``--size tiny``, the default, shrinks widths and depths, ``--size
real`` keeps them: about 220 M parameters; ``dither: 0.0``, so FunASR's output is deterministic),
``model.pt``, ``am.mvn`` (Kaldi nnet CMVN), ``tokens.json`` (with traditional characters and English
word pieces, so random weights give mixed-script transcripts for the post-processing) and ``seg_dict``.

    python scripts/paraformer_standin.py OUT_DIR [--size tiny|real] [--seed 0]

Needs ``funasr`` (``pip install 'omnijudge[paraformer]'``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

MODELSCOPE_ID = "iic/speech_seaco_paraformer_large_asr_nat-zh-cn-16k-common-vocab8404-pytorch"
N_MELS, LFR_M = 80, 7
#: characters of the stand-in vocabulary: common simplified ones, traditional ones zhconv rewrites
CHARACTERS = list("的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要她出也得里后自以会"
                  "好世界知道拍照今天气很笑声音哈呵嗯啊哦吧呢吗") + list("這個蘋果說話們時會開")
PIECES = ["i@@", "phone", "hel@@", "lo", "ok", "a", "the", "ha@@", "ha"]
SIZES = {
    "tiny": {"dim": 32, "heads": 2, "units": 64, "enc_blocks": 2, "dec_blocks": 2, "seaco_blocks": 1,
             "seaco_units": 64, "vocab": None},
    "real": {"dim": 512, "heads": 4, "units": 2048, "enc_blocks": 50, "dec_blocks": 16, "seaco_blocks": 4,
             "seaco_units": 1024, "vocab": 8404},
}


def token_list(size: str) -> list[str]:
    """The stand-in's tokens.json list; ``real`` pads it to the released 8404 entries."""
    tokens = ["<blank>", "<s>", "</s>"] + CHARACTERS + PIECES
    n = SIZES[size]["vocab"]
    if n:  # further CJK characters, none twice (FunASR refuses a duplicated token)
        pad = (chr(c) for c in range(0x4E00, 0x9FA6) if chr(c) not in set(tokens))
        tokens += [next(pad) for _ in range(n - len(tokens) - 1)]
    return tokens + ["<unk>"]


def config(size: str, n_tokens: int) -> dict:
    """config.yaml as a dict: the released paraformer-zh's sections and keys, widths from ``size``."""
    s = SIZES[size]
    sanm = {"attention_heads": s["heads"], "linear_units": s["units"], "dropout_rate": 0.1,
            "positional_dropout_rate": 0.1, "kernel_size": 11, "sanm_shfit": 0}
    return {
        "model": "SeacoParaformer",
        "model_conf": {"ctc_weight": 0.0, "lsm_weight": 0.1, "length_normalized_loss": True,
                       "predictor_weight": 1.0, "predictor_bias": 1, "sampling_ratio": 0.75,
                       "inner_dim": s["dim"], "bias_encoder_type": "lstm", "bias_encoder_bid": False,
                       "seaco_lsm_weight": 0.1, "seaco_length_normalized_loss": True, "train_decoder": True,
                       "NO_BIAS": n_tokens - 27},
        "encoder": "SANMEncoder",
        "encoder_conf": {**sanm, "output_size": s["dim"], "num_blocks": s["enc_blocks"],
                         "attention_dropout_rate": 0.1, "input_layer": "pe",
                         "pos_enc_class": "SinusoidalPositionEncoder", "normalize_before": True,
                         "selfattention_layer_type": "sanm"},
        "decoder": "ParaformerSANMDecoder",
        "decoder_conf": {**sanm, "num_blocks": s["dec_blocks"], "att_layer_num": s["dec_blocks"],
                         "self_attention_dropout_rate": 0.1, "src_attention_dropout_rate": 0.1},
        "seaco_decoder": "ParaformerSANMDecoder",
        "seaco_decoder_conf": {**sanm, "linear_units": s["seaco_units"], "kernel_size": 21,
                               "num_blocks": s["seaco_blocks"], "att_layer_num": s["seaco_blocks"],
                               "self_attention_dropout_rate": 0.1, "src_attention_dropout_rate": 0.1,
                               "use_output_layer": False, "wo_input_layer": True},
        "predictor": "CifPredictorV3",
        "predictor_conf": {"idim": s["dim"], "threshold": 1.0, "l_order": 1, "r_order": 1,
                           "tail_threshold": 0.45, "smooth_factor2": 0.25, "noise_threshold2": 0.01,
                           "upsample_times": 3, "use_cif1_cnn": False, "upsample_type": "cnn_blstm"},
        "frontend": "WavFrontend",
        "frontend_conf": {"fs": 16000, "window": "hamming", "n_mels": N_MELS, "frame_length": 25,
                          "frame_shift": 10, "lfr_m": LFR_M, "lfr_n": 6, "dither": 0.0},
        "specaug": None,
        "normalize": None,
        "tokenizer": "CharTokenizer",
        "tokenizer_conf": {"unk_symbol": "<unk>", "split_with_space": True},
    }


def write_mvn(path: Path, rng: np.random.Generator) -> None:
    """am.mvn in Kaldi nnet text form: shift ~ -(log-mel mean), rescale ~ 1/std, LFR-stacked (560)."""
    dim = N_MELS * LFR_M
    shift = " ".join(f"{v:.6f}" for v in -(8.0 + rng.normal(0, 1.0, dim)))
    scale = " ".join(f"{v:.6f}" for v in 0.3 + 0.05 * rng.random(dim))
    path.write_text(f"<Nnet>\n<Splice> {dim} {dim}\n[ 0 ]\n<AddShift> {dim} {dim}\n<LearnRateCoef> 0 [ {shift} ]\n"
                    f"<Rescale> {dim} {dim}\n<LearnRateCoef> 0 [ {scale} ]\n</Nnet>\n")


def build_model(cfg: dict, n_tokens: int, seed: int):
    """FunASR's own SeacoParaformer from ``cfg`` (as ``AutoModel.build_model`` merges ``model_conf``
    into the top-level keys), random weights from ``seed``; the CIF predictor's output bias is set
    so a random encoder still fires a few tokens per second."""
    import torch
    import funasr  # noqa: F401  (fills the class registry)
    from funasr.register import tables

    torch.manual_seed(seed)
    kwargs = {**cfg, **cfg["model_conf"], "vocab_size": n_tokens, "input_size": N_MELS * LFR_M}
    kwargs = {k: v for k, v in kwargs.items() if k not in ("frontend", "tokenizer")}
    model = tables.model_classes.get(cfg["model"])(**kwargs)
    with torch.no_grad():
        model.predictor.cif_output.bias.fill_(-0.7)
        model.decoder.output_layer.weight.mul_(40.0)  # spread the argmax over the vocabulary
    return model.eval()


def write_standin(folder: str | Path, size: str = "tiny", seed: int = 0) -> Path:
    """Write the stand-in folder (module docstring); returns it."""
    import torch
    import yaml

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokens = token_list(size)
    cfg = config(size, len(tokens))
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    (folder / "tokens.json").write_text(json.dumps(tokens, ensure_ascii=False, indent=0))
    (folder / "seg_dict").write_text("".join(f"{w} {w}\n" for w in CHARACTERS) +
                                     "iphone i@@ phone\nhello hel@@ lo\nhaha ha@@ ha\n")
    write_mvn(folder / "am.mvn", np.random.default_rng(seed))
    (folder / "configuration.json").write_text(json.dumps({
        "framework": "pytorch", "task": "auto-speech-recognition", "model": {"type": "funasr"},
        "pipeline": {"type": "funasr-pipeline"}, "model_name_in_hub": {"ms": MODELSCOPE_ID, "hf": ""},
        "file_path_metas": {"init_param": "model.pt", "config": "config.yaml",
                            "tokenizer_conf": {"token_list": "tokens.json", "seg_dict_file": "seg_dict"},
                            "frontend_conf": {"cmvn_file": "am.mvn"}}}, indent=2))
    torch.save(build_model(cfg, len(tokens), seed).state_dict(), folder / "model.pt")
    return folder


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="folder to write")
    ap.add_argument("--size", choices=sorted(SIZES), default="tiny")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    folder = write_standin(args.out, args.size, args.seed)
    n = sum(p.stat().st_size for p in folder.iterdir())
    print(f"{folder}: paraformer-zh stand-in ({args.size}), {n / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
