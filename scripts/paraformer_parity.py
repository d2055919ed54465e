"""Chinese CER parity: omnijudge's ZH path (``score nvv --measure wer --paraformer-checkpoint``:
FunASR's paraformer-zh through :mod:`evaluators.measures.paraformer`, then
:mod:`evaluators.benchmarks.nvv.intelligibility`) against NVV-SuperBench's own ``wer_cer/run_wer.py``,
run unmodified on a paraformer-zh stand-in (``scripts/paraformer_standin.py``), clip by clip
(docs/nvv.md#wercer: the method and the result).

The public script runs in a virtual environment with FunASR and its own pin ``jiwer==3.0.3``;
``AutoModel(model="paraformer-zh")`` resolves to the stand-in, and each clip is its own fresh
``runpy`` run (as the first clip of a public run). A clip the public script stops on is reported,
not compared. ``--write-golden`` runs its ``process_one`` (read from ``run_wer.py``) on
:data:`GOLDEN_CASES` and stores the results the tests compare against.

    python scripts/paraformer_parity.py --run-wer NVBENCH/evaluation/objective_evaluation/wer_cer/run_wer.py
        [--venv /tmp/paraformer-parity-venv] [--work DIR] [--write-golden]

Prints per clip the two transcripts and CERs; exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "nvv_cer_golden.json"
FUNASR = "funasr[knf]==1.4.16"
PUBLIC_JIWER = "jiwer==3.0.3"
#: (reference, raw ASR transcript, lang): paraformer-style spaced characters, traditional characters,
#: Latin words, full-width and ASCII punctuation, apostrophes, doubled spaces, empty hypotheses
GOLDEN_CASES = [
    ("你好，世界。", "你 好 世 界", "zh"),
    ("我用iPhone拍照。", "我 用 iphone 拍 照", "zh"),
    ("这个苹果很难说！", "這 個 蘋 果 很 難 說", "zh"),
    ("他说：“好的”，然后笑了。", "他 说 好 的 然 后 哈 哈 笑 了", "zh"),
    ("好的  我知道", "好 的 我 知 道", "zh"),
    ("今天天气很好", "", "zh"),
    ("OK，我们走吧……", "ok 我 们 走", "zh"),
    ("(笑) 真的吗？", "真 的 吗", "zh"),
    ("It's a sunny day, isn't it?", "its a sunny day isnt it", "en"),
    ("Hello—world… (laughs)", "hello world laughs", "en"),
    ("Wait,  what?!", "WAIT WHAT", "en"),
]
#: (name, seconds, rate, channels, kind): rates FunASR resamples (librosa without torchaudio), stereo
CLIPS = [("a_16k", 1.2, 16_000, 1, "speech"), ("b_24k", 2.5, 24_000, 1, "speech"),
         ("c_44k_stereo", 1.8, 44_100, 2, "speech"), ("d_22k", 3.4, 22_050, 1, "speech"),
         ("e_48k", 0.9, 48_000, 1, "noise"), ("f_16k_long", 6.0, 16_000, 1, "speech"),
         ("g_16k_quiet", 0.08, 16_000, 1, "silence")]
REFERENCES = ["很好，我国呢？", "国呢，照说這樣。", "国国我们", "国会后开！", "他们时候",
              "很好呢，后来我说国家the这开始说", "啊"]


def public_normaliser(run_wer: Path) -> str:
    """Source of the public script's imports-free parts: ``punctuation_all`` and ``process_one``,
    taken from ``run_wer.py`` itself (its module body runs the whole ASR, so it is not imported)."""
    import ast

    tree = ast.parse(run_wer.read_text(encoding="utf-8"))
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "process_one"
            or isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "punctuation_all" for t in n.targets)]
    if len(keep) != 2:
        raise SystemExit(f"{run_wer}: no punctuation_all / process_one found; is it wer_cer/run_wer.py?")
    head = "from jiwer import compute_measures\nfrom zhon.hanzi import punctuation\nimport string\nimport zhconv\n"
    return head + "\n".join(ast.unparse(n) for n in keep)


def write_golden(run_wer: Path, jiwer_dir: Path) -> None:
    """Run the public ``process_one`` (jiwer 3.0.3) on :data:`GOLDEN_CASES`; write :data:`GOLDEN`."""
    code = public_normaliser(run_wer) + """
import json, sys
out = []
for truth, raw, lang in json.loads(sys.argv[1]):
    hypo = zhconv.convert(raw, 'zh-cn') if lang == 'zh' else raw
    globals()['lang'] = lang
    t, h, wer, sub, dele, ins = process_one(hypo, truth)
    out.append({'truth': truth, 'transcript': raw, 'lang': lang, 'hypothesis': h,
                'wer': wer, 'sub': sub, 'del': dele, 'ins': ins})
print(json.dumps(out, ensure_ascii=False))
"""
    env = {**os.environ, "PYTHONPATH": str(jiwer_dir)}
    res = subprocess.run([sys.executable, "-c", code, json.dumps(GOLDEN_CASES)], env=env, check=True,
                         capture_output=True, text=True)
    rows = json.loads(res.stdout.strip().splitlines()[-1])
    GOLDEN.write_text(json.dumps({"source": "NVV-SuperBench wer_cer/run_wer.py process_one, jiwer 3.0.3",
                                  "cases": rows}, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {GOLDEN} ({len(rows)} cases)")


def ensure_venv(venv: Path) -> Path:
    """A virtual environment over this interpreter's packages, plus FunASR; returns its python."""
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    if subprocess.run([str(py), "-c", "import funasr, kaldi_native_fbank"], capture_output=True).returncode:
        subprocess.run([str(py), "-m", "pip", "install", "-q", FUNASR, "-c", str(ROOT / "constraints.txt")],
                       check=True)
    return py


def ensure_jiwer3(target: Path) -> Path:
    """The public pin ``jiwer==3.0.3`` in its own folder (put first on PYTHONPATH for the public side)."""
    if not (target / "jiwer").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                        PUBLIC_JIWER], check=True)
    return target


def write_clips(work: Path) -> list[tuple[Path, str]]:
    """The :data:`CLIPS` as 16-bit WAV files (speech-like tones, noise, near silence) and their references."""
    import numpy as np
    import soundfile as sf

    out = []
    for (name, seconds, sr, channels, kind), ref in zip(CLIPS, REFERENCES):
        g = np.random.default_rng(len(out))
        t = np.arange(int(seconds * sr)) / sr
        if kind == "speech":
            x = sum(0.2 / k * np.sin(2 * np.pi * 140 * k * t * (1 + 0.05 * np.sin(3 * t))) for k in range(1, 6))
            x = x * (0.6 + 0.4 * np.sin(2 * np.pi * 3.5 * t) ** 2) + 0.01 * g.standard_normal(t.size)
        elif kind == "noise":
            x = 0.1 * g.standard_normal(t.size)
        else:
            x = 1e-4 * g.standard_normal(t.size)
        x = np.stack([x, 0.5 * x], 1) if channels == 2 else x
        path = work / "clips" / f"{name}.wav"
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(path, x, sr, subtype="PCM_16")
        out.append((path, ref))
    return out


PUBLIC_DRIVER = """
import json, runpy, sys, traceback
import funasr.download.name_maps_from_hub as maps
run_wer, standin, work = sys.argv[1], sys.argv[2], sys.argv[3]
maps.name_maps_ms["paraformer-zh"] = standin   # AutoModel(model="paraformer-zh") -> the stand-in folder
out = {}
for i, line in enumerate(open(work + "/list.txt", encoding="utf-8")):
    lst, res = f"{work}/one_{i}.lst", f"{work}/one_{i}.wer"
    open(lst, "w", encoding="utf-8").write(line)
    sys.argv = [run_wer, lst, res, "zh"]
    try:
        runpy.run_path(run_wer, run_name="__main__")
        f = open(res, encoding="utf-8").read().rstrip("\\n").split("\\t")
        out[f[0]] = {"wer": float(f[1]), "hypothesis": f[3], "ins": float(f[4]), "del": float(f[5]), "sub": float(f[6])}
    except Exception as e:
        out[line.split("|")[0]] = {"error": f"{type(e).__name__}: {e}"}
print("PUBLIC " + json.dumps(out, ensure_ascii=False))
"""

PROJECT_DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[3])
from evaluators.benchmarks.nvv.intelligibility import IntelligibilityMeasure
from evaluators.measures.paraformer import ParaformerRunner
class Item:
    def __init__(self, text): self.reference_text, self.lang = text, "zh"
m = IntelligibilityMeasure(None, zh_asr=ParaformerRunner(sys.argv[1]).load())
out = {}
for line in open(sys.argv[2] + "/list.txt", encoding="utf-8"):
    path, ref = line.rstrip("\\n").split("|")
    wave, _ = m.read_item(path, Item(ref))
    row = m.measure([wave], [Item(ref)])[0]
    out[path] = {k: row[k] for k in ("wer", "hypothesis", "ins", "del", "sub", "asr")}
print("PROJECT " + json.dumps(out, ensure_ascii=False))
"""


def run_side(py: Path, driver: str, args: list[str], tag: str, env: dict | None = None) -> dict:
    res = subprocess.run([str(py), "-c", driver, *args], capture_output=True, text=True, env=env)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith(tag + " ")), None)
    if line is None:
        raise SystemExit(f"{tag.lower()} side failed (exit {res.returncode}):\n{res.stderr[-3000:]}")
    return json.loads(line[len(tag) + 1:])


def compare(public: dict, project: dict) -> int:
    """Print the clip-by-clip comparison; returns the number of clips that differ."""
    bad = 0
    for path, pub in public.items():
        own = project[path]
        name = Path(path).stem
        if "error" in pub:
            print(f"{name:14s} public script stops: {pub['error']}; omnijudge: {own['hypothesis']!r} CER {own['wer']:.3f}")
            continue
        diff = max(abs(pub[k] - own[k]) for k in ("wer", "sub", "del", "ins"))
        same = pub["hypothesis"] == own["hypothesis"] and diff == 0.0
        bad += not same
        print(f"{name:14s} {'same' if same else 'DIFFERENT'}  CER public {pub['wer']:.4f} omnijudge {own['wer']:.4f}  "
              f"transcript {own['hypothesis']!r}" + ("" if same else f" vs public {pub['hypothesis']!r}"))
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run-wer", required=True, type=Path,
                    help="the benchmark's evaluation/objective_evaluation/wer_cer/run_wer.py (github lmxue/nvbench)")
    ap.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "paraformer-parity-venv")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    ap.add_argument("--write-golden", action="store_true", help="write tests/data/nvv_cer_golden.json and stop")
    args = ap.parse_args(argv)
    if not args.run_wer.is_file():
        raise SystemExit(f"--run-wer {args.run_wer}: not found")
    jiwer3 = ensure_jiwer3(args.venv.parent / (args.venv.name + "-jiwer3"))
    if args.write_golden:
        write_golden(args.run_wer, jiwer3)
        return 0
    py = ensure_venv(args.venv)
    work = args.work or Path(tempfile.mkdtemp(prefix="paraformer-parity-"))
    work.mkdir(parents=True, exist_ok=True)
    standin = work / "paraformer-zh"
    subprocess.run([str(py), str(ROOT / "scripts" / "paraformer_standin.py"), str(standin)], check=True,
                   capture_output=True)
    clips = write_clips(work)
    (work / "list.txt").write_text("".join(f"{p}|{ref}\n" for p, ref in clips), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(jiwer3)}
    public = run_side(py, PUBLIC_DRIVER, [str(args.run_wer.resolve()), str(standin), str(work)], "PUBLIC", env)
    project = run_side(py, PROJECT_DRIVER, [str(standin), str(work), str(ROOT)], "PROJECT")
    bad = compare(public, project)
    compared = sum("error" not in v for v in public.values())
    print(f"{compared - bad}/{compared} clips: transcript and CER/sub/del/ins identical to run_wer.py on the stand-in")
    return 1 if bad or not compared else 0


if __name__ == "__main__":
    raise SystemExit(main())
