"""Judge kinds the training loop knows (``TrainConfig.task``)."""

from trainer.tasks.att import AttHlsTask
from trainer.tasks.base import JudgeTask
from trainer.tasks.nvv import NvvVerifyTask
from trainer.tasks.stress import WordStressTask

TASKS: dict[str, JudgeTask] = {
    "att_hls": AttHlsTask(),
    "word_stress": WordStressTask(),
    "nvv_verify": NvvVerifyTask(),
}
