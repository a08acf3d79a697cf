#!/usr/bin/env bash
# GPU check, for a machine with an NVIDIA GPU (a few minutes): set up the engine as a user's
# machine would (CUDA on the prebuilt libraries where the CUDA runtime is present; its smoke
# test requires every layer offloaded), serve the demo model fully offloaded, capture 20 s of
# the exact nvidia-smi loops Infer Lab runs as fixture files, run a short load and print the figures.
# Captured files land in $OUT (or ./gpu-check-out) for committing under test/fixtures/nvidia-smi/.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
export INFERLAB_DATA_DIR="$out/data" INFERLAB_CACHE_DIR="${INFERLAB_CACHE_DIR:-$out/cache}" INFERLAB_SKIP_SETUP=1

nvidia-smi -L | tee "$out/nvidia-smi-L.txt"
# What setup plans the engine from (test/fixtures/machines/ holds recorded-format stand-ins for these).
nvidia-smi > "$out/nvidia-smi.txt" || true
(vulkaninfo --summary > "$out/vulkaninfo-summary.txt" 2>&1) || true
(ldconfig -p | grep -E 'libcudart|libcublas' > "$out/ldconfig-cuda.txt") || true
[ -d node_modules ] || npm ci --no-audit --no-fund
# The plan setup makes by itself (CUDA on prebuilt libraries where the runtime is found), then its build.
./bin/inferlab setup --force 2>&1 | grep -v '%' | tee "$out/setup.log" | tail -12
./bin/inferlab doctor --json > "$out/doctor.json" || true

fields=timestamp,index,uuid,name,memory.used,memory.total,utilization.gpu,utilization.memory,temperature.gpu,power.draw,clocks.sm,pstate,clocks.mem,clocks_throttle_reasons.active
timeout 20 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 250 > "$out/idle-query-gpu.csv" || true

timeout 30 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 250 > "$out/load-query-gpu.csv" &
timeout 30 nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -lms 250 > "$out/load-compute-apps.csv" &
./bin/inferlab run --workload decode-heavy --model demo:q8_0 --concurrency 4 --duration 20 --set ngl=999 --db "$out/gpu.db" --json > "$out/run-summary.json"
wait || true

node -e '
  const s = require(process.argv[1]);
  const g = s.telemetry.gpu;
  console.log(JSON.stringify({ gpu: g, gpu_unavailable_reason: s.telemetry.gpu_unavailable_reason, energy: s.telemetry.energy, throttle: s.telemetry.throttle, decode_bandwidth: s.decode_bandwidth, output_tokens_per_s: s.throughput.output_tokens_per_s, ttft_p50: s.metrics.ttft_ms.p50, tpot_p50: s.metrics.tpot_ms.p50 }, null, 2));
' "$out/run-summary.json"
ls -la "$out"
