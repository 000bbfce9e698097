#!/usr/bin/env bash
# Builds a self-contained kiln for a machine without LLVM/MLIR (the GPU
# machine): bundle/bin holds kiln-train, kiln-run, kiln-bench, kilnc and the
# GPU test programs, bundle/lib every shared library they need that a stock
# Ubuntu 24.04 with an NVIDIA driver lacks (LLVM and MLIR linked statically
# into libkiln.so with all of kiln, oneDNN, OpenBLAS, Abseil, ...); every binary finds
# them through its RUNPATH ($ORIGIN/../lib). The folder is packed as
# bundle.tar.xz, which travels with the source tree; the script fails when
# the archive is over the limit (48 MiB, so tree + bundle stay under the
# device tool's 64 MiB). Unpack there with:
#   mkdir -p bundle && tar -xJf bundle.tar.xz -C bundle
# BUILD_DIR (default build-bundle), BUNDLE_DIR (default bundle) and JOBS may
# be set by the caller.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-bundle}
out=${BUNDLE_DIR:-$root/bundle}
archive="$out.tar.xz"
limit_mib=48

"$root/scripts/setup.sh"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKILN_BUNDLE=ON
fi
tools=(kiln-train kiln-run kiln-bench kilnc)
tests=(CudaRuntimeTest CudaRandomGraphTest CudaBackendTest CudaFlashAttentionTest
  NumericsTest LlamaTest)
fakes=(kiln-fake-cuda kiln-fake-cublaslt)
targets=("${tools[@]}")
# The list is read whole first: `ninja ... | grep -q` under pipefail fails
# whenever grep stops reading before ninja has written everything (SIGPIPE),
# which silently left targets out of the bundle.
known=$(ninja -C "$build" -t targets all)
for t in "${tests[@]}" "${fakes[@]}"; do
  if grep -q "^$t:" <<< "$known"; then targets+=("$t"); fi
done
ninja -C "$build" -j"${JOBS:-$(nproc)}" "${targets[@]}"

rm -rf "$out" "$archive"
mkdir -p "$out/bin" "$out/lib"
for t in "${targets[@]}"; do
  if [[ -x "$build/bin/$t" ]]; then
    install -m 755 "$build/bin/$t" "$out/bin/$t"
  else # the fake driver libraries the runtime tests load
    install -m 755 "$build/lib/lib$t.so" "$out/lib/lib$t.so"
  fi
done
install -m 755 "$build/lib/libkiln.so" "$out/lib/"

# Every library the binaries load, except the C/C++ runtime every Linux
# has (glibc's libraries, libstdc++, libgcc_s): those must come from the
# host, newer ones included.
system_names='(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s)\.so'
system_lib="^$system_names"
for f in "$out"/bin/* "$out"/lib/*.so; do
  LD_LIBRARY_PATH="$out/lib" ldd "$f" | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  [[ "$name" =~ $system_lib ]] && continue
  [[ -e "$out/lib/$name" ]] || install -m 644 "$(readlink -f "$path")" "$out/lib/$name"
done
# NumericsTest keeps its line tables: it checks that a NaN's message names
# the test's own file:line, which the symbolizer reads from them.
for f in "$out"/bin/* "$out"/lib/*.so*; do
  [[ $(basename "$f") == NumericsTest ]] && continue
  strip --strip-unneeded "$f" 2>/dev/null || true
done

# Every library a binary loads must now resolve inside the bundle (through
# the binaries' RPATH, which also serves the bundled libraries' own
# dependencies), except the system's C/C++ runtime. The bench peers and the
# GPU check's scripts are in the source tree, which travels too.
outside=$(for f in "$out"/bin/*; do
  LD_LIBRARY_PATH= ldd "$f" | awk -v f="$f" '/=> /{print f": "$1" => "$3}'
done | grep -v " => $out/" | grep -vE ": $system_names" || true)
if [[ -n "$outside" ]]; then
  echo "bundle: libraries resolved outside the bundle:" >&2
  echo "$outside" >&2
  exit 1
fi

tar -C "$out" -cf - . | xz -T0 -6 > "$archive"
folder=$(du -sb "$out" | cut -f1)
packed=$(stat -c %s "$archive")
printf 'bundle: %s (%.1f MiB) packed into %s (%.1f MiB; limit %d MiB)\n' \
  "$out" "$(echo "$folder / 1048576" | bc -l)" "$archive" \
  "$(echo "$packed / 1048576" | bc -l)" "$limit_mib"
ls -l "$out/bin" "$out/lib" | awk 'NF > 5 {printf "  %10d  %s\n", $5, $9}'
if (( packed > limit_mib * 1048576 )); then
  echo "bundle: $archive is over $limit_mib MiB" >&2
  exit 1
fi
