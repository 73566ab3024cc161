#!/bin/sh
# One GPU check, within about 8 minutes, on a machine with one CUDA GPU whose
# python3 holds PyTorch and PyG (no torch-scatter, Flower or geomloss, no
# network): the CUDA tests, the speed of each training path and a FedE run on
# FedLU's R3 partition to its best validation round (or as far as its time
# allows). Results are a handful of small files in $OUT (default
# runs/gpu/out):
#
#   summary.txt               machine, then each step's exit code and seconds
#   tests.txt                 pytest's report of the CUDA test files
#   speed-host-batched.json   benchmarks/device_speed.py, host sampling, batched
#   speed-host-sequential.json  host sampling, clients one after another
#   speed-device-sequential.json  --sample-on device, sequential
#   fede-r3.json              the run's results.json (progress.json if cut off)
#   fede-r3.log               the run's last 200 lines
#
# Inputs: runs/gpu/inputs.tar.gz from benchmarks/gpu_pack.sh (carried with
# the working tree). Each step has a time limit (seconds, from the
# environment): TESTS_SECONDS (150), SPEED_SECONDS (50 each), RUN_SECONDS
# (150). The steps share TorchInductor's on-disk cache, so later steps load
# kernels the earlier ones compiled.
#
# --cpu runs the same steps on the CPU with tiny settings, with torch-scatter,
# Flower and geomloss hidden from Python, and only collects the tests (a
# rehearsal on any machine: it checks the script, the inputs and the imports).
#
#   sh benchmarks/gpu_pack.sh                      # here, once
#   OUT=$OUT sh benchmarks/gpu_check.sh            # on the GPU machine
#   sh benchmarks/gpu_check.sh --cpu               # rehearsal on a CPU
set -u

usage() {
  echo "usage: sh $0 [--cpu] [--inputs FILE]" >&2
  exit 2
}

cpu=0
inputs=runs/gpu/inputs.tar.gz
while [ $# -gt 0 ]; do
  case $1 in
  --cpu) cpu=1; shift ;;
  --inputs)
    [ $# -ge 2 ] || usage
    inputs=$2
    shift 2
    ;;
  *) usage ;;
  esac
done

[ -f "$inputs" ] || { echo "gpu_check.sh: error: $inputs not found (run benchmarks/gpu_pack.sh first)" >&2; exit 2; }
PYTHON=${PYTHON:-python3}
OUT=${OUT:-runs/gpu/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$inputs" -C "$work"
data=$work/R3
[ -d "$data/client0" ] || { echo "gpu_check.sh: error: $inputs holds no R3/client0" >&2; exit 2; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

if [ "$cpu" = 1 ]; then
  device=cpu
  # torch-scatter, Flower and geomloss fail to import, as on the GPU image
  mkdir -p "$work/hide"
  cat >"$work/hide/sitecustomize.py" <<'EOF'
import sys


class _Hidden:
    names = ("torch_scatter", "flwr", "geomloss")

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Hidden())
EOF
  export PYTHONPATH="$work/hide:$PYTHONPATH"
  tiny="--dim 8 --batch-size 16 --num-negatives 4 --local-epochs 1 --threads 1"
  speed_rounds=2
  run_opts="--rounds 2 --eval-every 1 $tiny"
  test_opts="--collect-only"
else
  device=cuda
  tiny=""
  speed_rounds=3
  run_opts="--local-training batched"
  test_opts="--durations=15"
fi

summary=$OUT/summary.txt
status=0
"$PYTHON" - >"$summary" 2>&1 <<'EOF' || status=1
import os, platform, torch
print("gpu_check.sh on", platform.node(), "python", platform.python_version())
print("torch", torch.__version__, "cuda", torch.version.cuda,
      "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
print("cpus", os.cpu_count(), "load", os.getloadavg())
EOF

# step NAME SECONDS COMMAND...: runs COMMAND under a time limit and records
# its exit code (124: cut off at the limit) and wall seconds in the summary.
step() {
  name=$1 limit=$2
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@"
  rc=$?
  echo "$name: exit $rc in $(($(date +%s) - start)) s (limit $limit s)" >>"$summary"
  return $rc
}

# shellcheck disable=SC2086  # $test_opts, $tiny and $run_opts are word lists
{
  step tests "${TESTS_SECONDS:-150}" "$PYTHON" -m pytest -q -rfEs $test_opts \
    -p no:cacheprovider tests/federated/test_device.py \
    tests/federated/test_sample_on_device.py tests/training/test_sample_on.py \
    tests/runtime/test_run_record.py tests/runtime/test_fede_device_cost.py \
    >"$OUT/tests.txt" 2>&1 || status=1

  for path in host-batched host-sequential device-sequential; do
    sample=${path%-*} training=${path#*-}
    step "speed $path" "${SPEED_SECONDS:-50}" "$PYTHON" benchmarks/device_speed.py \
      --data "$data" --device $device --sample-on "$sample" \
      --local-training "$training" --rounds $speed_rounds $tiny \
      --out "$OUT/speed-$path.json" >>"$summary" 2>&1 || status=1
  done

  step "fede r3" "${RUN_SECONDS:-150}" "$PYTHON" -m fedgraph train "$data" \
    --algorithm fede --model transe --device $device --quiet $run_opts \
    --out "$work/fede-r3" >"$work/fede-r3.log" 2>&1
  rc=$?
}
tail -n 200 "$work/fede-r3.log" >"$OUT/fede-r3.log"
if [ -f "$work/fede-r3/results.json" ]; then
  cp "$work/fede-r3/results.json" "$OUT/fede-r3.json"
elif [ -f "$work/fede-r3/progress.json" ] && [ "$rc" = 124 ]; then
  cp "$work/fede-r3/progress.json" "$OUT/fede-r3.json"  # cut off at its limit
else
  status=1
fi
echo "status: $status" >>"$summary"
cat "$summary"
exit $status
