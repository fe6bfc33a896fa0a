#!/usr/bin/env bash
# One command: install dependencies, build ftax, and run the main job on a shipped example.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j"$(nproc)"
profile="$root/data/profiles/h200.json"
echo "== ftax predict --arch bert-base --profile $profile"
"$root/build/ftax" predict --arch bert:layers=12,hidden=768,heads=12,ffn=3072 --dim seq=128 \
  --profile "$profile" --framework pytorch-eager,torchscript,cuda-graph --precision fp16 --batch 1:128
