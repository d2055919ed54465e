"""``JudgePersistence``: the one save / load / provenance / upload of every judge kind.

Every judge kind writes the same folder (``docs/judge_folder.md``, format owned by
:mod:`evaluators.judges.folder`): ``judge_config.json`` (the common keys, the kind's own keys, the
caller's ``extra``), the LoRA adapter as peft safetensors, the chat template, a tiny ``base/`` or
the recorded base model, and at most one head weight file. A kind mixes this class in and supplies
only what is its own:

``head_file``                       its head's file name (None: no head weights)
``hashes_head``                     whether ``checkpoint_sha256`` covers the head file too
``_config_extra()``                 its ``judge_config.json`` keys, in the order they are written
``_head_tensors()``                 its head tensors (name -> tensor; empty: no head file)
``_check_config(folder, config, tensors)``
                                    refusals that need no base model (run before it loads)
``_from_folder(folder, backbone, config, tensors, **common)``
                                    the judge, from the loaded backbone, its config and head tensors
``prompt_version``                  attribute or property, stamped on every score row

The class is an ``nn.Module`` (in the spirit of ``huggingface_hub.PyTorchModelHubMixin``): a kind
calls ``super().__init__()`` first, so its ``backbone`` and head are registered submodules and
``parameters()``, ``to()``, ``train()`` / ``eval()`` and ``state_dict()`` cover the whole judge.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import ClassVar

import torch

from evaluators.config_input import short_text
from evaluators.judges.folder import (
    ADAPTER_WEIGHTS,
    JUDGE_CONFIG,
    JudgeConfigError,
    JudgeFolderError,
    check_finite_tensors,
    check_weight_file,
    load_backbone,
    provenance_fields,
    read_judge_config,
    upload_judge_folder,
    weights_hash,
    write_head_weights,
    write_judge_folder,
)
from evaluators.judges.label_words import check_recorded_ids
from evaluators.library_noise import warn_again


class JudgeModule(torch.nn.Module):
    """How every judge scores. Public verbs: ``prepare_input(x)`` (the kind's CPU half, run in a
    data-loader worker), ``score_examples``, ``score`` and ``forward(batch)`` (differentiable;
    training calls it too). A kind supplies ``prepare_input``, ``forward`` and ``_decide(outputs,
    examples)``; the engine runs them (:func:`evaluators.engine.forward_batches`)."""

    #: Key of a prepared example that holds its model inputs (None: the example is them).
    inputs_key: ClassVar[str | None] = None

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        """A left-padded batch of model inputs (default: the backbone's own collate)."""
        return self.backbone.collate(examples)

    def _model_inputs(self, example: dict) -> dict:
        return example[self.inputs_key] if self.inputs_key else example

    def _length(self, example: dict) -> int:
        """What batches are sorted by (prompt tokens; ties keep input order)."""
        return len(self._model_inputs(example)["input_ids"])

    def score_examples(self, examples: list[dict], batch_size: int = 8) -> list[dict]:
        """One result per :meth:`prepare_input` output, in order, the same whatever ``batch_size``."""
        from evaluators.engine import forward_batches

        return forward_batches(self, examples, batch_size)

    def score(self, inputs: list[dict], batch_size: int = 8) -> list[dict]:
        """:meth:`prepare_input` then :meth:`score_examples`: one result per input, in order."""
        return self.score_examples([self.prepare_input(x) for x in inputs], batch_size=batch_size)


class JudgePersistence(JudgeModule):
    """Folder I/O and provenance shared by every judge kind (see the module docstring for the hooks).

    The judge itself holds ``backbone`` (an ``AudioLLM``), ``name``, ``seed``, ``max_seconds``
    (longest clip scored, seconds), ``checkpoint_hash`` and ``prompt_version``; a loaded judge also
    holds ``config``, its folder's ``judge_config.json``.
    """

    kind: ClassVar[str]
    #: File name of the kind's head weights in a judge folder (None: the kind has no head).
    head_file: ClassVar[str | None] = None
    #: True: ``checkpoint_sha256`` hashes adapter + head file; False: the adapter file alone
    #: (``"base-only"`` without one), as the kinds written first always did.
    hashes_head: ClassVar[bool] = False
    #: What :meth:`from_pretrained` measures of the folder's weights; ``"none"`` for a judge built in memory.
    checkpoint_hash: str = "none"

    # ---- hooks (per kind) --------------------------------------------------------------------------
    def _config_extra(self) -> dict:
        """The kind's own ``judge_config.json`` keys (between ``base_model`` and ``chat_template_source``)."""
        return {}

    def _head_tensors(self) -> dict[str, torch.Tensor]:
        """The head weights to write to ``head_file`` (name -> tensor); empty: none written."""
        return {}

    @classmethod
    def _check_config(cls, folder: Path, config: dict, tensors: dict[str, torch.Tensor] | None) -> None:
        """Refuse a ``judge_config.json`` or head ``tensors`` (None: no head file) the kind cannot
        load, before the base model loads (default: nothing refused)."""

    @classmethod
    def _from_folder(cls, folder: Path, backbone, config: dict, tensors: dict[str, torch.Tensor] | None,
                     **common):
        """The judge from its loaded ``backbone``, ``config`` and head ``tensors`` (None: no head
        file). ``common`` (``name``, ``max_seconds``, ``seed`` and the caller's constructor options)
        goes to the constructor."""
        raise NotImplementedError(f"{cls.__name__} does not load judge folders")

    # ---- shared ------------------------------------------------------------------------------------
    def provenance(self) -> dict:
        """Fields stamped on every score row: ``judge``, ``checkpoint_sha256``, ``prompt_version``,
        ``seed``, and how the model runs (``device``, ``dtype``, ``attn_implementation``)."""
        return provenance_fields(self.name, self.checkpoint_hash, self.prompt_version, self.seed,
                                 self.backbone.runtime())

    def save_pretrained(self, folder: str | Path, extra: dict | None = None) -> Path:
        """Write this judge as a judge folder (``docs/judge_folder.md``); ``extra`` adds keys
        (training-side: ``task``, ``lora``, ``training``). Head weights holding NaN or infinity are
        refused before anything is written. Returns the folder."""
        tensors = self._head_tensors()
        if tensors:
            check_finite_tensors(tensors, str(Path(folder) / self.head_file))
        out = write_judge_folder(self.backbone, folder, self.kind, self.name, self._config_extra(),
                                 self.max_seconds, self.seed, extra)
        if tensors:
            write_head_weights(tensors, out, self.head_file)
        return out

    @classmethod
    def from_pretrained(cls, folder: str | Path, dtype: str | torch.dtype | None = "auto", device: str = "cpu",
                        attn_implementation: str | None = None, **options):
        """Load a judge folder of this kind: base model + LoRA adapter (unmerged, so scores match
        the training-time model exactly) + head + what ``judge_config.json`` records.

        ``dtype`` ``"auto"`` is bfloat16 on CUDA, float32 elsewhere; ``options`` are constructor
        options a folder does not record (e.g. a verbalizer's ``exact_length_batches``). A folder
        of another kind, a damaged weight file, an adapter that does not fit the base or label
        words the tokenizer encodes otherwise is refused with one line naming the file.
        """
        folder = Path(folder)
        config = read_judge_config(folder, expected_kind=cls.kind)
        tensors = cls._read_head(folder)
        cls._check_config(folder, config, tensors)
        backbone, adapter_hash = _load_backbone_whole(folder, config, dtype, device, attn_implementation)
        if config.get("label_token_ids"):
            check_recorded_ids(backbone.tokenizer, config["label_token_ids"], str(folder))
        common = {"max_seconds": config.get("max_seconds"), "name": config.get("judge_name", folder.name),
                  "seed": int(config.get("seed", 0)), **options}
        judge = cls._from_folder(folder, backbone, config, tensors, **common)
        if not cls.hashes_head:
            judge.checkpoint_hash = adapter_hash
        else:
            has_head = getattr(judge, "head", None) is not None
            judge.checkpoint_hash = weights_hash(folder, (ADAPTER_WEIGHTS, cls.head_file) if has_head
                                                 else (ADAPTER_WEIGHTS,))
        judge.config = config
        return judge

    def push_to_hub(self, repo_id: str, private: bool = True, extra: dict | None = None,
                    commit_message: str | None = None) -> str:
        """Save this judge to a temporary folder and upload it to the Hub repository ``repo_id``
        (:func:`evaluators.judges.folder.upload_judge_folder`). Returns the commit URL."""
        with tempfile.TemporaryDirectory() as tmp:
            out = self.save_pretrained(Path(tmp) / "judge", extra)
            return upload_judge_folder(out, repo_id, private, commit_message)

    # ---- helpers for the kinds' hooks --------------------------------------------------------------
    @classmethod
    def _read_head(cls, folder: Path) -> dict[str, torch.Tensor] | None:
        """The tensors of ``folder/head_file``, or None when the kind has none or the file is absent;
        a damaged file is refused naming it."""
        if cls.head_file is None or not (folder / cls.head_file).is_file():
            return None
        from safetensors.torch import load_file

        check_weight_file(folder / cls.head_file)
        return load_file(str(folder / cls.head_file))

    @classmethod
    def _fit_head(cls, head: torch.nn.Module, tensors: dict[str, torch.Tensor] | None,
                  folder: Path) -> torch.nn.Module:
        """``head`` with ``tensors`` loaded (strict), in eval mode; a missing head file or tensors
        that do not fit the head ``judge_config.json`` describes are refused naming the file."""
        if tensors is None:
            raise JudgeFolderError(f"{folder}: no {cls.head_file} (this judge kind needs its head weights)")
        try:
            head.load_state_dict(tensors)
        except RuntimeError as e:
            raise JudgeConfigError(f"{folder / cls.head_file}: does not fit the head of {JUDGE_CONFIG} "
                                   f"({short_text(e)})") from None
        return head.eval()


def _load_backbone_whole(folder: Path, config: dict, dtype, device: str, attn_implementation: str | None):
    """``load_backbone``, refusing an adapter of which peft found tensors no module takes (keys of
    another transformers layout): the judge would run with part of its adapter silently missing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_backbone(folder, config, dtype=dtype, device=device, attn_implementation=attn_implementation)
    for w in caught:
        if "missing adapter keys" in str(w.message):
            raise JudgeFolderError(f"{folder}: {ADAPTER_WEIGHTS} does not fit the base model ({str(w.message)[:300]})")
        warn_again(w)  # under its own module: the library-noise filters still apply
    return loaded
