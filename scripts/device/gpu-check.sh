#!/usr/bin/env bash
# GPU check for a lent NVIDIA machine, one command, at most about 8 minutes:
#   1. captures nvidia-smi (plain, -L, and the exact --query-gpu loop Infer Lab runs) as captured
#      fixture files with their source header, ready for test/fixtures/captured/nvidia-smi/;
#   2. sets up the engine setup plans for this machine (CUDA where the runtime is there; where it
#      is not, setup falls back to a CPU engine and this check says so), then Vulkan on its
#      prebuilt libraries where vulkaninfo lists a Vulkan GPU; a failed setup is recorded and skipped;
#   3. per engine: a decode-heavy run fully offloaded, `server explain` on that engine's own
#      startup log, and (the first engine) a short quantization experiment;
#   4. prints one table: backend, offload, TTFT/TPOT, VRAM, power, energy per token, bandwidth share.
# Everything lands in $OUT (or ./gpu-check-out). GPU_CHECK_CACHE and GPU_CHECK_DATA name the cache
# and data folders to use (default: new ones under $OUT, so the check builds what this machine
# plans, and the demo models, from nothing);
# GPU_CHECK_RUN_S the length of each run (15 s), GPU_CHECK_SETUP_S the cap on each setup (200 s),
# GPU_CHECK_IDLE_S the idle capture of the sampling loop (5 s), GPU_CHECK_QUANT_REQUESTS the requests
# per window of the quantization experiment (8) and GPU_CHECK_QUANT_REPEATS its windows per
# quantization (3). test/integration/gpu-check.test.ts runs this
# script, shortened, with the nvidia-smi stand-in on PATH, so it is known to work before a GPU is lent.
# It goes on past a failed step, so one failure does not hide the next, and exits 1 after naming
# every step that failed (a lent machine's minutes are too few to find them one at a time).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out/captured/nvidia-smi" "$out/captured/llama-logs"
export INFERLAB_DATA_DIR="${GPU_CHECK_DATA:-$out/data}" INFERLAB_SKIP_SETUP=1 INFERLAB_CACHE_DIR="${GPU_CHECK_CACHE:-$out/cache}"
run_seconds="${GPU_CHECK_RUN_S:-15}" setup_seconds="${GPU_CHECK_SETUP_S:-200}"
idle_seconds="${GPU_CHECK_IDLE_S:-5}" quant_requests="${GPU_CHECK_QUANT_REQUESTS:-8}" quant_repeats="${GPU_CHECK_QUANT_REPEATS:-3}"
started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }
say() { echo "gpu-check: $*"; }
failed_steps=()
step_failed() { # step_failed STEP WHY: said now, and listed again at the end
  failed_steps+=("$1")
  echo "gpu-check: FAILED: $1: $2" >&2
}

command -v nvidia-smi >/dev/null || { echo "gpu-check: no nvidia-smi on PATH; this check is for an NVIDIA machine" >&2; exit 2; }
# Read from the two outputs every driver prints alike: the table's header and the -L list.
file_safe() { tr ' ' '-' | tr -cd 'A-Za-z0-9.-'; }
driver=$(nvidia-smi 2>/dev/null | sed -n 's/.*Driver Version: *\([0-9.]*\).*/\1/p' | head -1 | file_safe)
board=$(nvidia-smi -L 2>/dev/null | sed -n 's/^GPU 0: \(.*\) (UUID.*/\1/p' | head -1 | file_safe)
driver="${driver:-unknown-driver}" board="${board:-unknown-gpu}"
say "$board, driver $driver"
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
capture "$out/captured/nvidia-smi/query-gpu-idle-$board-$driver.csv" "Infer Lab's --query-gpu loop at idle ($idle_seconds s at 250 ms)" \
  timeout "$idle_seconds" nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 250

if [ ! -d node_modules ] && ! npm ci --no-audit --no-fund --ignore-scripts; then
  echo "gpu-check: npm ci failed; nothing else can run" >&2
  exit 1
fi
if [ ! -d out/cli ] && ! npm run build; then
  echo "gpu-check: the app build failed; nothing else can run" >&2
  exit 1
fi

# Vulkan is worth a setup only where its loader lists a real GPU (not llvmpipe, a CPU renderer).
backends=(planned)
if ! command -v vulkaninfo >/dev/null; then
  say "vulkan: skipped (no vulkaninfo on PATH, so no Vulkan GPU can be listed)"
elif vulkaninfo --summary > "$out/vulkaninfo-summary.txt" 2>&1 && grep -Eq 'PHYSICAL_DEVICE_TYPE_(DISCRETE|INTEGRATED)_GPU' "$out/vulkaninfo-summary.txt"; then
  backends+=(vulkan)
else
  say "vulkan: skipped (vulkaninfo --summary lists no Vulkan GPU; see $out/vulkaninfo-summary.txt)"
fi

# explain BACKEND SERVER: the engine's own startup log, fully offloaded, captured and explained.
# Fails unless the engine got as far as listening and the explanation read its log.
explain() {
  local log="$out/captured/llama-logs/$1-$board.log" pid
  "$2" -m "$INFERLAB_DATA_DIR/demo-models/demo-q8_0.gguf" --host 127.0.0.1 --port 39871 -ngl 999 -lv 4 > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.2; done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  grep -q "listening on" "$log" || { step_failed "explain $1" "the engine never said it was listening (see $log)"; return; }
  ./bin/inferlab server explain "$log" | tee "$out/explain-$1.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || step_failed "explain $1" "server explain failed on $log"
}

summaries=()
for wanted in "${backends[@]}"; do
  args=()
  [ "$wanted" = vulkan ] && args+=(--backend vulkan)
  # A setup over its time is a failed setup. The planned engine failing leaves the CPU engine, said so.
  if ! timeout "$setup_seconds" ./bin/inferlab setup "${args[@]}" > "$out/setup-$wanted.log" 2>&1; then
    step_failed "$wanted setup" "after $(elapsed) s (tail of $out/setup-$wanted.log below)"
    tail -5 "$out/setup-$wanted.log" >&2
    [ "$wanted" = planned ] || continue
    say "falling back to the CPU engine (setup --backend cpu)"
    if ! timeout "$setup_seconds" ./bin/inferlab setup --backend cpu > "$out/setup-cpu.log" 2>&1; then
      step_failed "cpu setup" "the fallback failed too (see $out/setup-cpu.log)"
      continue
    fi
  fi
  ./bin/inferlab doctor --json > "$out/doctor-$wanted.json" || step_failed "doctor ($wanted)" "see $out/doctor-$wanted.json"
  read -r backend server < <(node -e 'const d = require(process.argv[1]); console.log(d.engine?.backend ?? "none", d.engine?.serverPath ?? "")' "$out/doctor-$wanted.json")
  label="$backend"
  if [ "$wanted" = planned ] && [ "$backend" != cuda ]; then
    label="$backend (no CUDA)"
    say "setup gave a $backend engine, not CUDA, on this NVIDIA machine; its row measures the $backend, not the GPU. Setup said:"
    grep -hE 'WILL RUN ON THE CPU|engine plan|failed to build' "$out"/setup-*.log | awk '!seen[$0]++' | sed 's/^/  /'
  fi
  if [ -n "$server" ]; then explain "$backend" "$server"; else step_failed "explain $backend" "doctor names no llama-server"; fi
  if ./bin/inferlab run --workload decode-heavy --model demo:q8_0 --concurrency 4 --duration "$run_seconds" --set gpuLayers=999 \
    --db "$out/gpu.db" --json > "$out/run-$backend.json"; then
    summaries+=("$label=$out/run-$backend.json")
  else
    step_failed "$backend run" "see $out/run-$backend.json"
  fi
  if [ "$wanted" = planned ] && [ "$(elapsed)" -ge 300 ]; then
    say "quant experiment skipped: $(elapsed) s gone, over the 300 s that leave it room"
  elif [ "$wanted" = planned ]; then
    if ./bin/inferlab experiment quant --model demo:f16 --quants f16,q8_0,q4_k_m --workload chat-short --repeats "$quant_repeats" --requests "$quant_requests" \
      --db "$out/gpu.db" --report "$out/quant-$backend.html" > "$out/quant-$backend.txt" 2>&1; then
      say "quant experiment on the $backend engine: $out/quant-$backend.txt"
    else
      step_failed "quant experiment ($backend)" "see $out/quant-$backend.txt"
    fi
  fi
done

node scripts/device/gpu-check-table.mjs "${summaries[@]}" || step_failed "table" "gpu-check-table.mjs could not read the run summaries"
[ ${#summaries[@]} -gt 0 ] || step_failed "runs" "no engine completed a run"
say "$(elapsed) s; files in $out"
if [ ${#failed_steps[@]} -gt 0 ]; then
  joined=$(printf '%s; ' "${failed_steps[@]}")
  echo "gpu-check: ${#failed_steps[@]} step(s) failed: ${joined%; }" >&2
  exit 1
fi
say "every step attempted succeeded"
