# gpu-check.sh's helpers: running a part under the check's deadline, and
# recording its verdict, note and log. Sourced by scripts/gpu-check.sh,
# which sets work, summary, logs, results, root, deadline and failures.
# shellcheck shell=bash

#===--- Running parts and recording them ---------------------------------===#

# The limit a part gets: its own budget, cut to what is left before the
# deadline (keeping 15 s to write the results).
part_limit() {
  local want=$1 left=$((deadline - $(date +%s) - 15))
  echo $((left < want ? left : want))
}

# run_part NAME BUDGET COMMAND...: COMMAND's stdout and stderr into
# $work/NAME.log, "exit-status seconds limit" into $work/NAME.rc.
# Exit status 125: not run, out of time; 126: not run, named in
# KILN_GPU_SKIP; 124 or 137: killed at the limit.
run_part() {
  local name=$1 limit rc t0
  limit=$(part_limit "$2")
  shift 2
  t0=$(date +%s)
  if [[ ,${KILN_GPU_SKIP:-}, == *,"$name",* ]]; then
    echo "not run: named in KILN_GPU_SKIP" > "$work/$name.log"
    rc=126
  elif ((limit < 10)); then
    echo "not run: the check's time budget is spent" > "$work/$name.log"
    rc=125
  else
    echo "+ $*" > "$work/$name.log"
    timeout -k 10 "$limit" "$@" < /dev/null >> "$work/$name.log" 2>&1
    rc=$?
  fi
  echo "$rc $(($(date +%s) - t0)) $limit" > "$work/$name.rc"
  return "$rc"
}

# A long log's first 150 and last 400 lines.
clip() {
  local lines
  lines=$(wc -l < "$1")
  if ((lines > 600)); then
    head -n 150 "$1"
    echo "... ($((lines - 550)) lines cut) ..."
    tail -n 400 "$1"
  else
    cat "$1"
  fi
}

# nvidia-smi's used memory every 0.2 s into $1 while the caller runs a part
# (stop_sampling ends it): the GPU's whole use, CUDA context included.
start_sampling() {
  ( while sleep 0.2; do
      nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits
    done ) > "$1" 2> /dev/null &
  sampler=$!
}
stop_sampling() { kill "$sampler" 2> /dev/null; }

# record NAME VERDICT NOTE: the summary line, and the log into logs.txt.
record() {
  local name=$1 verdict=$2 note=$3 rc=- secs=0 limit=0
  [[ -f $work/$name.rc ]] && read -r rc secs limit < "$work/$name.rc"
  printf '%-4s  %-20s %4ss  %s\n' "$verdict" "$name" "$secs" "$note" >> "$summary"
  [[ $verdict == PASS || $verdict == INFO ]] || failures=$((failures + 1))
  {
    printf '\n===== %s: %s (exit %s after %s s, limit %s s) =====\n' \
      "$name" "$verdict" "$rc" "$secs" "$limit"
    [[ -f $work/$name.log ]] && clip "$work/$name.log"
  } >> "$logs"
}

# What a non-zero exit status means, for the summary.
exit_note() {
  local rc
  read -r rc _ < "$work/$1.rc"
  case $rc in
    0) echo "ok" ;;
    124 | 137) echo "timed out" ;;
    125) echo "not run: out of time" ;;
    126) echo "not run: KILN_GPU_SKIP" ;;
    *) echo "exit $rc" ;;
  esac
}

# record_by_exit NAME [NOTE]: PASS when the part exited 0.
record_by_exit() {
  local rc
  read -r rc _ < "$work/$1.rc"
  if [[ $rc == 0 ]]; then record "$1" PASS "${2:-}"; else record "$1" FAIL "$(exit_note "$1") ${2:-}"; fi
}

# kiln-train's log → "N losses, first → last", for the summary.
loss_note() {
  grep -oE "^\{'loss': [^,]+" "$1" | awk '{ v[NR] = $2 } END {
    if (NR) printf "%d losses, %s -> %s", NR, v[1], v[NR]; else printf "no losses" }'
}

# bench_note DIR: each system's median step (second half of the steps) in
# a kiln-bench results folder, on one line.
bench_note() {
  python3 -c 'import json, statistics, sys
systems = json.load(open(sys.argv[1]))["systems"]
def step(r):
    s = r.get("step_ms") or []
    return "%.1f ms" % statistics.median(s[len(s) // 2:]) if s else str(r.get("status"))
print(", ".join("%s %s" % (name, step(r)) for name, r in systems.items()))' \
    "$1/results.json" 2> /dev/null || echo "no results.json"
}

# Merges every JSON written so far into results.json (after each part, so
# a check cut short still brings back what it measured).
collect() {
  local items=() f
  for f in "$work"/*.json; do
    [[ -e $f ]] && items+=("$(basename "$f" .json)=$f")
  done
  [[ -f $work/bench/results.json ]] && items+=("kiln_bench=$work/bench/results.json")
  [[ -f $work/bench-bf16/results.json ]] && items+=("kiln_bench_bf16=$work/bench-bf16/results.json")
  [[ -f $work/maxbatch/results.json ]] && items+=("kiln_bench_maxbatch=$work/maxbatch/results.json")
  python3 "$root/scripts/gpu/collect.py" "$results/results.json" "${items[@]}" \
    >> "$work/collect.log" 2>&1
}
