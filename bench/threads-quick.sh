#!/usr/bin/env bash
# Thread scaling of storel on a many-core machine (execute median of --repeat 20 at 1/2/4/8/16
# threads) and PyTorch CPU beside it; then a 2-core proxy (taskset -c 0,1) at 1 and 2 threads,
# alternated. results/threads-16core.md was made so.
#   bench/threads-quick.sh STOREL DATA_DIR OUT
# DATA_DIR holds cnr-2000.mtx.gz, landmark.mtx.gz, wordnet30_synset_ptr_synset.tns.gz and the
# harness-made inputs named below (bench/results/tmp/gen after `bench/run.sh --only threads`; the
# dense D may be gzipped). Run from the repository root; python3 must have PyTorch and SciPy.
set -u
[ $# -eq 3 ] || { echo "usage: $0 STOREL DATA_DIR OUT" >&2; exit 2; }
S=$(realpath "$1") D=$(realpath "$2") O=$3; mkdir -p "$O"
{ date -u; nproc; lscpu | grep -E 'Model name|Core|Socket|L3|NUMA'; python3 -c 'import torch,scipy;print("torch",torch.__version__,"scipy",scipy.__version__)'; } > $O/machine.txt 2>&1
cat $O/machine.txt
T=$D/wordnet30_synset_ptr_synset.tns.gz
input() { if [ -e "$D/$1" ]; then echo "$D/$1"; else echo "$D/$1.gz"; fi; }
cases=(
 "spmv-cnr|examples/spmv.sdql --tensor A=$D/cnr-2000.mtx.gz:csr --data x=$D/vec-325557-s12.npy"
 "batax-cnr|examples/batax.sdql --tensor A=$D/cnr-2000.mtx.gz:csr --data x=$D/vec-325557-s12.npy --data beta=1.5"
 "spmv-landmark|examples/spmv.sdql --tensor A=$D/landmark.mtx.gz:csr --data x=$D/vec-2704-s12.npy"
 "batax-landmark|examples/batax.sdql --tensor A=$D/landmark.mtx.gz:csr --data x=$D/vec-2704-s12.npy --data beta=1.5"
 "mttkrp-csr-wordnet|examples/mttkrp.sdql --tensor B=$T:csf --dims B=117659,26,117659 --tensor C=$D/rand-26x25-d0.03125-s14.mtx:csr --tensor D=$(input rand-25x117659-d0.03125-s15.mtx):csr"
 "mttkrp-dense16-wordnet|examples/mttkrp.sdql --tensor B=$T:csf --dims B=117659,26,117659 --tensor C=$D/rand-26x16-d1-s61.mtx:dense --tensor D=$(input rand-16x117659-d1-s62.mtx):dense"
)
TIMEFORMAT='%R %U %S'
one() { # pin threads args...
  local pin=$1 t=$2; shift 2
  { tm=$( { time $pin $S run "$@" --timings --repeat 20 --threads $t --output /tmp/ans.tns 2>/tmp/err >/dev/null; } 2>&1 ); }
  ms=$(sed -n 's/^timing: execute \([0-9.]*\) ms/\1/p' /tmp/err)
  echo "exec_ms=${ms:-FAIL} real_user_sys=$tm"; [ -z "$ms" ] && tail -3 /tmp/err
}
for c in "${cases[@]}"; do
  name=${c%%|*}; read -r -a args <<<"${c#*|}"
  for t in 1 2 4 8 16; do echo "$name t=$t $(one '' $t "${args[@]}")" | tee -a $O/scaling.txt; done
done
for c in "${cases[@]}"; do
  name=${c%%|*}; read -r -a args <<<"${c#*|}"
  for t in 1 2 1 2; do echo "$name pinned2 t=$t $(one 'taskset -c 0,1' $t "${args[@]}")" | tee -a $O/pinned2.txt; done
done
py() { name=$1 t=$2; shift 2; ms=$(python3 bench/peers/pypeer.py --system torch --threads $t --repeat 10 "$@" 2>&1 | sed -n 's/^timing: execute \([0-9.]*\) ms/\1/p'); echo "$name torch t=$t exec_ms=${ms:-FAIL}" | tee -a $O/torch.txt; }
for t in 1 16; do
  py spmv-cnr $t --kernel spmv --tensor A=$D/cnr-2000.mtx.gz --data x=$D/vec-325557-s12.npy
  py batax-cnr $t --kernel batax --tensor A=$D/cnr-2000.mtx.gz --data x=$D/vec-325557-s12.npy --data beta=1.5
  py spmv-landmark $t --kernel spmv --tensor A=$D/landmark.mtx.gz --data x=$D/vec-2704-s12.npy
  py batax-landmark $t --kernel batax --tensor A=$D/landmark.mtx.gz --data x=$D/vec-2704-s12.npy --data beta=1.5
  py mttkrp-dense16 $t --kernel mttkrp-dense --tensor B=$T --dims B=117659,26,117659 --tensor C=$D/rand-26x16-d1-s61.mtx --tensor D=$(input rand-16x117659-d1-s62.mtx)
done
