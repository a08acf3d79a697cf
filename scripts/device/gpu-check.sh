#!/usr/bin/env bash
# GPU check for a lent NVIDIA machine, one command, at most about 8 minutes:
#   1. captures nvidia-smi (plain, -L, and the exact --query-gpu loop Infer Lab runs) as captured
#      fixture files with their source header, ready for test/fixtures/captured/nvidia-smi/;
#   2. sets up the engine per backend (CUDA as setup plans it, then Vulkan on its prebuilt libraries),
#      each in its own cache, a failed setup recorded and skipped;
#   3. per engine: a 15 s decode-heavy run fully offloaded, `server explain` on that engine's own
#      startup log, and (CUDA) a short quantization experiment;
#   4. prints one table: backend, offload, TTFT/TPOT, VRAM, power, energy per token, bandwidth share.
# Everything lands in $OUT (or ./gpu-check-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out/captured/nvidia-smi" "$out/captured/llama-logs"
export INFERLAB_DATA_DIR="$out/data" INFERLAB_SKIP_SETUP=1
started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }

command -v nvidia-smi >/dev/null || { echo "gpu-check: no nvidia-smi on PATH; this check is for an NVIDIA machine" >&2; exit 2; }
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1 | tr -d ' ')
board=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
capture() { # capture FILE DESCRIPTION COMMAND...: the command's output under a source header
  local file="$1" what="$2"
  shift 2
  { echo "# source: scripts/device/gpu-check.sh on a lent machine, $(date -u +%Y-%m-%d)"
    echo "# captured: $what"
    echo "# command: $*"
    echo "# ---"
    "$@" 2>&1 || true; } > "$file"
}
fields=timestamp,index,uuid,name,memory.used,memory.total,utilization.gpu,utilization.memory,temperature.gpu,power.draw,clocks.sm,pstate,clocks.mem,clocks_throttle_reasons.active
capture "$out/captured/nvidia-smi/table-$board-$driver.txt" "plain nvidia-smi, $board, driver $driver" nvidia-smi
capture "$out/captured/nvidia-smi/list-$board-$driver.txt" "nvidia-smi -L, $board, driver $driver" nvidia-smi -L
capture "$out/captured/nvidia-smi/query-gpu-idle-$board-$driver.csv" "Infer Lab's --query-gpu loop at idle (5 s at 250 ms)" \
  timeout 5 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 250
(vulkaninfo --summary > "$out/vulkaninfo-summary.txt" 2>&1) || true

[ -d node_modules ] || npm ci --no-audit --no-fund --ignore-scripts
[ -d out/cli ] || npm run build

summaries=()
for backend in cuda vulkan; do
  cache="$out/cache-$backend"
  export INFERLAB_CACHE_DIR="$cache"
  # CUDA: the plan setup makes by itself; Vulkan: asked for explicitly. A setup over its time is a failed setup.
  args=(--force); [ "$backend" = vulkan ] && args+=(--backend vulkan)
  if ! timeout 200 ./bin/inferlab setup "${args[@]}" > "$out/setup-$backend.log" 2>&1; then
    echo "gpu-check: $backend setup failed after $(elapsed) s (tail of $out/setup-$backend.log):" >&2
    tail -5 "$out/setup-$backend.log" >&2
    continue
  fi
  ./bin/inferlab doctor --json > "$out/doctor-$backend.json" || true
  server=$(node -e 'const d=require(process.argv[1]); console.log(d.engine?.serverPath ?? "")' "$out/doctor-$backend.json")
  # The engine's own startup log, fully offloaded, explained.
  if [ -n "$server" ]; then
    "$server" -m "$INFERLAB_DATA_DIR/demo-models/demo-q8_0.gguf" --port 39871 -ngl 999 -lv 4 > "$out/captured/llama-logs/$backend-$board.log" 2>&1 &
    pid=$!
    for _ in $(seq 50); do grep -q "listening on" "$out/captured/llama-logs/$backend-$board.log" && break; sleep 0.2; done
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    ./bin/inferlab server explain "$out/captured/llama-logs/$backend-$board.log" | tee "$out/explain-$backend.txt"
  fi
  ./bin/inferlab run --workload decode-heavy --model demo:q8_0 --concurrency 4 --duration 15 --set gpuLayers=999 \
    --db "$out/gpu.db" --json > "$out/run-$backend.json" && summaries+=("$backend=$out/run-$backend.json")
  if [ "$backend" = cuda ] && [ "$(elapsed)" -lt 300 ]; then
    ./bin/inferlab experiment quant --model demo:f16 --quants f16,q8_0,q4_k_m --workload chat-short --repeats 3 --requests 8 \
      --db "$out/gpu.db" --report "$out/quant-cuda.html" > "$out/quant-cuda.txt" 2>&1 || echo "gpu-check: the quant experiment failed (see $out/quant-cuda.txt)" >&2
  fi
done

node scripts/device/gpu-check-table.mjs "${summaries[@]}"
echo "gpu-check: $(elapsed) s; files in $out"
