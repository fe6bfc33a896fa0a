#!/usr/bin/env bash
# The model-zoo campaign on a CUDA host: one part of the zoo (scripts/model_zoo.py), measured the
# way users run it, in one command that fits in one device call:
#   validation/scripts/zoo_campaign.sh K/N          # part K of N; N=6 parts cover the 54 models
#   validation/scripts/zoo_campaign.sh MODEL,MODEL  # those models
# The 30 evaluation models of data/zoo/split.json, fp16, batch 1 and 8, as host runs by (H100)
# and bz (H200) ran them on one machine, three calls of 7-8.5 minutes (validation/README.md):
#   ev=$(python3 scripts/model_zoo.py --side evaluation)    # the 17 vision models, then 13 text
#   VISION=$(echo "$ev" | cut -d, -f1-17) TEXT=$(echo "$ev" | cut -d, -f18-)
#   PRECISIONS=fp16 BATCHES=1,8 BUDGET_S=0.12 STAGES=ts TS_FRAMEWORKS=torchscript TS_ROUNDS=2 \
#     BENCH_TIMEOUT_S=320 DEADLINE_S=565 validation/scripts/zoo_campaign.sh "$TEXT"
#   PRECISIONS=fp16 BATCHES=1,8 BUDGET_S=0.12 BENCH=none STAGES=eager DEADLINE_S=560 \
#     validation/scripts/zoo_campaign.sh "$TEXT"           # then the same with "$VISION"
# (the bench in three dtypes first, then TorchScript; Python eager and CUDA graphs captured from
# eager code in the later calls, two rounds each). Host run ca (H100) added TorchScript on the
# vision models as a call of its own between them (205 s): the first call's TorchScript options
# with BENCH=none DEADLINE_S=420 and "$VISION".
# torch.compile (host run ch): STAGES=eager EAGER_GRAPHS=0 ROUNDS=1 BENCH=none BUDGET_S=0.3
# MODEL_TIMEOUT_S=200 EAGER_ARGS="--compile default,reduce-overhead --visits 3" (three visits a
# point within its model's process, so that its spread meets both of the CPU's speeds, which
# alternate within seconds; host runs cb to cf visited once) and a short list: each model's
# process compiles four times (two modes at two batches, 2-68 s each on an H200; DenseNet-169
# and Swin-S take 48-68 s, past a 200 s process), so a call of about 520 s holds three to five
# models (host run ce: 13 models in four calls, the first with the bench; host run cs, with
# BENCH=none on a machine already started: two CNNs in 117 s, three in 150 s); a model cut by the
# deadline before its kernel pass keeps its timed rows, which `ftax validate` does not compare.
# It builds ftax if the carried binary does not run (in the background, while the part's models
# are traced to TorchScript, which times nothing), benches the host (`ftax bench`, so that the
# part is predicted from this host's own bench), runs `ftax validate` through the TorchScript
# interpreter and as CUDA graphs captured from the trace, then Python eager under
# torch.inference_mode() and CUDA graphs captured from the eager module
# (scripts/validate_eager.py --graphs). Nothing else runs on the host while a stage times, and
# no profiler is attached while timing; kernel records come from separate passes.
# Results in $OUT (or ./out): bench.measurements.json, torchscript-cudagraph.json, eager.json,
# export.json (which models traced, and why the others did not), campaign.log, and models.tar
# (the traces, weights zeroed, for predicting from the trace on any machine).
# Env: PRECISIONS (fp16,fp32), BATCHES (1,4,16,64,128), BUDGET_S (0.25), ROUNDS (2: the Python
# eager stage's rounds; each round runs every model's process again, the models in a new
# shuffled order, and a point's visits are pooled, so that a slow stretch of the host reaches
# a point in one visit, not all: host runs bu, by and bz, in two rounds, had 70-78% of Python
# eager points right, where one round on the fresh hosts before them gave 47-60%), TS_ROUNDS (3: the TorchScript stage visits every point this many times
# in shuffled order, so that a slow stretch of the host reaches every point alike), BENCH
# (full|quick|none, default full), STAGES (ts,eager: which of the two to run), TS_FRAMEWORKS
# (torchscript,cuda-graph: what `ftax validate` runs from the trace; CUDA graphs captured from
# the eager module are always measured), DEADLINE_S (520): seconds the whole campaign may take;
# each stage gets what is left (a stage cut short keeps the rows it wrote: both write as they
# go, and the eager stage's model in progress keeps its rows too, folded in from its part file); WORKER_TIMEOUT_S (90): one `ftax validate` worker; MODEL_TIMEOUT_S (60): one model's
# Python eager process; EAGER_GRAPHS (1): 0 measures Python eager alone, without CUDA graphs
# captured from the eager module; EAGER_ARGS: more options of validate_eager.py; PASS: suffix
# of the eager result (eager$PASS.json), for a second pass minutes later, e.g. STAGES=eager
# BENCH=none EAGER_GRAPHS=0 EAGER_ARGS=--no-kernels PASS=-pass2 with the models in reverse
# order, joined to the first by validation/scripts/merge_passes.py (per point the faster pass;
# a user's process runs at the host's quiet speed, a slow stretch of the host is not the model); BENCH_ARGS: more options
# of `ftax bench` (e.g. --dtypes fp16); BENCH_TIMEOUT_S: seconds the bench may take (default a third
# of what is left when it starts, and at least 240 s, never more than is left: a whole
# `ftax bench --dtypes fp16` took 148 s on two H200 hosts; the Python chains come last, and a
# bench cut short in them leaves the sections bench_eager.py finished in
# measurements.json.eager.json for a later `ftax bench --resume`).
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 K/N | MODEL,MODEL,...   (part K of N of the model zoo, or those models)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
cd "$root"
start=$(date +%s)
deadline=$(( start + ${DEADLINE_S:-520} ))
left() { echo $(( deadline - $(date +%s) )); }
# The bench's default share: a third of what is left, at least 240 s, at most what is left.
bench_share() { local l; l=$(left); local s=$(( l / 3 )); (( s < 240 )) && s=240; (( s > l )) && s=$l; echo $s; }
if [[ $1 == */* ]]; then models=$(python3 scripts/model_zoo.py --part "$1") || exit 2; else models=$1; fi
export MODELS=$models PRECISIONS=${PRECISIONS:-fp16,fp32} BATCHES=${BATCHES:-1,4,16,64,128}
export BUDGET_S=${BUDGET_S:-0.25} ROUNDS=${ROUNDS:-2}
log() { echo "[zoo $(date +%H:%M:%S) +$(( $(date +%s) - start ))s] $*" | tee -a "$out/campaign.log" >&2; }
log "part $1: $models"
source scripts/gpu_env.sh
ftax=${FTAX:-$root/build-gpu/ftax}
export FTAX=$ftax
stages=",${STAGES:-ts,eager},"
build_pid=
if [[ $stages == *,ts,* || ${BENCH:-full} != none ]] && ! "$ftax" --version >/dev/null 2>&1; then
  log "building ftax (in the background, while the models are traced)"
  scripts/build_gpu.sh "$root/build-gpu" >"$out/build.log" 2>&1 &
  build_pid=$!
fi

mkdir -p /tmp/models
# --reuse: a trace an earlier call on this machine made is kept (tracing all 30 models again
# took 72-81 s of each later call on host run ak).
PYTHONUNBUFFERED=1 timeout -k 5 $(( $(left) / 2 )) python3 scripts/export_torchscript.py --out /tmp/models \
  --models "$MODELS" --precisions "$PRECISIONS" --report "$out/export.json" --reuse 2>&1 | tee -a "$out/campaign.log" | tail -3
if [ -n "$build_pid" ]; then
  wait "$build_pid" && log "built" || log "build failed: $(tail -3 "$out/build.log" | tr '\n' ' ')"
fi

if "$ftax" --version >/dev/null 2>&1; then
  case "${BENCH:-full}" in
    full) timeout -k 5 "${BENCH_TIMEOUT_S:-$(bench_share)}" env OUT="$out" validation/scripts/gpu_campaign.sh bench || log "bench ended with $?" ;;
    quick) timeout -k 5 "${BENCH_TIMEOUT_S:-$(bench_share)}" env OUT="$out" validation/scripts/gpu_campaign.sh quickbench || log "bench ended with $?" ;;
    none) ;;
  esac
  [ -f "$out/measurements.json" ] && mv "$out/measurements.json" "$out/bench.measurements.json"
  if [[ $stages == *,ts,* ]]; then
    if [[ $stages == ",ts," ]]; then share=$(( $(left) - 15 )); else share=$(( $(left) / 2 )); fi
    timeout -k 10 "$share" env OUT="$out" SKIP_EXPORT=1 WORKER_TIMEOUT_S="${WORKER_TIMEOUT_S:-90}" \
      ROUNDS="${TS_ROUNDS:-3}" validation/scripts/gpu_campaign.sh ts || log "ts stage ended with $?"
  fi
else
  log "no ftax binary: no bench and no TorchScript stage"
fi
[ -f "$out/validation_ts.json" ] && python3 validation/scripts/keep_traces.py "$out/validation_ts.json" --models-out "$out/models"
[ -f "$out/validation_ts.json" ] && mv "$out/validation_ts.json" "$out/torchscript-cudagraph.json"
if [[ $stages == *,eager,* ]]; then
  timeout -k 10 $(( $(left) - 15 )) env OUT="$out" \
    EAGER_ARGS="$([ "${EAGER_GRAPHS:-1}" = 1 ] && echo --graphs) --model-timeout-s ${MODEL_TIMEOUT_S:-60} ${EAGER_ARGS:-}" \
    validation/scripts/gpu_campaign.sh eager || log "eager stage ended with $?"
fi
ev="$out/validation_eager${PASS:-}.json"
# A deadline that cut a model short leaves the rows its process wrote in a part file: keep them.
if [[ $stages == *,eager,* ]] && compgen -G "$ev.*.part.json" > /dev/null; then
  python3 scripts/validate_eager.py --out "$ev" --fold-parts || log "folding the interrupted model's rows failed"
fi
[ -f "$ev" ] && python3 validation/scripts/keep_traces.py "$ev" --models-out "$out/models"
[ -f "$ev" ] && mv "$ev" "$out/eager${PASS:-}.json"
# One archive for the traces: a device call returns at most 8 files.
[ -d "$out/models" ] && tar -C "$out" -cf "$out/models.tar" models && rm -rf "$out/models"
log "part $1 done"
