#!/usr/bin/env bash
# Installs what the project needs on Debian 12 (only what is missing).
#   scripts/setup.sh demo   what building the ggufcheck command needs (the demo, a user's build)
#   scripts/setup.sh python that and the Python package's build (scripts/install-python.sh)
#   scripts/setup.sh        everything the test suite needs, then llama.cpp's prebuilt GGUF reader
#                           (libggml-base.so, npm) for the benchmark and the differential tests
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
case "$what" in
  demo | python | all) ;;
  *) echo "usage: scripts/setup.sh [demo|python]" >&2; exit 3 ;;
esac

# The command: a compiler, CMake, Ninja and the libraries the library links.
packages=(cmake ninja-build g++ libfmt-dev libcli11-dev nlohmann-json3-dev libssl-dev
          libxxhash-dev libhwy-dev
          # remote files (https://, hf://; docs/remote.md): optional, on when found
          libcurl4-openssl-dev
          # writes the man page and the shell completions from the built command's --help
          python3)
# The Python package (python/): pybind11 and Python's headers.
if [[ $what == python || $what == all ]]; then
  packages+=(python3-dev pybind11-dev)
fi
if [[ $what == all ]]; then
  packages+=(clang-14 clang-format pkg-config libgtest-dev libgmock-dev librapidcheck-dev
             libbenchmark-dev python3-jsonschema
             # runs the Python tests: the package's (python/tests/) and validator/tests/test_*.py
             python3-pytest
             # CommonMark parser: every code fence of the Markdown closes (test_markdown_fences.py)
             python3-markdown-it
             # the chat-template judge (validator/tests/template_judge.py): Jinja2's sandbox
             python3-jinja2
             # gguf-py's gguf_hash.py, which test_hash_compat.py compares ggufcheck hash with
             python3-numpy python3-tqdm python3-yaml
             # fuzzing: libFuzzer and the sanitizer runtimes (only recommended by clang-14),
             # llvm-cov/llvm-profdata/llvm-nm/llvm-symbolizer (fuzz/coverage, fuzz/run), libc++
             # (OSS-Fuzz builds with it: .clusterfuzzlite/test-build.sh), zip/unzip (seed corpora)
             libclang-rt-14-dev llvm-14 libc++-14-dev libc++abi-14-dev zip unzip
             # the pre-commit hook's test runs pre-commit and Git LFS for real
             pre-commit git-lfs
             # the pinned llama.cpp below comes from the npm registry
             ca-certificates
             # the man page's check (groff -ww), the Debian package (dpkg-shlibdeps for Depends,
             # and file, which CPack runs to find the binaries it hands to it)
             groff-base dpkg-dev file)
  # npm comes with Node.js where Node.js is installed from elsewhere; Debian's npm only if absent.
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
      exit 1
    }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[[ $what == demo || $what == python ]] && exit 0

# llama.cpp's own reader, pinned: the version the llama.cpp profile follows.
ggml_version="3.22.1"
ggml_dir=".deps/node-llama-cpp-linux-x64-${ggml_version}"
# Its libllama (the model loader) is the model differential test's reference.
if [[ ! -f "$ggml_dir/package/bins/linux-x64/libggml-base.so" ||
      ! -f "$ggml_dir/package/bins/linux-x64/libllama.v0.5.0.so" ]]; then
  echo "setup: fetching @node-llama-cpp/linux-x64@${ggml_version} (llama.cpp's libggml-base.so and libllama)"
  mkdir -p "$ggml_dir"
  if (cd "$ggml_dir" && npm pack --silent "@node-llama-cpp/linux-x64@${ggml_version}" >/dev/null 2>&1 &&
      tar xzf node-llama-cpp-linux-x64-*.tgz && rm -f node-llama-cpp-linux-x64-*.tgz); then
    :
  else
    echo "setup: warning: could not fetch the reference reader (npm registry unreachable?);" \
         "the tests that compare with llama.cpp say so and fail in CI" >&2
  fi
fi
