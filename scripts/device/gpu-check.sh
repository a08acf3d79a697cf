#!/usr/bin/env bash
# GPU check, for a machine with an NVIDIA GPU (a few minutes): build llama.cpp with CUDA from
# the pinned bundle, serve the demo model fully offloaded, capture 20 s of the exact
# nvidia-smi loops Infer Lab runs as fixture files, run a short load and print the figures.
# Captured files land in $OUT (or ./gpu-check-out) for committing under test/fixtures/nvidia-smi/.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
export INFERLAB_DATA_DIR="$out/data" INFERLAB_CACHE_DIR="${INFERLAB_CACHE_DIR:-$out/cache}" INFERLAB_SKIP_SETUP=1

nvidia-smi -L | tee "$out/nvidia-smi-L.txt"
[ -d node_modules ] || npm ci --no-audit --no-fund
./bin/inferlab setup --backend cuda 2>&1 | tail -5

fields=timestamp,index,uuid,name,memory.used,memory.total,utilization.gpu,utilization.memory,temperature.gpu,power.draw,clocks.sm,pstate
timeout 20 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 250 > "$out/idle-query-gpu.csv" || true

timeout 30 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 250 > "$out/load-query-gpu.csv" &
timeout 30 nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -lms 250 > "$out/load-compute-apps.csv" &
./bin/inferlab run --workload decode-heavy --model demo:q8_0 --concurrency 4 --duration 20 --set ngl=999 --db "$out/gpu.db" --json > "$out/run-summary.json"
wait || true

node -e '
  const s = require(process.argv[1]);
  const g = s.telemetry.gpu;
  console.log(JSON.stringify({ gpu: g, gpu_unavailable_reason: s.telemetry.gpu_unavailable_reason, output_tokens_per_s: s.throughput.output_tokens_per_s, ttft_p50: s.metrics.ttft_ms.p50, tpot_p50: s.metrics.tpot_ms.p50 }, null, 2));
' "$out/run-summary.json"
ls -la "$out"
