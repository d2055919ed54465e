"""Judge kinds the training loop knows (``TrainConfig.task``)."""

from trainer.tasks.att import AttHlsTask
from trainer.tasks.base import JudgeTask

TASKS: dict[str, JudgeTask] = {
    "att_hls": AttHlsTask(),
}
