"""Judge kinds the training loop knows (``TrainConfig.task``)."""

from trainer.benchmarks.att.task import AttHlsTask
from trainer.task import JudgeTask
from trainer.benchmarks.nvv.task import NvvVerifyTask
from trainer.benchmarks.cast.task import WordStressTask

TASKS: dict[str, JudgeTask] = {
    "att_hls": AttHlsTask(),
    "word_stress": WordStressTask(),
    "nvv_verify": NvvVerifyTask(),
}
