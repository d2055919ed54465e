"""The training side's shared steps, each done once by the loop (docs/adding_a_benchmark.md):
the corpus built when missing, the backbone loaded in its dtype, the run seeded before anything
trainable is drawn, the trained modules chosen, and batches carried as (inputs, targets)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os

import pytest
import torch

from trainer.benchmarks import COMMAND_TASKS, TASKS
from trainer.config import TrainConfig
from trainer.data import JudgeDataModule, RowCollator, TrainingBatch, monitored_split
from trainer.module import build_trainable_judge
from trainer.task import TaskCommands, TaskCorpus
from trainer.train import ensure_corpus


# ---- declarations checked on construction -------------------------------------------------------
def test_task_corpus_and_commands_refuse_what_cannot_work():
    with pytest.raises(ValueError, match="TaskCorpus.files"):
        TaskCorpus(files=(), build=lambda config, out: None)
    with pytest.raises(ValueError, match="TaskCorpus.build"):
        TaskCorpus(files=("items.jsonl",), build="build_corpus")
    with pytest.raises(ValueError, match="TaskCommands.validate_help"):
        TaskCommands(synth_help="corpus", validate_help=" ", synth=lambda out, seed, options: "")
    with pytest.raises(ValueError, match="TaskCommands.synth"):
        TaskCommands(synth_help="corpus", validate_help="report", synth=None)


def test_every_task_declares_its_corpus_and_commands():
    for command, task in COMMAND_TASKS.items():
        assert isinstance(task.corpus, TaskCorpus) and isinstance(task.commands, TaskCommands), command
        # the loop builds a missing corpus from the task section's corpus config
        assert dataclasses.is_dataclass(task.settings_class().corpus), command
        # what the loop does for every task is not the task's any more
        for gone in ("trainable_modules", "build_corpus", "corpus_files", "synth", "cli_aliases"):
            assert not hasattr(task, gone), (command, gone)


# ---- the corpus: built once, by the loop --------------------------------------------------------
@pytest.fixture
def recording_corpus(monkeypatch):
    """The ATT task's corpus declaration replaced by one that records its builds (no audio)."""
    built = []

    def build(config, out):
        built.append((config, out))
        out.mkdir(parents=True, exist_ok=True)
        for name in ("clips.jsonl", "judgements.jsonl"):
            (out / name).write_text("")

    monkeypatch.setattr(type(TASKS["att"]), "corpus", TaskCorpus(files=("clips.jsonl", "judgements.jsonl"),
                                                                  build=build))
    # the recorded corpus has no rows, which the data check rightly refuses; these tests are about
    # when the corpus is built, so the check is recorded instead of run
    monkeypatch.setattr("trainer.data_check.require_clean", lambda corpus, task: built.append(("checked", task)))
    return built


def test_missing_corpus_is_built_from_the_section_corpus_config_then_reused(recording_corpus, tmp_path):
    cfg = TrainConfig()
    cfg.data.corpus_dir = str(tmp_path / "corpus")
    assert ensure_corpus(cfg) == tmp_path / "corpus"
    assert recording_corpus == [(cfg.task_config.corpus, tmp_path / "corpus")]
    assert ensure_corpus(cfg) == tmp_path / "corpus"
    # present: not built again, checked instead
    assert recording_corpus == [(cfg.task_config.corpus, tmp_path / "corpus"), ("checked", "att")]


def test_missing_corpus_without_synthesis_names_the_folder_and_the_key(recording_corpus, tmp_path):
    cfg = TrainConfig()
    cfg.data.corpus_dir = str(tmp_path / "none")
    cfg.data.synthesize_if_missing = False
    with pytest.raises(FileNotFoundError, match=r"none: no clips.jsonl/judgements.jsonl and "
                                                r"data.synthesize_if_missing is false"):
        ensure_corpus(cfg)
    assert recording_corpus == []


# ---- backbone, dtype, seed ----------------------------------------------------------------------
def _lora_a(judge) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in judge.backbone.model.named_parameters() if "lora_A" in n}


def test_adapters_start_from_the_run_seed_whatever_the_backbone_drew():
    cfg = TrainConfig()
    first = _lora_a(build_trainable_judge(cfg))
    torch.manual_seed(1234)  # the global generator disturbed between two builds
    torch.rand(100)
    cfg.backbone.tiny_seed = 7  # another random backbone (it seeds torch with its own seed)
    again = _lora_a(build_trainable_judge(cfg))
    assert first and first.keys() == again.keys()
    assert all(torch.equal(first[n], again[n]) for n in first)
    cfg.seed = 1
    other = _lora_a(build_trainable_judge(cfg))
    assert not all(torch.equal(first[n], other[n]) for n in first)


@pytest.mark.slow  # writes the tiny hub-layout checkpoint (shared with other tests in a session)
def test_a_checkpoint_backbone_loads_in_the_configured_dtype(stand_in):
    cfg = TrainConfig()
    cfg.backbone.source = str(stand_in("qwen2_5_omni"))
    cfg.backbone.dtype = "bfloat16"
    judge = build_trainable_judge(cfg)
    frozen = {p.dtype for p in judge.backbone.model.parameters() if not p.requires_grad}
    assert frozen == {torch.bfloat16}


def test_the_module_trains_and_checkpoints_exactly_the_judges_parameters_that_require_grad():
    """The judge is an ``nn.Module``: what the optimizer updates and ``last.ckpt`` holds are its own
    parameters that require grad (LoRA adapters and the head here), in the judge's order."""
    from evaluators.backbones import AudioLLM
    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.word_tagger import WordTaggerJudge
    from trainer.lora import apply_lora
    from trainer.module import JudgeModule

    cfg = TrainConfig()
    backbone = apply_lora(AudioLLM.tiny("qwen2_5_omni", seed=0), cfg)
    judge = WordTaggerJudge(backbone, WordTaggerJudge.new_head(backbone), HeadPrompt("Mark stress."))
    module = JudgeModule(TASKS["cast"], judge, cfg)
    want = [(f"judge.{n}", p) for n, p in judge.named_parameters() if p.requires_grad]
    got = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    assert [n for n, _ in got] == [n for n, _ in want] and all(a is b for (_, a), (_, b) in zip(got, want))
    assert any("lora_" in n for n, _ in want) and any(n.startswith("judge.head.") for n, _ in want)
    assert list(module.trainable_shapes()) == [n for n, _ in want]


# ---- batches: (inputs, targets) and the row index, apart -----------------------------------------
class CountingTask:
    """A task whose example is a row's number and whose targets are its label (counts examples)."""

    group_key = "group"

    def __init__(self):
        self.examples = 0

    def example(self, judge, row):
        self.examples += 1
        return {"x": row["x"]}

    def collate(self, judge, examples, rows):
        return ({"x": torch.tensor([e["x"] for e in examples])},
                {"y": torch.tensor([r["y"] for r in rows])})


def test_collated_batches_carry_inputs_targets_and_row_index_apart():
    task = CountingTask()
    rows = [{"id": f"r{i}", "x": i, "y": 10 * i, "row_index": 5 + i} for i in range(3)]
    collate = RowCollator(task, judge=None)
    batch = collate(rows)
    assert isinstance(batch, TrainingBatch)
    assert batch.inputs.keys() == {"x"} and batch.targets.keys() == {"y"}
    assert batch.inputs["x"].tolist() == [0, 1, 2] and batch.targets["y"].tolist() == [0, 10, 20]
    assert batch.row_index.tolist() == [5, 6, 7] and batch.row_index.dtype == torch.long
    collate(rows[::-1])
    assert task.examples == 3  # each row's example computed once, then cached


def test_data_module_batches_one_group_each_with_split_row_indices():
    task = CountingTask()
    rows = ([{"id": f"t{i}", "x": i, "y": i, "group": "ab"[i % 2], "split": "train"} for i in range(6)]
            + [{"id": f"v{i}", "x": i, "y": i, "group": "a", "split": "test"} for i in range(2)])
    dm = JudgeDataModule(rows, task, judge=None, batch_size=2)
    batches = list(dm.train_dataloader())
    assert sorted(i for b in batches for i in b.row_index.tolist()) == list(range(6))
    assert all(len({rows[i]["group"] for i in b.row_index.tolist()}) == 1 for b in batches)
    seen, rng = task.examples, torch.get_rng_state()
    assert list(dm.val_dataloader()) == [rows[6:]]  # the test split's rows as one batch, for one engine pass
    assert task.examples == seen  # no training example made for them: the engine prepares its own inputs
    assert torch.equal(torch.get_rng_state(), rng)  # its own generator: the training draws (dropout) unchanged


class ShardReadingTask:
    """A task whose predictions are the shard a scorer would see (evaluators.sharding)."""

    def predict_rows(self, judge, rows, corpus, batch_size):
        from evaluators.sharding import current_shard

        return [current_shard()] * len(rows)


def test_every_rank_of_a_launch_validates_on_the_whole_split(monkeypatch):
    """Under a launcher (here rank 1 of 2) the validation pass scores as one process, so a scorer
    that shards (``score_resumable``) scores every row instead of waiting for the other ranks'
    parts; the launcher's environment is back after."""
    from trainer.module import JudgeModule

    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    module = JudgeModule(ShardReadingTask(), torch.nn.Linear(1, 1), TrainConfig())
    rows = [{"id": "v0"}, {"id": "v1"}]
    module.validation_step(rows, 0)
    scored, shards = module._val_scored
    assert scored == rows and [(s.rank, s.world) for s in shards] == [(0, 1)] * 2
    assert (os.environ["RANK"], os.environ["WORLD_SIZE"]) == ("1", "2")


def test_training_validates_on_val_where_the_corpus_has_it_and_never_sees_test():
    task = CountingTask()
    train = [{"id": f"t{i}", "x": i, "y": i, "group": "a", "split": "train"} for i in range(4)]
    val = [{"id": f"v{i}", "x": 100 + i, "y": 0, "group": "a", "split": "val"} for i in range(3)]
    test = [{"id": f"s{i}", "x": 200 + i, "y": 0, "group": "a", "split": "test"} for i in range(2)]
    assert monitored_split(train + val + test) == "val" and monitored_split(train + test) == "test"
    dm = JudgeDataModule(train + test + val, task, judge=None, batch_size=2)
    seen = [r["x"] for rows in dm.val_dataloader() for r in rows]
    assert dm.val_split == "val" and seen == [100, 101, 102]  # no test clip
    dm = JudgeDataModule(train + test, task, judge=None, batch_size=2)
    assert dm.val_split == "test" and [r["x"] for rows in dm.val_dataloader() for r in rows] == [200, 201]
    assert list(JudgeDataModule(train, task, judge=None, batch_size=2).val_dataloader()) == []  # no split: no pass


def _built_corpus(folder, config, **changed):
    """A corpus folder whose files are present and whose corpus_config.json records ``config``
    with ``changed`` keys."""
    from dataclasses import asdict

    folder.mkdir()
    for name in ("clips.jsonl", "judgements.jsonl"):
        (folder / name).write_text("")
    (folder / "corpus_config.json").write_text(json.dumps({**json.loads(json.dumps(asdict(config))), **changed}))


def test_a_corpus_built_from_another_config_is_named_key_by_key(recording_corpus, tmp_path, caplog):
    cfg = TrainConfig()
    cfg.data.corpus_dir = str(tmp_path / "corpus")
    wanted = cfg.task_config.corpus.real_train_sentences
    _built_corpus(tmp_path / "corpus", cfg.task_config.corpus, real_train_sentences=wanted + 1)
    with caplog.at_level(logging.WARNING, logger="trainer.train"):
        assert ensure_corpus(cfg) == tmp_path / "corpus"  # a corpus made by `synth` with its own options
    assert f"real_train_sentences: built {wanted + 1}, config {wanted}" in caplog.text
    assert recording_corpus == [("checked", "att")]  # used, not rebuilt
    with pytest.raises(ValueError, match=rf"corpus_config.json: this corpus was built from another att.corpus "
                                         rf"\(real_train_sentences: built {wanted + 1}, config {wanted}\)"):
        ensure_corpus(cfg, strict=True)


def test_a_corpus_built_from_the_same_config_passes_strict(recording_corpus, tmp_path, caplog):
    cfg = TrainConfig()
    cfg.data.corpus_dir = str(tmp_path / "corpus")
    _built_corpus(tmp_path / "corpus", cfg.task_config.corpus)
    with caplog.at_level(logging.WARNING, logger="trainer.train"):
        assert ensure_corpus(cfg, strict=True) == tmp_path / "corpus"
    assert "built from another" not in caplog.text
