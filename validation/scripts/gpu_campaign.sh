#!/usr/bin/env bash
# The measurement campaign on a CUDA host, in one command (see validation/campaigns.md):
#   validation/scripts/gpu_campaign.sh STAGE... [-- options]
# Stages: smoke (binary runs, CUPTI works), bench (full `ftax bench`), quickbench,
# eager (scripts/validate_eager.py over the validation models), ts (export TorchScript and
# run `ftax validate` through the interpreter and CUDA graphs).
# Results go to $OUT (or ./out): measurements.json, validation_eager.json, validation_ts.json.
# Env: MODELS (comma list), PRECISIONS, BATCHES, BUDGET_S; ROUNDS and SEED (visit every point
# ROUNDS times in shuffled order, pooling samples; default 4, as on host runs n and o); PASS
# (suffix of the eager/ts result files, for repeated passes merged by validation/scripts/merge_passes.py);
# TS_FRAMEWORKS (frameworks of the ts stage, default torchscript,cuda-graph); WORKER_TIMEOUT_S
# (seconds one validate worker may run, default 300); EAGER_ARGS (extra options of validate_eager.py, e.g. --graphs);
# SKIP_EXPORT=1 reuses the TorchScript files an earlier ts stage exported to /tmp/models;
# BENCH_ARGS: more options of `ftax bench` (e.g. --dtypes fp16).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
cd "$root"
source scripts/gpu_env.sh
ftax=${FTAX:-$root/build-gpu/ftax}
MODELS=${MODELS:-bert-base,distilbert,bert-wide,bert-deep,gpt2,resnet50}
PRECISIONS=${PRECISIONS:-fp16,fp32}
BATCHES=${BATCHES:-1,2,4,8,16,32,64,128}
BUDGET_S=${BUDGET_S:-0.6}
ROUNDS=${ROUNDS:-4}
SEED=${SEED:-1}
log() { echo "[campaign $(date +%H:%M:%S)] $*" | tee -a "$out/campaign.log" >&2; }

if ! "$ftax" --version >/dev/null 2>&1; then
  log "carried binary does not run here ($("$ftax" --version 2>&1 | head -2)); building"
  scripts/build_gpu.sh "$root/build-gpu" 2>&1 | tail -5 | tee -a "$out/campaign.log"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,memory.total,driver_version \
  --format=csv >>"$out/campaign.log" 2>&1

for stage in "$@"; do
  t0=$(date +%s)
  case "$stage" in
    smoke)
      "$ftax" bench --quick --classes gemm,elementwise --dtypes fp16 --frameworks libtorch-eager \
        -o /tmp/smoke.json 2>&1 | tail -5
      python3 -c "import json;d=json.load(open('/tmp/smoke.json'));print('smoke rows',len(d['kernels']),len(d['dispatch']),'failures',len(d['failures']))"
      ;;
    quickbench) "$ftax" bench --quick ${BENCH_ARGS:-} -o "$out/measurements.json" 2>&1 | grep -v "^\[bench\]   " ;;
    bench) "$ftax" bench ${BENCH_ARGS:-} -o "$out/measurements.json" 2>&1 | grep -v "^\[bench\]   " ;;
    eager)
      # With the traces of the ts stage (run it first), rows also name their TorchScript file,
      # so models without an arch spec can be predicted from it.
      PYTHONUNBUFFERED=1 python3 scripts/validate_eager.py --out "$out/validation_eager${PASS:-}.json" \
        --models "$MODELS" --precisions "$PRECISIONS" --batches "$BATCHES" --budget-s "$BUDGET_S" \
        --rounds "$ROUNDS" --seed "$SEED" --models-dir /tmp/models ${EAGER_ARGS:-} 2>&1 | tee -a "$out/campaign.log" | tail -3
      python3 validation/scripts/keep_traces.py "$out/validation_eager${PASS:-}.json" --models-out "$out/models"
      ;;
    ts)
      mkdir -p /tmp/models
      [ -n "${SKIP_EXPORT:-}" ] ||
        PYTHONUNBUFFERED=1 python3 scripts/export_torchscript.py --out /tmp/models --models "$MODELS" \
          --precisions "$PRECISIONS" 2>&1 | tee -a "$out/campaign.log" | tail -2
      # One sweep over every file: with ROUNDS > 1 each point is visited ROUNDS times in
      # shuffled order and its samples pooled (validation/campaigns.md, entry 22).
      files=()
      for m in ${MODELS//,/ }; do for p in ${PRECISIONS//,/ }; do
        [ -f "/tmp/models/$m.$p.pt" ] && files+=("/tmp/models/$m.$p.pt") || log "no /tmp/models/$m.$p.pt"
      done; done
      "$ftax" validate "${files[@]}" --framework "${TS_FRAMEWORKS:-torchscript,cuda-graph}" --batch "$BATCHES" \
        --budget-s "$BUDGET_S" --rounds "$ROUNDS" --seed "$SEED" --worker-timeout "${WORKER_TIMEOUT_S:-300}" \
        -o "$out/validation_ts${PASS:-}.json" 2>>"$out/campaign.log" || log "validate failed with $?"
      python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print('validation_ts rows',len(d['rows']),'failures',len(d['failures']))" \
        "$out/validation_ts${PASS:-}.json"
      python3 validation/scripts/keep_traces.py "$out/validation_ts${PASS:-}.json" --models-out "$out/models"
      ;;
    *) log "unknown stage $stage" ;;
  esac
  log "stage $stage took $(( $(date +%s) - t0 )) s"
done
