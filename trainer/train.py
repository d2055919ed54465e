"""One training path for every judge task: config -> corpus -> Lightning fit -> judge folder."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import time
import warnings
from dataclasses import asdict, is_dataclass
from collections.abc import Sequence
from pathlib import Path

import lightning as L
import torch
import yaml
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.utilities.exceptions import MisconfigurationException

from trainer.benchmarks import TASKS
from trainer.config import TrainConfig
from trainer.data import JudgeDataModule, monitored_split
from trainer.lora import trainable_parameter_count
from trainer.module import FiniteTrainingGuard, JudgeModule, build_trainable_judge
from trainer.resume import (ResumeCheckpoint, ResumeError, ResumePosition, SavedRun, check_trainable_state,
                            read_resume_state)
from trainer.task import export_judge

log = logging.getLogger(__name__)
FINAL_SUBDIR = "final"


def corpus_config_differences(corpus: Path, config) -> list[str]:
    """``key: built X, config Y`` for each field of the corpus config dataclass ``config`` that the
    folder's ``corpus_config.json`` records with another value; [] when it records none (an imported
    or hand-made corpus has no such file)."""
    path = corpus / "corpus_config.json"
    if config is None or not is_dataclass(config) or not path.is_file():
        return []
    try:
        built = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    wanted = json.loads(json.dumps(asdict(config)))  # tuples as lists, as the builders wrote them
    return [f"{key}: built {built[key]!r}, config {wanted[key]!r}" for key in wanted
            if key in built and built[key] != wanted[key]]


def ensure_corpus(cfg: TrainConfig, strict: bool = False) -> Path:
    """The corpus folder ``cfg.data.corpus_dir``; when its task's corpus files are missing, the
    task's synthetic corpus is built there from ``<task>.corpus`` (unless
    ``data.synthesize_if_missing`` is false: then FileNotFoundError). A folder built from another
    ``<task>.corpus`` (its ``corpus_config.json``) is used with a warning naming the keys (a corpus
    made with ``omnijudge synth`` and its own options is a normal input), or, ``strict`` (the demo,
    whose corpus folder is its own), stops with ValueError naming them."""
    task = TASKS[cfg.task]
    corpus = Path(cfg.data.corpus_dir)
    if all((corpus / f).is_file() for f in task.corpus.files):
        differences = corpus_config_differences(corpus, getattr(cfg.task_config, "corpus", None))
        if differences and strict:
            raise ValueError(f"{corpus / 'corpus_config.json'}: this corpus was built from another "
                             f"{cfg.task}.corpus ({'; '.join(differences)}); use a new folder or delete it")
        if differences:
            log.warning("%s was built from another %s.corpus than the config's: %s", corpus, cfg.task,
                        "; ".join(differences))
        from trainer.data_check import require_clean, task_names

        if cfg.task in task_names():  # the same check as `omnijudge data check`, before any training time
            require_clean(corpus, cfg.task)
        return corpus
    if not cfg.data.synthesize_if_missing:
        raise FileNotFoundError(f"{corpus}: no {'/'.join(task.corpus.files)} and data.synthesize_if_missing is false")
    log.info("building %s %s corpus in %s", getattr(cfg.task_config.corpus, "source", "synthetic"), task.name, corpus)
    task.corpus.build(cfg.task_config.corpus, corpus)
    return corpus


def _loggers(cfg: TrainConfig, run_dir: Path) -> list:
    # A new logs/version_<n> per (re)run: Lightning's CSV writer deletes a reused folder's metrics.
    loggers = [CSVLogger(str(run_dir), name="logs")]
    if cfg.logging.logger == "wandb":
        if importlib.util.find_spec("wandb") is None:
            raise ValueError("logging.logger: wandb needs the wandb package (pip install wandb), or set "
                             "logging.logger=csv")
        from lightning.pytorch.loggers import WandbLogger

        loggers.append(WandbLogger(project=cfg.logging.wandb_project, save_dir=str(run_dir),
                                   offline=cfg.logging.wandb_offline, name=cfg.judge_name))
    return loggers


def _strategy(cfg: TrainConfig):
    hw = cfg.hardware
    if hw.strategy.startswith("deepspeed"):
        from lightning.pytorch.strategies import DeepSpeedStrategy

        return DeepSpeedStrategy(config=hw.deepspeed_config) if hw.deepspeed_config else DeepSpeedStrategy(stage=2)
    if hw.strategy == "ddp":
        from lightning.pytorch.strategies import DDPStrategy

        # LoRA params always get gradients; a fully trained tower may hold parameters its forward
        # never uses (e.g. the Omni audio tower's bos/eos embedding), which DDP must be told about.
        return DDPStrategy(find_unused_parameters=bool(cfg.lora.extra_trainable))
    return "auto"


def train(cfg: TrainConfig, resume: bool = True, callbacks: Sequence[L.Callback] = ()) -> Path:
    """Train a judge; returns the run folder. Re-running with the same ``out_dir`` resumes from
    ``checkpoints/last.ckpt`` exactly where the last run stopped (``trainer/resume.py``).

    Writes ``out_dir/train_config.yaml``, ``checkpoints/last.ckpt`` (trainable weights only, every
    epoch end and every ``optim.checkpoint_every_n_steps``), CSV logs under
    ``out_dir/logs/version_<n>`` (one per run, none deleted) and the trained judge folder
    ``out_dir/final`` (adapter safetensors + judge_config.json [+ base/ for tiny backbones]).
    ``callbacks`` are added to the Lightning trainer's own (``scripts/gpu_check.py`` times steps
    with one); ``optim.max_steps`` stops training mid-epoch.
    At the end of the last epoch the monitored split (:func:`trainer.data.monitored_split`) is
    validated once, as Lightning's validation epoch: one scoring-engine pass over its rows
    (``task.predict_rows``, the function ``omnijudge validate`` scores with), ``task.val_metrics``
    of it logged (``val/...``).
    A non-finite loss or trainable weight stops training at that step with
    :class:`trainer.module.NonFiniteTrainingError` (no ``final/`` is written).

    A rerun whose ``last.ckpt`` is at the end of ``optim.max_epochs`` and whose ``final/`` is
    written changes nothing: it logs one line saying the run is finished and returns (raise
    ``optim.max_epochs`` to train on, or ``--no-resume`` to train again). ``final/`` is written
    through a temporary sibling and renamed, so a kill mid-export leaves no half-written judge.
    """
    t0 = time.time()
    run_dir = Path(cfg.out_dir)
    last = run_dir / "checkpoints" / "last.ckpt"
    saved = read_resume_state(last) if resume and last.is_file() else None  # a corrupt file stops here
    if saved is not None:
        if _finished(saved, cfg, run_dir / FINAL_SUBDIR):
            log.warning("%s: this run already finished (%d epochs, judge in %s); nothing to do "
                        "(raise optim.max_epochs to train on, or --no-resume to train again)",
                        last, saved.position.epoch, run_dir / FINAL_SUBDIR)
            return run_dir
        _check_same_shuffle(last, saved, run_dir / "train_config.yaml", cfg)
        log.info("resuming from %s at epoch %d, batch %d", last, saved.position.epoch, saved.position.batches_done)
    position = saved.position if saved is not None else ResumePosition()
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg.save(run_dir / "train_config.yaml")
    task = TASKS[cfg.task]
    rows, label_summary = task.load_rows(ensure_corpus(cfg), cfg.task_config)
    (run_dir / "labels_summary.json").write_text(json.dumps(label_summary, indent=2))

    judge = build_trainable_judge(cfg)  # seeds the run
    val_split = monitored_split(rows)
    log.info("validation during training on the %s split", val_split)
    module = JudgeModule(task, judge, cfg)
    if saved is not None:  # before any training time: the checkpoint must hold exactly this run's trainable set
        check_trainable_state(last, saved.shapes, module.trainable_shapes())
    n_train, n_total = trainable_parameter_count(module)
    log.info("trainable parameters: %d of %d", n_train, n_total)
    dm = JudgeDataModule(rows, task, judge, batch_size=cfg.data.batch_size, seed=cfg.seed,
                         num_workers=cfg.data.num_workers, start=(position.epoch, position.batches_done))
    module.judge.train()  # backbones load in eval mode; Lightning keeps each module's mode
    ckpt = ResumeCheckpoint(last, cfg.optim.checkpoint_every_n_steps,
                            restore_rng=saved.rng if saved is not None else None)
    trainer = _lightning_trainer(
        cfg, max_epochs=cfg.optim.max_epochs, max_steps=cfg.optim.max_steps, accelerator=cfg.hardware.accelerator, devices=cfg.hardware.devices,
        num_nodes=cfg.hardware.num_nodes, precision=cfg.hardware.precision,
        gradient_clip_val=cfg.optim.grad_clip or None, accumulate_grad_batches=cfg.optim.accumulate_grad_batches,
        logger=_loggers(cfg, run_dir), callbacks=[FiniteTrainingGuard(), ckpt, *callbacks], log_every_n_steps=cfg.logging.log_every_n_steps,
        use_distributed_sampler=False, num_sanity_val_steps=0, enable_progress_bar=False, enable_checkpointing=False,
        enable_model_summary=False, check_val_every_n_epoch=max(cfg.optim.max_epochs, 1),
    )
    _fit(trainer, module, dm, last if saved is not None else None)
    if trainer.is_global_zero:
        training = {"trainable_parameters": n_train, "total_parameters": n_total,
                    "train_clips": len(dm.train_ds), "labels": label_summary,
                    "validation_split": val_split}
        if hasattr(task, "calibrate"):  # decision thresholds chosen on held-out rows (optional task hook)
            module.judge.eval()
            with torch.inference_mode():
                training["calibration"] = task.calibrate(judge, rows, cfg.task_config)
        training["train_seconds"] = round(time.time() - t0, 1)
        _export_final(judge, cfg, run_dir / FINAL_SUBDIR, training)
    return run_dir


def _check_same_shuffle(last: Path, saved: SavedRun, saved_config: Path, cfg: TrainConfig) -> None:
    """A mid-epoch ``last`` counts the batches of the run's seeded shuffle it trained: resumed with
    another ``data.batch_size`` or ``seed`` the sampler would skip other clips, so that is refused
    naming the keys (``saved_config``: the killed run's ``train_config.yaml``)."""
    if not saved.position.batches_done or not saved_config.is_file():
        return
    before = yaml.safe_load(saved_config.read_text()) or {}
    pairs = (("data.batch_size", (before.get("data") or {}).get("batch_size"), cfg.data.batch_size),
             ("seed", before.get("seed"), cfg.seed))
    changed = [f"{k} {was} -> {now}" for k, was, now in pairs if was is not None and was != now]
    if changed:
        raise ResumeError(f"{last}: taken mid-epoch (batch {saved.position.batches_done}), resumed with "
                          f"{', '.join(changed)}: the sampler would skip other clips; resume with the run's "
                          "values or rerun with --no-resume")


def _lightning_trainer(cfg: TrainConfig, **kwargs) -> L.Trainer:
    """``L.Trainer`` with ``cfg``'s strategy; hardware this machine lacks (no GPU, no DeepSpeed) is
    one line naming the ``hardware`` section instead of Lightning's MisconfigurationException."""
    hw = cfg.hardware
    try:
        return L.Trainer(strategy=_strategy(cfg), **kwargs)
    except MisconfigurationException as e:
        raise ValueError(f"hardware (accelerator {hw.accelerator}, strategy {hw.strategy}, precision "
                         f"{hw.precision}): {e}") from None


def _fit(trainer: L.Trainer, module: JudgeModule, dm: JudgeDataModule, ckpt: Path | None) -> None:
    """``trainer.fit``, resuming from ``ckpt`` when given; a fit stopped by Ctrl-C or SIGTERM raises
    ``KeyboardInterrupt`` (Lightning ends it with SystemExit 1 or 0, silently), so the CLI says that
    a rerun resumes and exits 130."""
    with warnings.catch_warnings():
        # The sampler skips the batches a mid-epoch checkpoint already trained on (see resume.py),
        # which Lightning cannot see and warns about.
        warnings.filterwarnings("ignore", message=".*resuming from a checkpoint that ended before the epoch ended.*")
        try:
            trainer.fit(module, datamodule=dm, ckpt_path=str(ckpt) if ckpt is not None else None)
        except SystemExit:
            if trainer.interrupted:
                raise KeyboardInterrupt from None
            raise


def _finished(saved: SavedRun, cfg: TrainConfig, final: Path) -> bool:
    """True when ``saved`` was taken at the end of the last of ``optim.max_epochs`` epochs and the
    judge folder ``final`` is complete (it only ever appears whole, see :func:`_export_final`)."""
    done = saved.position.epoch >= cfg.optim.max_epochs and saved.position.batches_done == 0
    return done and (final / "judge_config.json").is_file()


def _export_final(judge, cfg: TrainConfig, final: Path, training: dict) -> None:
    """Write the judge folder into ``final.partial`` (a leftover of a killed export is removed
    first), then swap it in for ``final``: the folder is whole or absent, never half-written."""
    partial = final.with_name(final.name + ".partial")
    old = final.with_name(final.name + ".old")
    for leftover in (partial, old):
        if leftover.exists():
            shutil.rmtree(leftover)
    export_judge(judge, cfg, partial, training=training)
    if final.exists():  # a judge of the same run trained for fewer epochs: replaced
        os.replace(final, old)
    os.replace(partial, final)
    if old.exists():
        shutil.rmtree(old)
