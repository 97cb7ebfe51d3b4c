#!/usr/bin/env bash
# stage.sh OLLAMA_MODULE_DIR DEST: copies exactly the ggml sources the CUDA
# backend's CMake build needs (gpu/cuda/CMakeLists.txt beside them) from
# the pinned github.com/ollama/ollama module into DEST:
#   DEST/CMakeLists.txt
#   DEST/ggml/cmake/, ggml/include/, ggml/src/{CMakeLists.txt,*.c,*.cpp,*.h}
#   DEST/ggml/src/ggml-cuda/ (with its template instances)
#   DEST/ggml/src/ggml-cpu/ggml-cpu-impl.h (ggml-quants.c includes it)
set -euo pipefail
mod=$1 dest=$2
src=$mod/ml/backend/ggml/ggml
[ -f "$src/src/ggml-cuda/ggml-cuda.cu" ] || { echo "stage.sh: $src has no ggml-cuda sources (is $mod the ollama module?)" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/ggml/src/ggml-cpu"
cp "$(dirname "$0")/CMakeLists.txt" "$dest/"
cp -r "$src/cmake" "$src/include" "$dest/ggml/"
cp "$src/src/CMakeLists.txt" "$src"/src/*.c "$src"/src/*.cpp "$src"/src/*.h "$dest/ggml/src/"
cp -r "$src/src/ggml-cuda" "$dest/ggml/src/"
cp "$src/src/ggml-cpu/ggml-cpu-impl.h" "$dest/ggml/src/ggml-cpu/"
chmod -R u+w "$dest"
