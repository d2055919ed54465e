#!/usr/bin/env bash
# Multi-GPU training launcher. Lightning spawns one process per device itself (DDP / DeepSpeed ZeRO-2),
# so a single call is enough on one node; on SLURM, run this script once per node with srun.
#   scripts/train_multi_gpu.sh configs/att/qwen2_5_omni_7b.yaml [KEY=VALUE ...]
set -euo pipefail
config=${1:?usage: $0 CONFIG.yaml [KEY=VALUE ...]}
shift
export TOKENIZERS_PARALLELISM=false
# ZeRO-3 is known to hang with Qwen2.5-Omni LoRA: configs use deepspeed_stage_2.
exec omnijudge train --config "$config" --set "$@"
