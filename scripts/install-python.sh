#!/usr/bin/env bash
# Builds the ggufcheck Python package for the python3 on PATH and installs it where that
# interpreter imports it: the active virtual environment, else the user's site-packages
# (python3 -m site --user-site); --target DIR installs into DIR instead (put DIR on PYTHONPATH).
# Installs the Debian packages the build needs first (scripts/setup.sh python; root or sudo).
#   bash scripts/install-python.sh [--target DIR]
#   python3 -c "import ggufcheck; print(ggufcheck.validate('examples/valid/tiny-llama.gguf').ok)"
set -euo pipefail
cd "$(dirname "$0")/.."
me="install-python"

target=""
while (($#)); do
  case "$1" in
    --target) [[ $# -ge 2 ]] || { echo "$me: --target needs a directory" >&2; exit 3; }
              target="$2"; shift 2 ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$me: unknown argument '$1' (see --help)" >&2; exit 3 ;;
  esac
done

bash scripts/setup.sh python
python="$(command -v python3)" || { echo "$me: no python3 on PATH" >&2; exit 1; }
if [[ -z $target ]]; then
  # A virtual environment's own packages; otherwise the user's site, which python3 puts on
  # sys.path by itself (unless user sites are off: then say how to choose a place).
  target="$("$python" - <<'PY'
import site, sys, sysconfig
if sys.prefix != sys.base_prefix:
    print(sysconfig.get_paths()["platlib"])
elif site.ENABLE_USER_SITE:
    print(site.getusersitepackages())
PY
)"
  [[ -n $target ]] || {
    echo "$me: $python does not read a user site-packages; choose a place with --target DIR" >&2
    exit 1
  }
fi
mkdir -p "$target"
target="$(cd "$target" && pwd)"

build="build/python"
# The command line's release build with the package, for exactly this interpreter.
cmake --preset cli -B "$build" -DGGUFCHECK_PYTHON=ON -DPython3_EXECUTABLE="$python" \
  -DGGUFCHECK_PYTHON_INSTALL_DIR="$target" >/dev/null
cmake --build "$build" --target ggufcheck_python
cmake --install "$build" --component python >/dev/null
# Imported from elsewhere, so that the checkout's python/ directory cannot stand in for it.
(cd / && "$python" -c "import ggufcheck; print('$me: ggufcheck', ggufcheck.__version__, 'installed in', ggufcheck.__file__.rsplit('/', 2)[0])") ||
  { echo "$me: installed in $target, but $python cannot import it from there" >&2; exit 1; }
