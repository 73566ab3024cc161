#!/bin/sh
# Packs the inputs of benchmarks/gpu_check.sh, before a GPU machine is held:
# FedLU's R3 partition of FB15k-237 ($FEDGRAPH_DATA/fedlu-fb15k-237/R3),
# compressed, in DIR/inputs.tar.gz (default runs/gpu/, git-ignored), refused
# over 60 MB (a command runner carries at most 64 MiB with the working tree).
#
# No wheels: the GPU image holds PyTorch, PyG, pytest, tqdm, numpy, scipy and
# scikit-learn, and the code paths gpu_check.sh runs import neither
# torch-scatter, Flower nor geomloss (entity sums fall back to
# torch_geometric.utils.scatter; `gpu_check.sh --cpu` checks this with the
# three hidden).
#
#   FEDGRAPH_DATA=/path/to/datasets sh benchmarks/gpu_pack.sh [--out DIR]
set -eu

usage() {
  echo "usage: FEDGRAPH_DATA=ROOT sh $0 [--out DIR]" >&2
  exit 2
}

dest=runs/gpu
while [ $# -gt 0 ]; do
  case $1 in
  --out)
    [ $# -ge 2 ] || usage
    dest=$2
    shift 2
    ;;
  *) usage ;;
  esac
done

root=${FEDGRAPH_DATA:-}
[ -n "$root" ] || { echo "gpu_pack.sh: error: set FEDGRAPH_DATA to the data root holding fedlu-fb15k-237/R3" >&2; exit 2; }
part=$root/fedlu-fb15k-237/R3
[ -d "$part/client0" ] || { echo "gpu_pack.sh: error: $part: no federated partition folder (client0/ missing)" >&2; exit 2; }

limit=$((60 * 1000 * 1000))
mkdir -p "$dest"
tmp=$dest/inputs.tar.gz.tmp
tar -C "$part/.." -czf "$tmp" R3
size=$(wc -c <"$tmp" | tr -d ' ')
if [ "$size" -gt "$limit" ]; then
  rm -f "$tmp"
  echo "gpu_pack.sh: error: the packed inputs are $size bytes, over the $limit limit" >&2
  exit 2
fi
mv "$tmp" "$dest/inputs.tar.gz"
echo "packed $part into $dest/inputs.tar.gz ($size bytes)"
