#!/usr/bin/env bash
# Build tools/goldens/llamacpp_harness.cpp against llama.cpp b9553's own `llama-common`.
#
# Usage: tools/goldens/llamacpp_build.sh GIT_DIR [WORK_DIR]
#   GIT_DIR   a bare git dir of Telosnex/fllama (`git clone --bare https://github.com/Telosnex/fllama`);
#             its commit 1d28604d ("Refresh llama.cpp to b9553 (cbbe868c0)") vendors llama.cpp at
#             upstream tag b9553 (9e3b928fd) under src/llama.cpp/.
#   WORK_DIR  where the tree, the build and the harness go (default /tmp/llamacpp-b9553).
# Prints the harness's path last. The llama.cpp source is never copied into mockoss.
#
# The tree is extracted file by file (`git archive` stops at the snapshot's absent LFS blobs:
# models/ggml-vocab-*.gguf, the wllama wasm, none of which the build needs). Only the targets the
# harness links are built: ggml-base, ggml-cpu, llama, llama-common (-O1, static, no OpenMP, no
# server/tools/examples/tests/UI/OpenSSL); about 15 minutes with -j2.
set -euo pipefail

GIT_DIR=${1:?usage: llamacpp_build.sh GIT_DIR [WORK_DIR]}
WORK=${2:-/tmp/llamacpp-b9553}
COMMIT=1d28604d
HERE=$(cd "$(dirname "$0")" && pwd)
SRC="$WORK/src/llama.cpp"
BUILD="$WORK/build"
JOBS=${JOBS:-2}

if [ ! -f "$SRC/CMakeLists.txt" ]; then
    mkdir -p "$WORK"
    git --git-dir="$GIT_DIR" ls-tree -r "$COMMIT" src/llama.cpp | while read -r _mode _type hash path; do
        if git --git-dir="$GIT_DIR" cat-file -e "$hash" 2>/dev/null; then
            mkdir -p "$WORK/$(dirname "$path")"
            git --git-dir="$GIT_DIR" cat-file blob "$hash" >"$WORK/$path"
        fi
    done
fi

cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF -DGGML_NATIVE=OFF >"$WORK/cmake.log"
cmake --build "$BUILD" --target llama-common -j"$JOBS" >"$WORK/build.log"

libs=(common/libllama-common.a common/libllama-common-base.a vendor/cpp-httplib/libcpp-httplib.a
      src/libllama.a ggml/src/libggml.a ggml/src/libggml-cpu.a ggml/src/libggml-base.a)
g++ -std=c++17 -O1 -o "$WORK/llamacpp_harness" "$HERE/llamacpp_harness.cpp" \
    -I"$SRC/common" -I"$SRC/include" -I"$SRC/ggml/include" -I"$SRC/vendor" \
    "${libs[@]/#/$BUILD/}" -lpthread -ldl
echo "$WORK/llamacpp_harness"
