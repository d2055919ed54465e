"""Synthetic Audio Turing Test (ATT) corpus with simulated listeners; deterministic, no downloads.

5 TTS families x 4 voices render texts from 5 capability dimensions (3 in distribution, 2 out of
distribution). Every clip has a latent human-likeness `latent_hls` in [0.02, 0.98]; its cue levels
(intonation, timing, breaths, tones, buzz, hiss, clicks; see `speech.CueLevels`) are monotone in the
latent, with a per-dimension emphasis, so a judge trained on the "id" dimensions transfers to "ood".

    latent = clip(family_level + voice_offset + family_x_dimension + N(0, clip_noise_sd), 0.02, 0.98)

Traps: genuine "human recordings" (latent 0.95-0.98) and deliberately flawed clips (latent 0.02,
extreme buzz/hiss/clicks, dropouts, stutter). Listeners are simulated by `listeners.py`.

Output folder:
    audio/<id>.wav         16-bit PCM mono, `sample_rate` Hz
    clips.jsonl            {id, audio, kind, family, voice, dimension, lang, text, latent_hls, duration_s}
    judgements.jsonl       {listener, batch, clip_id, label, is_trap, trap_kind, reason}
    listeners.jsonl        simulation ground truth per listener (careless, bias, unclear_width, ...)
    corpus_config.json     the AttCorpusConfig used
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainer.synth.corpus_config import StrictFromDict
from evaluators.progress import progress_iter
from trainer.synth.corpus_io import write_jsonl, write_wav

from trainer.benchmarks.att.listeners import SimClip, simulate_corpus
from trainer.synth.speech import CueLevels, render_utterance
from trainer.synth.timbre import VoiceTimbre

__all__ = ["DIMENSIONS", "TEXTS", "FAMILIES", "FAMILY_LEVELS", "VOICES_PER_FAMILY", "AttCorpusConfig",
           "AttCorpus", "cues_for_latent", "build_att_corpus", "render_system_outputs", "voice_names"]

# key -> (display name, split)
DIMENSIONS: "OrderedDict[str, tuple[str, str]]" = OrderedDict([
    ("special_characters_numerals", ("Special Characters and Numerals", "id")),
    ("code_switching", ("Chinese-English Code-switching", "id")),
    ("paralinguistic_emotion", ("Paralinguistic Features and Emotions", "id")),
    ("classical_poetry_prose", ("Classical Chinese Poetry/Prose", "ood")),
    ("polyphonic_characters", ("Polyphonic Characters", "ood")),
])
_SHORT = {"special_characters_numerals": "num", "code_switching": "cs", "paralinguistic_emotion": "para",
          "classical_poetry_prose": "poem", "polyphonic_characters": "poly"}

# Built-in text banks: (lang, text), in the style of the ATT-Corpus examples (paper Table 1).
TEXTS: dict[str, list[tuple[str, str]]] = {
    "special_characters_numerals": [("zh", t) for t in [
        "我们公司2010年6月8日成立，现在算算已经快满12年了，时间过得真快。",
        "这次考试我考了98.5分，比上次高了整整7分，妈妈特别高兴。",
        "请拨打400-820-8820，工作时间是早上9点到晚上6点。",
        "今天气温是-3°C到5°C，明天还要再降温10度左右。",
        "这件衣服打8折以后是299元，比原价便宜了75元呢。",
        "会议定在3月15日下午2:30，地点在5号楼302室。",
        "我的快递单号是SF1234567890，说是后天就能到。",
        "今年的销售额增长了35%，第4季度贡献了一半以上。",
        "他跑完42.195公里只用了3小时08分，真的太厉害了。",
    ]] + [("en", t) for t in [
        "The meeting moved to 3:45 pm on May 12, room 204, second floor.",
        "Sales grew by 18% in 2023, and we shipped 1,250 units in March alone.",
        "Call me at 555-0142 after 6, or email me at anna@example.com.",
        "The flight leaves at 7:05 from gate 23B, so be there by 6.",
        "It was minus 4 degrees at 8 am, and the forecast says 15 by noon.",
    ]],
    "code_switching": [("zh", t) for t in [
        "没想到B站有这么多不同类型的片子，昨晚我在bilibili上看了一部新的纪录片。",
        "这个project的deadline是周五，我们得赶紧把PPT做完。",
        "我刚下载了一个新的app，用来记录每天的workout，感觉挺好用的。",
        "老板说今天的meeting改到下午，让大家先把report发给他。",
        "周末我们去Starbucks喝咖啡吧，顺便聊聊那个idea。",
        "她的Instagram粉丝好多，每天都会post几张旅行的照片。",
        "这个bug我debug了一整天，最后发现是一个typo。",
        "我们下周要做一个presentation，你帮我看看这个slide行不行。",
        "他最近迷上了TikTok，每天刷到半夜，还说这是在找inspiration。",
        "这家餐厅的brunch特别有名，周末要提前在app上book位子。",
        "你先check一下邮件，然后我们zoom上再对一下细节。",
        "我的iPhone又没电了，能不能借我一下你的charger。",
        "这部电影在Netflix上评分很高，剧情特别有feel。",
    ]],
    "paralinguistic_emotion": [("zh", t) for t in [
        "呜呼，终于下班了。今天的工作简直让人崩溃，溜了溜了，赶紧回家休息了。",
        "哈哈哈，你这个笑话太好笑了，我笑得肚子都疼了。",
        "唉，又下雨了，本来还想出去走走的，真是扫兴。",
        "哇！你居然真的考上了？太棒了，我就知道你可以的！",
        "嗯……让我想想，这件事好像没那么简单吧。",
        "呵呵，你说得倒轻巧，你自己来试试看啊。",
        "哎呀，我的钥匙又找不到了，怎么每次出门都这样！",
        "嘿嘿，我偷偷告诉你一个秘密，你可不许告诉别人哦。",
        "天哪，这也太吓人了吧，我的心到现在还在扑通扑通地跳。",
    ]] + [("en", t) for t in [
        "Haha, oh my gosh, I can't believe you actually did that!",
        "Ugh, Monday again. I am so tired, I could sleep for a week.",
        "Wow, really? That's amazing news, I'm so happy for you!",
        "Hmm, well, I'm not sure about that, let me think for a second.",
        "Oh no, I left my keys at home again, seriously, every single time!",
    ]],
    "classical_poetry_prose": [("zh", t) for t in [
        "苏辙笔下长江的描绘：出西陵，始得平地，其流奔放肆大。",
        "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
        "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。",
        "大江东去，浪淘尽，千古风流人物。故垒西边，人道是，三国周郎赤壁。",
        "学而时习之，不亦说乎？有朋自远方来，不亦乐乎？",
        "先天下之忧而忧，后天下之乐而乐。",
        "千山鸟飞绝，万径人踪灭。孤舟蓑笠翁，独钓寒江雪。",
        "落霞与孤鹜齐飞，秋水共长天一色。",
        "明月几时有？把酒问青天。不知天上宫阙，今夕是何年。",
        "山不在高，有仙则名。水不在深，有龙则灵。斯是陋室，惟吾德馨。",
        "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。",
        "锄禾日当午，汗滴禾下土。谁知盘中餐，粒粒皆辛苦。",
        "青青园中葵，朝露待日晞。阳春布德泽，万物生光辉。",
    ]],
    "polyphonic_characters": [("zh", t) for t in [
        "老中医说，这病症得慢慢调理，着急不得。可这病的症结到底在哪呢？",
        "他长大以后当了校长，长得也越来越像他爸爸了。",
        "这首曲子很好听，可是歌词写得有点曲折难懂。",
        "银行的行长说，这样做不行，我们得重新考虑。",
        "我还没还你钱呢，下个月发了工资一定还给你。",
        "他把重要的文件重新整理了一遍，重量轻了不少。",
        "这个角色的主角是一个会吹号角的小男孩。",
        "睡觉以前他觉得有点饿，就去厨房找了点吃的。",
        "大家都很乐意听他奏乐，音乐让人快乐。",
        "为了这件事，他为难了好几天，最后还是为大家着想。",
        "这里的空地空了很久，今天终于有空来打扫了。",
        "他数了数，发现数学作业数不胜数，简直要崩溃了。",
        "要调查清楚这个曲调是谁调的，得先调出当天的录音。",
    ]],
}

FAMILIES = ("famA", "famB", "famC", "famD", "famE")
FAMILY_LEVELS = (0.10, 0.29, 0.48, 0.67, 0.86)
VOICES_PER_FAMILY = 4
_VOICE_OFFSETS = (-0.045, -0.015, 0.015, 0.045)  # evenly spread: voices never overlap across families
_INTERACTION_MAX = 0.02                       # |family x dimension| effect
# Which cues each dimension stresses: slope of cue naturalness vs latent (1.0 = default).
_CUE_SLOPES = {
    "special_characters_numerals": {"timing": 1.35, "clicks": 1.35},
    "code_switching": {"intonation": 1.3, "buzz": 1.3},
    "paralinguistic_emotion": {"breaths": 1.4, "intonation": 1.3},
    "classical_poetry_prose": {"timing": 1.3, "tones": 1.4},
    "polyphonic_characters": {"tones": 1.45, "intonation": 1.15},
}


def voice_names() -> list[str]:
    """All voice ids, e.g. famA_v0 .. famE_v3."""
    return [f"{f}_v{v}" for f in FAMILIES for v in range(VOICES_PER_FAMILY)]


@dataclass
class AttCorpusConfig(StrictFromDict):
    """Corpus size, listener population and audio settings (validated on construction)."""

    seed: int = 0  # seed of the corpus, its listeners and their choices
    clips_per_voice_dimension: int = 10  # evaluation clips per (voice, capability dimension)
    n_human_traps: int = 24  # genuine human recordings in the trap pool
    n_flawed_traps: int = 12  # deliberately flawed clips in the trap pool
    annotators_per_clip: int = 3  # valid listeners wanted per evaluation clip
    careless_listener_fraction: float = 0.06  # listeners who answer at random (their batches mostly fail the traps)
    unclear_user_fraction: float = 0.55     # listeners who ever use Unclear (a few never do by chance)
    unclear_width_median: float = 0.022     # their Unclear half-width on the 0-1 scale (log-normal)
    unclear_width_sigma: float = 1.0  # log-normal sigma of that half-width
    listener_bias_sd: float = 0.234  # per-listener bias SD on the 0-1 scale
    judgement_noise_sd: float = 0.08  # per-judgement noise SD
    clip_noise_sd: float = 0.05  # per-clip deviation from its family/voice level
    sample_rate: int = 16000  # Hz of the written audio
    max_clip_s: float = 3.5  # longest clip in seconds
    languages: tuple = ("zh", "en")  # text languages (zh required: the OOD dimensions are Chinese-only)
    source: str = "synthetic"  # synthetic (procedural voices) | real (installed TTS engines + human recordings, labels by construction; real_corpus.py)
    real_train_sentences: int = 20  # (real) English training prompts (Asterisk), each read by every rung; plus as many (at most 5) an4 card readings and a quarter as many es/fr/it/ru prompts (human + formant)
    real_test_sentences: int = 10  # (real) held-out sentences: LibriVox, Menardi (it) and alsa recordings in turn, each read by every rung of its language
    real_degraded_human_copies: int = 1  # (real) degraded copies of each human training reading, each with another degradation (the shipped recipe: 3; docs/results.md)
    render_workers: int = 2  # (real) processes rendering clips in parallel (1: in this process)

    def __post_init__(self) -> None:
        self.languages = tuple(self.languages)

        self.need(isinstance(self.seed, (int, np.integer)) and self.seed >= 0, f"seed must be an int >= 0, got {self.seed!r}")
        self.need(self.clips_per_voice_dimension >= 1, "clips_per_voice_dimension must be >= 1")
        self.need(self.n_human_traps >= 2, "n_human_traps must be >= 2 (each batch uses 2)")
        self.need(self.n_flawed_traps >= 1, "n_flawed_traps must be >= 1 (each batch uses 1)")
        self.need(self.annotators_per_clip >= 1, "annotators_per_clip must be >= 1")
        self.need(0.0 <= self.careless_listener_fraction <= 0.5, "careless_listener_fraction must be in [0, 0.5]")
        self.need(0.0 <= self.unclear_user_fraction <= 1.0, "unclear_user_fraction must be in [0, 1]")
        self.need(0.0 <= self.unclear_width_median <= 0.45, "unclear_width_median must be in [0, 0.45]")
        for name in ("unclear_width_sigma", "listener_bias_sd", "judgement_noise_sd", "clip_noise_sd"):
            self.need(0.0 <= getattr(self, name) <= 1.0, f"{name} must be in [0, 1]")
        self.need(self.sample_rate >= 8000, f"sample_rate must be >= 8000 Hz, got {self.sample_rate}")
        self.need(1.0 <= self.max_clip_s <= 30.0, "max_clip_s must be in [1, 30] seconds")
        self.need(len(self.languages) > 0 and set(self.languages) <= {"zh", "en"},
                  f"languages must be a non-empty subset of ('zh', 'en'), got {self.languages}")
        self.need("zh" in self.languages, "languages must include 'zh' (the OOD dimensions are Chinese-only)")
        self.need(self.source in ("synthetic", "real"), f"source must be 'synthetic' or 'real', got {self.source!r}")
        self.need(1 <= self.real_train_sentences <= 60, "real_train_sentences must be in [1, 60]")
        self.need(3 <= self.real_test_sentences <= 24, "real_test_sentences must be in [3, 24]")
        self.need(1 <= self.real_degraded_human_copies <= 3, "real_degraded_human_copies must be in [1, 3]")
        self.need(1 <= self.render_workers <= 64, "render_workers must be in [1, 64]")
        self.need(self.source == "synthetic" or self.sample_rate == 16000, "source real writes 16000 Hz: sample_rate must be 16000")



@dataclass
class AttCorpus:
    """A built corpus: file paths and counts."""

    root: Path
    clips_path: Path
    judgements_path: Path
    listeners_path: Path
    config_path: Path
    n_eval_clips: int
    n_human_traps: int
    n_flawed_traps: int
    n_listeners: int
    n_batches: int
    n_valid_batches: int
    n_judgements: int


def cues_for_latent(latent: float, dimension: str | None, rng: np.random.Generator,
                    jitter_sd: float = 0.04) -> CueLevels:
    """Cue levels for a latent human-likeness: naturalness_k = clip(0.5 + slope_dk * (latent - 0.5)
    + N(0, jitter_sd)), artifacts = 1 - naturalness. Monotone in `latent` for every cue."""
    slopes = _CUE_SLOPES.get(dimension or "", {})
    nat = {k: float(np.clip(0.5 + slopes.get(k, 1.0) * (latent - 0.5) + rng.normal(0.0, jitter_sd), 0.0, 1.0))
           for k in ("intonation", "timing", "breaths", "tones", "buzz", "hiss", "clicks")}
    return CueLevels(nat["intonation"], nat["timing"], nat["breaths"], nat["tones"],
                     1.0 - nat["buzz"], 1.0 - nat["hiss"], 1.0 - nat["clicks"])


def _texts(dimension: str, languages: tuple) -> list[tuple[str, str]]:
    return [(lang, t) for lang, t in TEXTS[dimension] if lang in languages]


def _plan(config: AttCorpusConfig) -> list[dict]:
    """Every clip's metadata, latent, cues and voice (no audio yet), in a fixed order."""
    seed = config.seed
    mrng = np.random.default_rng([seed, 1])
    voices = {}
    for f, base in zip(FAMILIES, FAMILY_LEVELS):
        offs = mrng.permutation(_VOICE_OFFSETS)
        for v in range(VOICES_PER_FAMILY):
            voices[f"{f}_v{v}"] = (f, base + float(offs[v]), VoiceTimbre.random(mrng))
    inter = {(f, d): float(mrng.uniform(-_INTERACTION_MAX, _INTERACTION_MAX)) for f in FAMILIES for d in DIMENSIONS}
    text_order = {d: mrng.permutation(len(_texts(d, config.languages))) for d in DIMENSIONS}
    specs = []
    for d in DIMENSIONS:  # every voice reads the same k-th text, so text is no cue to quality
        bank = _texts(d, config.languages)
        for voice, (fam, level, timbre) in voices.items():
            for k in range(config.clips_per_voice_dimension):
                rng = np.random.default_rng([seed, 2, len(specs)])
                lang, text = bank[int(text_order[d][k % len(bank)])]
                lat = float(np.clip(level + inter[(fam, d)] + rng.normal(0.0, config.clip_noise_sd), 0.02, 0.98))
                specs.append(dict(id=f"{voice}-{_SHORT[d]}-{k:03d}", kind="eval", family=fam, voice=voice,
                                  dimension=d, lang=lang, text=text, latent_hls=lat,
                                  cues=cues_for_latent(lat, d, rng), timbre=timbre))
    all_texts = [x for d in DIMENSIONS for x in _texts(d, config.languages)]
    for kind, n in (("human_trap", config.n_human_traps), ("flawed_trap", config.n_flawed_traps)):
        for k in range(n):
            rng = np.random.default_rng([seed, 3, len(specs)])
            lang, text = all_texts[int(rng.integers(0, len(all_texts)))]
            if kind == "human_trap":  # genuine recordings: fully human-like cues, varied voices
                lat = float(rng.uniform(0.95, 0.98))
                cues = cues_for_latent(lat, None, rng, jitter_sd=0.01)
            else:  # deliberately flawed synthesis: extreme artifacts, dropouts, stutter
                lat = 0.02
                cues = CueLevels(0.0, 0.0, 0.0, float(rng.uniform(0.0, 0.3)), 1.0, 1.0, 1.0,
                                 dropout=float(rng.uniform(0.5, 1.0)), stutter=float(rng.uniform(0.4, 1.0)))
            tag = "human" if kind == "human_trap" else "flawed"
            specs.append(dict(id=f"trap-{tag}-{k:03d}", kind=kind, family=None, voice=None, dimension=None,
                              lang=lang, text=text, latent_hls=lat, cues=cues, timbre=VoiceTimbre.random(rng)))
    return specs


def build_att_corpus(config: AttCorpusConfig, out_dir: str | Path) -> AttCorpus:
    """Render all clips, simulate listeners and write the corpus folder (see module docstring).
    Same config -> byte-identical files. ``source: real`` builds the real-audio corpus instead
    (``real_corpus.py``: real TTS engines and human recordings, labels by construction)."""
    out = Path(out_dir)
    if config.source == "real":
        from trainer.benchmarks.att.real_corpus import build_real_att_corpus

        built = build_real_att_corpus(config, out)
        return _summary(config, out, built["n_eval_clips"], built["judgements"], built["listeners"])
    (out / "audio").mkdir(parents=True, exist_ok=True)
    specs = _plan(config)
    rows = []
    for i, s in enumerate(progress_iter(specs, "synth att")):
        y = render_utterance(s["text"], s["lang"], s["timbre"], s["cues"], np.random.default_rng([config.seed, 4, i]),
                             sr=config.sample_rate, max_s=config.max_clip_s)
        rel = f"audio/{s['id']}.wav"
        write_wav(out / rel, y, config.sample_rate)
        rows.append({"id": s["id"], "audio": rel, "kind": s["kind"], "family": s["family"], "voice": s["voice"],
                     "dimension": s["dimension"], "lang": s["lang"], "text": s["text"],
                     "latent_hls": round(s["latent_hls"], 4), "duration_s": round(len(y) / config.sample_rate, 4)})
    write_jsonl(out / "clips.jsonl", rows)

    def sim(s: dict) -> SimClip:
        return SimClip(s["id"], s["latent_hls"], s["cues"].machine_likeness(), s["family"], s["dimension"], s["lang"])
    judgements, listeners = simulate_corpus(specs, sim, config, list(FAMILIES))
    write_jsonl(out / "judgements.jsonl", judgements)
    write_jsonl(out / "listeners.jsonl", listeners)
    return _summary(config, out, sum(s["kind"] == "eval" for s in specs), judgements, listeners)


def _summary(config: AttCorpusConfig, out: Path, n_eval: int, judgements: list, listeners: list) -> AttCorpus:
    """Write ``corpus_config.json``; the built corpus's paths and counts."""
    config.save(out)
    return AttCorpus(root=out, clips_path=out / "clips.jsonl", judgements_path=out / "judgements.jsonl",
                     listeners_path=out / "listeners.jsonl", config_path=out / "corpus_config.json",
                     n_eval_clips=n_eval, n_human_traps=config.n_human_traps,
                     n_flawed_traps=config.n_flawed_traps, n_listeners=len(listeners),
                     n_batches=sum(x["n_batches"] for x in listeners),
                     n_valid_batches=sum(x["n_valid_batches"] for x in listeners), n_judgements=len(judgements))


def render_system_outputs(out_dir: str | Path, seed: int, n_systems: int = 3, clips_per_system: int = 8,
                          sample_rate: int = 16000) -> Path:
    """Write "system outputs" of clearly different quality for a scoring demo.

    Systems `sys1`..`sysN` have latent human-likeness evenly spaced from 0.85 (sys1, best) down to
    0.15 (sysN, worst); all systems read the same texts (in-distribution dimensions, ZH and EN).
    Writes `out_dir/<system>/<system>-<k>.wav` and `out_dir/manifest.jsonl` with rows
    {id, audio (relative to the manifest), system, dimension, lang, text, latent_hls}.
    Returns the folder `out_dir` (the manifest is `out_dir / "manifest.jsonl"`).
    """
    if n_systems < 1 or clips_per_system < 1:
        raise ValueError("n_systems and clips_per_system must be >= 1")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    levels = np.linspace(0.85, 0.15, n_systems)  # one system: [0.85]
    trng = np.random.default_rng([seed, 6])
    id_dims = [d for d, (_, split) in DIMENSIONS.items() if split == "id"]
    items = [(d,) + _texts(d, ("zh", "en"))[int(trng.integers(0, len(TEXTS[d])))]
             for d in (id_dims[k % len(id_dims)] for k in range(clips_per_system))]
    rows = []
    for si, level in enumerate(levels):
        system = f"sys{si + 1}"
        (out / system).mkdir(exist_ok=True)
        timbre = VoiceTimbre.random(np.random.default_rng([seed, 7, si]))
        for k, (d, lang, text) in enumerate(items):
            rng = np.random.default_rng([seed, 8, si, k])
            lat = float(np.clip(level + rng.normal(0.0, 0.03), 0.02, 0.98))
            y = render_utterance(text, lang, timbre, cues_for_latent(lat, d, rng), rng, sr=sample_rate)
            cid = f"{system}-{k:03d}"
            write_wav(out / system / f"{cid}.wav", y, sample_rate)
            rows.append({"id": cid, "audio": f"{system}/{cid}.wav", "system": system, "dimension": d,
                         "lang": lang, "text": text, "latent_hls": round(lat, 4)})
    write_jsonl(out / "manifest.jsonl", rows)
    return out
