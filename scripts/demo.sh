#!/usr/bin/env bash
# Installs what is missing, builds kiln, and runs the main job: one training
# step of a small MLP (forward, backward, SGD update) written in the kiln
# dialect, on the reference evaluator, printing the loss and the new weights.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
"$root/scripts/build.sh"

model="$root/tests/models/mlp_train_step.mlir"
echo "== kiln-run $model --inputs random --seed 1 --backend reference"
"$build/bin/kiln-run" "$model" --inputs random --seed 1 --backend reference
