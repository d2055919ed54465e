"""The layout contract: one folder per benchmark on each side, registries that give every piece,
a CLI built from them, one Judge protocol and judge-folder format, one config section per task
(the import graph: tests/test_import_graph.py)."""

import ast
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from evaluators.benchmarks import BENCHMARKS, get_benchmark
from evaluators.benchmarks.spec import Benchmark
from evaluators.cli import build_parser
from evaluators.judges import JUDGE_KINDS, Judge, JudgeFolderError, judge_class, load_judge
from trainer.benchmarks import BENCHMARK_TASKS, COMMAND_TASKS, EXTRA_TASKS, TASKS
from trainer.benchmarks import BENCHMARKS as TRAINER_BENCHMARKS
from trainer.config import ConfigError, config_from_dict, describe_config, load_config
from trainer.task import TaskCommands, TaskCorpus

from conftest import speechlike

ROOT = Path(__file__).resolve().parents[1]


def _required_flags(parser, benchmark: str) -> list[str]:
    """Placeholder values for the required options of ``score <benchmark>``."""
    score = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices["score"]
    sub = next(a for a in score._actions if a.__class__.__name__ == "_SubParsersAction").choices[benchmark]
    return [x for a in sub._actions if a.required and a.option_strings for x in (a.option_strings[0], "x")]


def _subcommands(parser, *path: str) -> set[str]:
    """Names (aliases included) of the sub-subcommands under ``path`` of an argparse parser."""
    for name in path:
        action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = action.choices[name]
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return set(action.choices)


def _doc_anchors() -> set[str]:
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    return {"docs/benchmarks.md#" + re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
            for h in re.findall(r"^## (.+)$", text, flags=re.M)}


# ---- registries -------------------------------------------------------------------------------------
def test_both_sides_register_the_same_benchmarks():
    assert list(BENCHMARKS) == list(TRAINER_BENCHMARKS) == list(BENCHMARK_TASKS)
    assert set(TASKS) == {task.name for task in COMMAND_TASKS.values()} >= {t.name for t in BENCHMARK_TASKS.values()}


@pytest.mark.parametrize("command", list(EXTRA_TASKS))
def test_extra_tasks_live_in_their_benchmark_folder_and_have_commands(command):
    task = COMMAND_TASKS[command]
    assert task.command == command and task.benchmark in BENCHMARKS and TASKS[task.name] is task
    module = EXTRA_TASKS[command].split(":")[0]
    assert module.startswith(f"trainer.benchmarks.{task.benchmark}.")
    assert dataclasses.is_dataclass(task.settings_class) and hasattr(task.settings_class(), "corpus")
    parser = build_parser()
    assert command in _subcommands(parser, "validate") and command in _subcommands(parser, "synth")
    assert task.model_card({"preset": {"name": "p"}, "label_words": ["0", "1"], "read_at": "x"}, None)


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_every_benchmark_provides_each_piece_and_the_cli_exposes_it(name):
    bench = get_benchmark(name)
    assert isinstance(bench, Benchmark)
    for piece in ("add_score_parser", "add_metrics_parser"):
        assert callable(getattr(bench, piece)), piece
    package = ROOT / "evaluators" / "benchmarks" / name / "__init__.py"
    docs = re.findall(r"docs/benchmarks\.md#[a-z0-9-]+", ast.get_docstring(ast.parse(package.read_text())) or "")
    assert docs and set(docs) <= _doc_anchors(), docs  # the package names its definitions' section

    task = BENCHMARK_TASKS[name]
    assert task.benchmark == name and (ROOT / "trainer" / "benchmarks" / name / "task.py").is_file()
    assert dataclasses.is_dataclass(task.settings_class) and hasattr(task.settings_class(), "corpus")
    for piece in ("load_rows", "build_judge", "example", "collate", "loss", "predict_rows", "val_metrics", "validate",
                  "model_card"):
        assert callable(getattr(task, piece)), piece
    assert isinstance(task.corpus, TaskCorpus) and isinstance(task.commands, TaskCommands)

    parser = build_parser()
    for command in ("score", "metrics", "validate", "synth"):
        assert name in _subcommands(parser, command), (command, name)
    for alias in task.commands.aliases:  # older names keep working
        assert alias in _subcommands(parser, "validate") and alias in _subcommands(parser, "synth")
    args = parser.parse_args(["score", name, *_required_flags(parser, name)])
    assert args.retry_errors is False  # every scorer redoes its error rows on request only
    # rows another judge wrote: refused unless told otherwise; SpeechEditBench rows record what
    # measured them ("uses") and only rows whose source changed are measured again, so it has no option
    if name == "speecheditbench":
        assert not hasattr(args, "resume_mismatch")
    else:
        assert args.resume_mismatch == "refuse"


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_every_task_renders_a_model_card_for_its_judge_kind(name):
    task = BENCHMARK_TASKS[name]
    config = {"preset": {"name": "p"}, "read_at": "final prompt token", "label_words": ["a", "b"], "label_values": [1.0, 0.0],
              "prompt": "p", "prompt_version": "v1", "output_names": ["stressed"], "threshold": 0.5,
              "type_threshold": 0.5, "head": {"mode": "aligned"}}
    lines = task.model_card(config, None)
    assert lines and all(isinstance(line, str) for line in lines)
    assert any(f"omnijudge score {name}" in line for line in lines)


def test_every_preset_comes_from_one_place():
    from evaluators.judges.presets import PRESETS

    owned = [p for name in BENCHMARKS for p in get_benchmark(name).presets]
    assert len(owned) == len(set(owned)) and set(owned) <= set(PRESETS)
    assert {"auto-att", "auto-att-released"} <= set(get_benchmark("att").presets)


def test_the_adding_a_benchmark_page_names_every_piece_the_registries_read():
    """docs/adding_a_benchmark.md's minimum names each field of ``Benchmark``, each member of the
    ``JudgeTask`` protocol and of ``TaskCommands``, and both registry lines as the registries hold them."""
    from trainer.task import JudgeTask

    page = (ROOT / "docs" / "adding_a_benchmark.md").read_text()
    minimum = page[page.index("## The minimum"):page.index("## When a benchmark grows")]
    members = {n for n in vars(JudgeTask) if not n.startswith("_")} | set(JudgeTask.__annotations__)
    members |= {f.name for f in dataclasses.fields(TaskCommands) if f.name.endswith(("options", "synth"))}
    missing = sorted(p for p in members if not re.search(rf"`{p}\b|\b{p} ?[=(]", minimum))
    missing += sorted(f.name for f in dataclasses.fields(Benchmark) if not re.search(rf"\b{f.name}=", page))
    assert not missing, f"docs/adding_a_benchmark.md does not name {missing}"
    assert all(re.fullmatch(rf"evaluators\.benchmarks\.{n}:BENCHMARK", e) for n, e in BENCHMARKS.items())
    assert all(re.fullmatch(rf"trainer\.benchmarks\.{n}\.task:\w+", e) for n, e in TRAINER_BENCHMARKS.items())
    assert '"<name>": "evaluators.benchmarks.<name>:BENCHMARK",' in minimum
    assert '"<name>": "trainer.benchmarks.<name>.task:<TaskClass>",' in minimum


# ---- judges -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def judges(tiny_omni):
    from evaluators.benchmarks.instructttseval.judge import InstructionJudge
    from evaluators.benchmarks.nvv.aligned_rater import AlignedLikertRater, new_rater_head
    from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
    from evaluators.benchmarks.speecheditbench.edit_judge import SpeechEditJudge
    from evaluators.judges.in_prompt_pair import InPromptPairJudge
    from evaluators.judges.presets import get_preset
    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.scalar_reward import ScalarRewardJudge
    from evaluators.judges.verbalizer import VerbalizerJudge
    from evaluators.judges.word_tagger import WordTaggerJudge

    return {"verbalizer": VerbalizerJudge(tiny_omni, get_preset("auto-att")),
            "word_tagger": WordTaggerJudge(tiny_omni, WordTaggerJudge.new_head(tiny_omni), HeadPrompt("Mark stress.")),
            "nvv_verifier": NvvVerifierJudge(tiny_omni, NvvVerifierJudge.new_head(tiny_omni)),
            "nvv_likert_aligned": AlignedLikertRater(tiny_omni, new_rater_head(tiny_omni, "nvv_pe"), "nvv_pe"),
            "scalar_reward": ScalarRewardJudge(tiny_omni, ScalarRewardJudge.new_head(tiny_omni)),
            "instruction_follow": InstructionJudge(tiny_omni, InstructionJudge.new_head(
                tiny_omni, {"gender": ["male", "female"], "pitch": ["low", "mid", "high"]})),
            "speech_edit_attribute": SpeechEditJudge.new(tiny_omni, "style"),
            "in_prompt_pair": InPromptPairJudge(tiny_omni)}


def _inputs(kind: str) -> list[dict]:
    waves = [speechlike(s, seed=i) for i, s in enumerate((0.7, 1.3, 0.9))]
    if kind == "verbalizer":
        return [{"wave": w} for w in waves]
    if kind == "scalar_reward":
        return [{"wave": w, "fields": {"text": t}} for w, t in zip(waves, ("the cat", "the cat sat", "a dog"))]
    if kind == "in_prompt_pair":  # one order of a pair: both clips in one prompt
        return [{"wave_a": w, "wave_b": waves[(i + 1) % 3], "fields": {"text": "the cat"}} for i, w in enumerate(waves)]
    if kind == "word_tagger":
        return [{"wave": w, "words": ["the", "cat", "sat"][: i + 1], "lang": "en"} for i, w in enumerate(waves)]
    if kind == "instruction_follow":
        return [{"wave": w, "instruction": t, "lang": lang}
                for w, t, lang in zip(waves, ("gender: Male.", "音高：偏高。", "Speak slowly."), ("en", "zh", "en"))]
    if kind == "speech_edit_attribute":
        return [{"wave": w, "lang": lang, "anchor": {"target_style": s}}
                for w, s, lang in zip(waves, ("dramatic", "intimate", "storytelling"), ("en", "zh", "en"))]
    nvv = [{"wave": w, "text": "the cat sat", "lang": "en", "target_type": "breath",
            "unit_times": [[0.0, 0.2], [0.2, 0.4], [0.4, 0.6]]} for w in waves]
    if kind == "nvv_likert_aligned":
        return [{**x, "tag_positions": [i]} for i, x in enumerate(nvv)]
    return nvv


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return abs(a - b) <= 1e-5
    return a == b


@pytest.mark.parametrize("kind", list(JUDGE_KINDS))
def test_every_judge_kind_satisfies_the_protocol(judges, kind):
    judge = judges[kind]
    assert isinstance(judge, Judge) and judge.kind == kind and judge_class(kind) is type(judge)
    assert set(judge.provenance()) == {"judge", "checkpoint_sha256", "prompt_version", "seed", "device", "dtype",
                                       "attn_implementation"}
    assert judge.provenance()["dtype"] == "float32" and judge.provenance()["device"] == "cpu"
    batched, single = judge.score(_inputs(kind), batch_size=3), judge.score(_inputs(kind), batch_size=1)
    assert len(batched) == 3 and _same(batched, single)
    json.dumps(batched)  # rows are JSON-able


@pytest.mark.parametrize("kind", list(JUDGE_KINDS))
def test_every_judge_scores_the_same_through_prepare_input(judges, kind):
    """The engine runs every kind in two halves (``evaluators/engine.py``): the CPU half in a worker."""
    judge = judges[kind]
    examples = [judge.prepare_input(x) for x in _inputs(kind)]
    assert not any(isinstance(v, torch.Tensor) and v.device.type != "cpu"
                   for ex in examples for v in (ex if isinstance(ex, dict) else {}).values())  # host-side only
    assert _same(judge.score_examples(examples, batch_size=2), judge.score(_inputs(kind), batch_size=3))


@pytest.mark.parametrize("kind", list(JUDGE_KINDS))
def test_save_then_load_judge_gives_the_same_kind_and_scores(judges, kind, tmp_path):
    judge = judges[kind]
    folder = judge.save_pretrained(tmp_path / kind, extra={"task": "x"})
    cfg = json.loads((folder / "judge_config.json").read_text())
    assert cfg["kind"] == kind and cfg["format"] == "omnijudge-judge" and cfg["task"] == "x"
    assert (folder / "base" / "config.json").is_file()  # a tiny base ships with the folder
    again = load_judge(folder)
    assert type(again) is type(judge)
    assert _same(again.score(_inputs(kind)), judge.score(_inputs(kind)))


def test_a_folder_of_another_kind_is_refused_naming_both_kinds(judges, tmp_path):
    from evaluators.judges.verbalizer import VerbalizerJudge

    folder = judges["word_tagger"].save_pretrained(tmp_path / "stress-detector")
    for load in (lambda: VerbalizerJudge.from_pretrained(folder), lambda: load_judge(folder, expected_kind="verbalizer")):
        with pytest.raises(JudgeFolderError) as e:
            load()
        assert str(folder) in str(e.value) and "'word_tagger'" in str(e.value) and "'verbalizer'" in str(e.value)
    with pytest.raises(JudgeFolderError, match="not a judge folder"):
        load_judge(tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "judge_config.json").write_text("{not json")
    with pytest.raises(JudgeFolderError, match="not valid JSON"):
        load_judge(tmp_path / "bad")


def test_validate_refuses_a_judge_of_another_kind_in_one_line(judges, tmp_path, capsys):
    from evaluators.cli import main

    folder = judges["word_tagger"].save_pretrained(tmp_path / "det")
    capsys.readouterr()
    assert main(["validate", "att", "--judge", str(folder), "--corpus", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert re.match(r"omnijudge validate att: .*'word_tagger'.*expected a 'verbalizer'", err) and err.count("\n") == 1
    with pytest.raises(JudgeFolderError):  # --verbose: the exception itself, for the traceback
        main(["--verbose", "validate", "att", "--judge", str(folder), "--corpus", str(tmp_path)])


def test_score_command_refuses_a_non_verbalizer_folder(judges, tmp_path, capsys):
    from evaluators.cli import main

    folder = judges["word_tagger"].save_pretrained(tmp_path / "det")
    assert main(["score", "audio", "--judge", str(folder), "--audio", str(tmp_path), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert re.search("'word_tagger' judge folder.*omnijudge score <benchmark>", capsys.readouterr().err)


# ---- config: shared sections + one typed section per task -------------------------------------------
def test_stress_and_nvv_corpus_sizes_are_set_from_a_config():
    cfg = config_from_dict({"task": "cast", "cast": {"corpus": {"n_speakers": 12}}})
    assert cfg.task_config.corpus.n_speakers == 12
    cfg = load_config(ROOT / "configs/nvv/tiny.yaml", {"nvv.corpus.items_per_type": 3})
    assert cfg.task_config.corpus.items_per_type == 3
    assert cfg.task_config.head.n_outputs == 47 and cfg.task_config.head.n_conditions == 45  # kept from the default
    with pytest.raises(ConfigError, match="cast.corpus"):
        config_from_dict({"task": "cast", "cast": {"corpus": {"n_speakers": 1}}})


def test_each_main_task_carries_its_benchmarks_name_and_old_names_are_refused_by_name():
    from trainer.benchmarks import LEGACY_TASK_NAMES, task_of_judge

    assert all(task.name == name for name, task in BENCHMARK_TASKS.items())
    # the five benchmarks that had other names keep them for old judge folders; a newer one has none
    assert set(LEGACY_TASK_NAMES.values()) <= set(BENCHMARKS) and not set(LEGACY_TASK_NAMES) & set(TASKS)
    for old, new in LEGACY_TASK_NAMES.items():
        assert task_of_judge(old) is TASKS[new]  # judge folders recording an old name still load
        with pytest.raises(ConfigError, match=rf"config:{old}: unknown section '{old}'; .* section is '{new}'"):
            config_from_dict({"task": new, old: {}})
        with pytest.raises(ConfigError, match=rf"config:task: unknown task '{old}'; .* task is '{new}'"):
            config_from_dict({"task": old})
    with pytest.raises(ConfigError, match=r"--set att_hls.bt_weight.*section is 'att'"):
        load_config(ROOT / "configs/att/tiny.yaml", {"att_hls.bt_weight": 0.5})


def test_att_only_fields_are_validated_only_for_att():
    with pytest.raises(ConfigError, match="att.*preset"):
        config_from_dict({"att": {"preset": "gemini"}})
    with pytest.raises(ConfigError, match=r"section\(s\) \['att'\] do not apply to task 'cast'"):
        config_from_dict({"task": "cast", "att": {"preset": "auto-att"}})
    # keys of the flat layout before task sections are unknown keys, not moved or dropped
    with pytest.raises(ConfigError, match=r"config:preset: unknown key"):
        config_from_dict({"task": "cast", "preset": "gemini"})
    with pytest.raises(ConfigError, match=r"config:data.held_out_voice: unknown key"):
        config_from_dict({"task": "cast", "data": {"held_out_voice": 9}})
    with pytest.raises(ConfigError, match="n_outputs"):
        config_from_dict({"task": "nvv", "nvv": {"head": {"n_outputs": 3}}})


def test_flat_keys_are_refused_in_files_and_overrides():
    with pytest.raises(ConfigError, match=r"config:loss: unknown key"):
        config_from_dict({"task": "cast", "loss": {"word_pos_weight": 3.0}})
    with pytest.raises(ConfigError, match=r"--set data.synth_seed: unknown key"):
        load_config(ROOT / "configs/att/tiny.yaml", {"data.synth_seed": 3})
    data = {"task": "cast", "cast": {"word_pos_weight": 3.0}}
    assert config_from_dict(data).task_config.word_pos_weight == 3.0
    assert data == {"task": "cast", "cast": {"word_pos_weight": 3.0}}  # the caller's dict is untouched


def test_help_config_lists_each_task_section():
    text = describe_config()
    for key in ("att.preset", "att.corpus.clips_per_voice_dimension", "cast.head.mode",
                "cast.corpus.n_speakers", "nvv.corpus.items_per_type", "data.corpus_dir"):
        assert key in text, key
    assert "data.held_out_voice" not in text and "loss." not in text


def test_yaml_files_use_the_section_layout():
    for path in (ROOT / "configs").rglob("*.yaml"):
        text = path.read_text()
        cfg = load_config(path)
        assert re.search(rf"^{cfg.task}:", text, flags=re.M), path
        assert not re.search(r"^(preset|loss|head|long_clip_policy):", text, flags=re.M), path
        assert not np.isnan(cfg.max_seconds)
