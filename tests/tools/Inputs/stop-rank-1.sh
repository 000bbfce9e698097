#!/bin/sh
# Runs one process of an mpirun job: rank 0 runs the command with its
# stdout in LOG; rank 1 runs it too and stops it (SIGSTOP, as a debugger
# would) once rank 0 has logged a step, so both have joined and are in the
# middle of training.  Usage: mpirun -np 2 sh stop-rank-1.sh LOG COMMAND...
log=$1
shift
if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then
  exec "$@" > "$log"
fi
"$@" &
pid=$!
tries=0
until grep -q "'loss'" "$log" 2>/dev/null || [ $tries -ge 600 ]; do
  sleep 0.1
  tries=$((tries + 1))
done
kill -STOP $pid
wait $pid
