# The kiln lit suite: every .mlir (and .test) file under tests/ is a test,
# run with kiln's tools and LLVM's FileCheck, not and split-file on PATH.
import os
import shutil
import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "tests")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "unit", "Inputs", "CMakeLists.txt"]
config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%kiln_src", config.kiln_src_root))
# The fake CUDA libraries (tests/fake-cuda) are built here.
config.substitutions.append(("%kiln_lib", config.kiln_lib_dir))

# Sanitizer builds (cmake -DKILN_SANITIZE=ON) mark tests that cannot run
# under AddressSanitizer with `UNSUPPORTED: asan`.
if config.kiln_sanitize.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("asan")

# ptxas (the CUDA toolkit's assembler) checks the PTX kiln emits; tests that
# need it say `REQUIRES: ptxas` and are reported unsupported without it.
ptxas = os.environ.get("KILN_PTXAS") or (
    "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK)
    else shutil.which("ptxas"))
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# valgrind (scripts/setup.sh installs it) checks passes for reads of freed
# memory that a release build survives by luck: `REQUIRES: valgrind`.
if shutil.which("valgrind"):
    config.available_features.add("valgrind")

# Open MPI's mpirun (scripts/setup.sh installs it) starts the data-parallel
# tests' processes, with kiln's MPI plugin built beside the tools: `REQUIRES:
# mpi`. As root mpirun wants --allow-run-as-root; --oversubscribe lets the
# processes share fewer cores than there are of them.
mpirun = shutil.which("mpirun")
if mpirun and os.path.exists(os.path.join(config.kiln_lib_dir, "libkiln-mpi.so")):
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", mpirun + " --allow-run-as-root --oversubscribe"))

# The fake CUDA libraries are built where the CUDA headers are; tests that
# run tools on them say `REQUIRES: fake-cuda`.
if os.path.exists(os.path.join(config.kiln_lib_dir, "libkiln-fake-cuda.so")):
    config.available_features.add("fake-cuda")

# A machine with an NVIDIA driver has libcuda.so.1; the no-GPU error tests
# are unsupported there (and the GPU suite is scripts/gpu-check.sh).
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# The peers' Python (bench/peers/setup.sh, or $KILN_PEERS_PYTHON) with
# transformers: tests that compare with it say `REQUIRES: peer-transformers`
# and are reported unsupported without it.
import subprocess
peers_python = os.environ.get("KILN_PEERS_PYTHON") or os.path.join(
    config.kiln_src_root, "bench", "peers", ".venv", "bin", "python")
try:
    if subprocess.run([peers_python, "-c", "import transformers, torch"],
                      capture_output=True, timeout=120).returncode == 0:
        config.available_features.add("peer-transformers")
        config.substitutions.append(("%peers_python", peers_python))
        # peft too: tests that load kiln's adapters with PeftModel say
        # `REQUIRES: peer-peft`.
        if subprocess.run([peers_python, "-c", "import peft"],
                          capture_output=True, timeout=120).returncode == 0:
            config.available_features.add("peer-peft")
except (OSError, subprocess.TimeoutExpired):
    pass
