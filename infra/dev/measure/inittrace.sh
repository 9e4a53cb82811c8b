#!/usr/bin/env bash
# Compares the Go init of every function at two commits: each function's
# linux/amd64 binary run RUNS times, the two commits alternately, with
# GODEBUG=inittrace=1. A start is package init and main's wiring: a binary
# exits at lambda.Start, as no Lambda runtime API is set.
# Usage: infra/dev/measure/inittrace.sh BEFORE AFTER [RUNS]   (from the repo root)
# A function renamed between the commits is given as before=after in RENAMED;
# FUNCTIONS="a b" measures only those.
set -euo pipefail
cd "$(dirname "$0")/../../.."
before=$1 after=$2 runs=${3:-21}
RENAMED=${RENAMED:-"wake=wakeup runner=runner-api"}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/src-before" 2>/dev/null; git worktree remove --force "$work/src-after" 2>/dev/null; rm -rf "$work"' EXIT
for side in before after; do
  rev=${!side}
  git worktree add -q --detach "$work/src-$side" "$rev"
  mkdir -p "$work/bin-$side"
  for d in "$work/src-$side"/functions/*/; do
    name=$(basename "$d")
    for pair in $RENAMED; do [[ $side == before && $name == "${pair%%=*}" ]] && name=${pair#*=}; done
    (cd "$work/src-$side" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -tags lambda.norpc -o "$work/bin-$side/$name" "./functions/$(basename "$d")")
  done
  echo "built $(ls "$work/bin-$side" | wc -l) functions at $rev" >&2
done
# Runs both binaries of every function RUNS times, alternately, each with
# GODEBUG=inittrace=1, and prints one row per function: the CPU time (user +
# system, from the kernel's child accounting) of one start, median of the
# runs, which a busy host disturbs far less than wall time; the fastest wall
# time; and the bytes and allocations of package init, summed over packages
# (the same on every run).
python3 - "$work" "$runs" <<'PY'
import os, re, resource, statistics, subprocess, sys, time
work, runs = sys.argv[1], int(sys.argv[2])
only = os.environ.get("FUNCTIONS", "").split()
env = dict(os.environ, GODEBUG="inittrace=1")
env.pop("AWS_LAMBDA_RUNTIME_API", None)
def one(path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([path], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    inits = re.findall(r"^init \S+ @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs", out, re.M)
    return cpu, wall, sum(int(b) for b, _ in inits), sum(int(a) for _, a in inits)
print("| function | CPU before (median ms) | CPU after (median ms) | change | fastest wall before → after (ms) | init bytes before → after | init allocs before → after |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name in sorted(os.listdir(f"{work}/bin-after")):
    b, a = f"{work}/bin-before/{name}", f"{work}/bin-after/{name}"
    if not os.path.exists(b) or (only and name not in only):
        continue
    rb, ra = [], []
    for _ in range(runs):
        rb.append(one(b)); ra.append(one(a))
    cb, ca = statistics.median(r[0] for r in rb), statistics.median(r[0] for r in ra)
    print(f"| {name} | {cb:.1f} | {ca:.1f} | {(ca - cb) / cb * 100:+.1f} % | {min(r[1] for r in rb):.1f} → {min(r[1] for r in ra):.1f} | {rb[0][2]:,} → {ra[0][2]:,} | {rb[0][3]:,} → {ra[0][3]:,} |", flush=True)
PY
