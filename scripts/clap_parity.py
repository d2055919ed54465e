"""CLAP-2023 parity: omnijudge's implementation (evaluators/measures/clap_model.py) against
``msclap`` 1.3.4 itself, run in a throwaway virtual environment with msclap's own pins
(transformers < 5, numpy < 2, librosa < 0.11), on a stand-in checkpoint in the released file's
layout (docs/nvv.md#clap-score: the method and the measured differences).

The stand-in's parameters and batch-norm statistics come from generators seeded by their key names
(:func:`standin_tensor`; msclap's STFT / mel matrices kept), so ``--golden-only`` rebuilds it
without msclap; GPT-2's tokenizer is a stand-in too (:func:`write_standin_tokenizer`). In the venv,
torchaudio's compiled extension (a CUDA build that cannot load beside the CPU torch) is moved aside,
and msclap's ``torchaudio.load`` reads through ``soundfile`` (the same PCM for 16-bit WAV).

    python scripts/clap_parity.py [--venv /tmp/clap-parity-venv] [--golden tests/data/clap_parity_golden.json]
    python scripts/clap_parity.py --write-golden    # (re)write the golden from msclap's numbers
    python scripts/clap_parity.py --golden-only     # no venv: rebuild the stand-in, compare to the golden

Prints the largest absolute difference of the similarities (and of the token ids) and exits 1
above the tolerance (1e-5).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "clap_parity_golden.json"
TOLERANCE = 1e-5
SEED = 1234
MSCLAP = "msclap==1.3.4"
VENV_PINS = ["librosa>=0.10.1,<0.11", "numpy<2", "pandas<3", "pyyaml", "scikit-learn", "torchlibrosa<0.2",
             "tqdm", "transformers>=4.34,<5", "soundfile", "huggingface_hub"]
TEXTS = ["A woman laughs softly, then says hello.",
         "Wow! He coughs twice and sighs [breath] before speaking again!",
         "a child giggles",
         "An old man clears his throat, pauses for a long moment, then whispers a very long sentence about "
         "the weather, the harbour, the ships and the gulls that circle overhead all afternoon."]
#: (name, seconds, rate, channels): shorter than 7 s (repeat), longer (seeded crop), stereo, exactly 7 s
CLIPS = [("short_16k", 2.5, 16_000, 1), ("long_24k", 9.3, 24_000, 1), ("stereo_48k", 3.0, 48_000, 2),
         ("exact_44k", 7.0, 44_100, 1)]
FRONT_END_SUFFIXES = ("stft.conv_real.weight", "stft.conv_imag.weight", "logmel_extractor.melW")
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ a", "i n", "Ġ s", "e r", "Ġ w", "o n", "Ġ h"]


def standin_tensor(key: str, shape: tuple[int, ...]) -> np.ndarray:
    """The stand-in value of checkpoint entry ``key`` (float32, seeded by the key's CRC32):
    1-D weights (norms) 1 + N(0, 0.1^2), running variances 0.5 + 0.5 |N|, running means
    N(0, 0.1^2), everything else (matrices, biases) N(0, 0.05^2)."""
    g = np.random.default_rng(zlib.crc32(key.encode()))
    n = g.standard_normal(shape).astype(np.float32)
    if key.endswith("running_var"):
        return (0.5 + 0.5 * np.abs(n)).astype(np.float32)
    if key.endswith("running_mean"):
        return (0.1 * n).astype(np.float32)
    if len(shape) == 1 and key.endswith(".weight"):
        return (1.0 + 0.1 * n).astype(np.float32)
    return (0.05 * n).astype(np.float32)


def standin_keys(named_params, named_buffers) -> list[str]:
    """Which entries get :func:`standin_tensor`: every parameter but the frozen front end, plus
    batch-norm running statistics (not derived buffers such as attention masks)."""
    keys = [k for k, _ in named_params if not k.endswith(FRONT_END_SUFFIXES) and k != "logit_scale"]
    return keys + [k for k, _ in named_buffers if k.endswith(("running_mean", "running_var"))]


def write_standin_tokenizer(folder: Path) -> Path:
    """A GPT-2-format byte-level BPE (``vocab.json``, ``merges.txt``, ``tokenizer_config.json``):
    the 256 byte symbols in GPT-2's order (so ``"!"`` is id 0, as in GPT-2), :data:`MERGES`,
    ``<|endoftext|>`` last (``bytes_to_unicode``: GPT-2's byte -> character map)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {c: i for i, c in enumerate(bytes_to_unicode().values())}
    for m in MERGES:
        vocab.setdefault(m.replace(" ", ""), len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(MERGES) + "\n")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "GPT2Tokenizer", "model_max_length": 1024, "add_prefix_space": False,
        "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}))
    return folder


def write_clips(folder: Path) -> list[Path]:
    """:data:`CLIPS` as seeded 16-bit WAVs (tones + noise bursts)."""
    import soundfile as sf

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (name, secs, sr, ch) in enumerate(CLIPS):
        g = np.random.default_rng(SEED + i)
        t = np.arange(int(secs * sr)) / sr
        x = np.stack([0.3 * np.sin(2 * np.pi * (220 + 110 * c + 40 * i) * t) * (1 + np.sin(3 * t)) / 2
                      + 0.05 * g.standard_normal(t.size) for c in range(ch)], axis=1)
        paths.append(folder / f"{name}.wav")
        sf.write(paths[-1], np.clip(x, -1, 1), sr, subtype="PCM_16")
    return paths


def build_venv(venv: Path) -> Path:
    """A virtual environment with msclap 1.3.4 and its pins (see module docstring); its python."""
    py = venv / "bin" / "python"
    if (venv / ".ready").is_file():
        return py
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q"]
    subprocess.run(pip + ["torch==2.13.0"], check=True)
    subprocess.run(pip + ["--no-deps", "torchaudio==2.11.0", MSCLAP], check=True)
    subprocess.run(pip + VENV_PINS + ["torch==2.13.0"], check=True)
    lib = Path(subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('torchaudio').submodule_search_locations[0])"],
                              check=True, capture_output=True, text=True).stdout.strip()) / "lib"
    aside = venv / "torchaudio_ext_aside"
    aside.mkdir(exist_ok=True)
    for so in lib.glob("*.so"):
        so.rename(aside / so.name)
    (venv / ".ready").write_text(MSCLAP + "\n")
    return py


REFERENCE = r'''
import json, random, sys
import numpy as np, soundfile as sf, torch, yaml
import torch.nn.functional as F
sys.path.insert(0, sys.argv[1])
import clap_parity as cp
import msclap, msclap.CLAPWrapper as W, msclap.models.clap as M
from pathlib import Path
from transformers import AutoTokenizer, GPT2Config, GPT2Model

work, tok_dir = Path(sys.argv[2]), sys.argv[3]
clips = [Path(p) for p in sys.argv[4].split(",")]
class StandinText:  # msclap's AutoModel.from_pretrained("gpt2") without the hub
    @staticmethod
    def from_pretrained(name): return GPT2Model(GPT2Config())
class StandinTokenizer:
    @staticmethod
    def from_pretrained(name): return AutoTokenizer.from_pretrained(tok_dir)
def sf_load(path):  # torchaudio.load's normalised float32 (channels, time)
    data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return torch.from_numpy(np.ascontiguousarray(data.T)), sr
M.AutoModel, W.AutoTokenizer, W.torchaudio.load = StandinText, StandinTokenizer, sf_load
cfg = yaml.safe_load((Path(W.__file__).parent / "configs/config_2023.yml").read_text())
clap = M.CLAP(audioenc_name=cfg["audioenc_name"], sample_rate=cfg["sampling_rate"], window_size=cfg["window_size"],
              hop_size=cfg["hop_size"], mel_bins=cfg["mel_bins"], fmin=cfg["fmin"], fmax=cfg["fmax"],
              classes_num=cfg["num_classes"], out_emb=cfg["out_emb"], text_model=cfg["text_model"],
              transformer_embed_dim=cfg["transformer_embed_dim"], d_proj=cfg["d_proj"])
state = clap.state_dict()
for k in cp.standin_keys(clap.named_parameters(), clap.named_buffers()):
    state[k] = torch.from_numpy(cp.standin_tensor(k, tuple(state[k].shape)))
out = {"msclap": msclap.__name__ + " " + __import__("importlib.metadata").metadata.version("msclap"),
       "torch": torch.__version__, "transformers": __import__("transformers").__version__}
for variant, drop in (("full", ()), ("no_front_end", cp.FRONT_END_SUFFIXES)):
    ckpt = work / f"standin_{variant}.pth"
    torch.save({"model": {k: v for k, v in state.items() if not k.endswith(drop)}}, ckpt)
    wrapper = W.CLAPWrapper(model_fp=str(ckpt), version="2023", use_cuda=False)
    audio = []
    for p in clips:
        random.seed(cp.SEED)
        audio.append(wrapper.get_audio_embeddings([str(p)]))
    audio = torch.cat(audio)
    text = torch.cat([wrapper.get_text_embeddings([t]) for t in cp.TEXTS])
    sims = [[float((F.normalize(audio[i:i+1], dim=1) * F.normalize(text[j:j+1], dim=1)).sum()) for j in range(len(cp.TEXTS))]
            for i in range(len(clips))]
    out[variant] = {"similarity": sims, "checkpoint": str(ckpt)}
out["token_ids"] = [wrapper.preprocess_text([t])["input_ids"][0].tolist() for t in cp.TEXTS]
print(json.dumps(out))
'''


def run_msclap(py: Path, work: Path, tokenizer: Path, clips: list[Path]) -> dict:
    """msclap's similarities (clip x text) for both stand-in variants, computed in the venv."""
    script = work / "msclap_reference.py"
    script.write_text(REFERENCE)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    env.pop("PYTHONPATH", None)
    res = subprocess.run([str(py), str(script), str(Path(__file__).parent), str(work), str(tokenizer),
                          ",".join(map(str, clips))], capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"msclap reference failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def rebuild_standin(folder: Path) -> dict[str, Path]:
    """The stand-in checkpoints from the key names alone, with omnijudge's own module tree (the
    front end recomputed with librosa): what ``--golden-only`` compares."""
    import torch

    from evaluators.measures.clap_model import ClapModel

    model = ClapModel()
    state = model.state_dict()
    for k in standin_keys(model.named_parameters(), model.named_buffers()):
        state[k] = torch.from_numpy(standin_tensor(k, tuple(state[k].shape)))
    paths = {}
    for variant, drop in (("full", ()), ("no_front_end", FRONT_END_SUFFIXES)):
        paths[variant] = folder / f"standin_{variant}.pth"
        torch.save({"model": {k: v for k, v in state.items() if not k.endswith(drop)}}, paths[variant])
    return paths


def omnijudge_similarities(checkpoint: Path, tokenizer: Path, clips: list[Path]) -> tuple[list, list, float]:
    """omnijudge's clip x text similarities, token ids, and seconds per clip (audio + its text)."""
    from evaluators.measures.clap import ClapMeasure
    from evaluators.measures.clap_model import audio_embeddings, cosine, text_embeddings, tokenize

    m = ClapMeasure(checkpoint, tokenizer, seed=SEED).load()
    t0 = time.perf_counter()
    audio = audio_embeddings(m._model, [m.read(p)[0] for p in clips])
    text = text_embeddings(m._model, m._tokenizer, TEXTS)
    per_clip = (time.perf_counter() - t0) / len(clips)
    sims = [[cosine(audio[i:i + 1], text[j:j + 1])[0] for j in range(len(TEXTS))] for i in range(len(clips))]
    ids = [tokenize(m._tokenizer, t)[0][0].tolist() for t in TEXTS]
    return sims, ids, per_clip


def compare(reference: dict, work: Path, tokenizer: Path, clips: list[Path], checkpoints: dict) -> float:
    """Print and return the largest |omnijudge - reference| over both variants (token ids must be equal)."""
    worst = 0.0
    for variant in ("full", "no_front_end"):
        sims, ids, per_clip = omnijudge_similarities(checkpoints[variant], tokenizer, clips)
        diff = float(np.max(np.abs(np.array(sims) - np.array(reference[variant]["similarity"]))))
        worst = max(worst, diff)
        print(f"{variant}: max |omnijudge - msclap| similarity = {diff:.3g} "
              f"({len(clips)} clips x {len(TEXTS)} texts; {per_clip:.2f} s/clip incl. its text, this machine)")
        if ids != reference["token_ids"]:
            print("token ids differ from msclap's")
            worst = float("inf")
    return worst


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", default="/tmp/clap-parity-venv", help="virtual environment for msclap (built if absent)")
    ap.add_argument("--golden", default=str(GOLDEN), help="golden JSON of msclap's numbers")
    ap.add_argument("--write-golden", action="store_true", help="write msclap's numbers to --golden")
    ap.add_argument("--golden-only", action="store_true", help="no venv: compare with --golden on a rebuilt stand-in")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="clap_parity_") as tmp:
        work = Path(tmp)
        tokenizer = write_standin_tokenizer(work / "gpt2_standin")
        clips = write_clips(work / "clips")
        if args.golden_only:
            reference = json.loads(Path(args.golden).read_text())
            checkpoints = rebuild_standin(work)
        else:
            reference = run_msclap(build_venv(Path(args.venv)), work, tokenizer, clips)
            checkpoints = {v: Path(reference[v]["checkpoint"]) for v in ("full", "no_front_end")}
            if args.write_golden:
                keep = {k: reference[k] for k in ("msclap", "torch", "transformers", "token_ids")}
                keep.update({v: {"similarity": reference[v]["similarity"]} for v in ("full", "no_front_end")})
                Path(args.golden).parent.mkdir(parents=True, exist_ok=True)
                Path(args.golden).write_text(json.dumps(keep, indent=1) + "\n")
        worst = compare(reference, work, tokenizer, clips, checkpoints)
    print(f"largest difference {worst:.3g} (tolerance {TOLERANCE:g})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
