#!/usr/bin/env bash
# Builds the Debian package of ggufcheck and checks what it holds; prints the .deb's path last
# (the build's output goes to stderr, so `deb=$(scripts/package.sh)` works).
#   scripts/package.sh [BUILD_DIR]
# The package preset (build/package/): the cli build, installed under /usr, then
# `cpack -G DEB`. Needs what `scripts/setup.sh demo` installs, dpkg-dev (dpkg-shlibdeps
# computes the package's Depends) and file (CPack runs it to find the binaries); with pybind11 and python3-dev (`scripts/setup.sh python`) the
# package holds the Python package too. Install the result with `sudo apt install ./ggufcheck_*.deb`.
# BUILD_DIR: package a tree already built with CMAKE_INSTALL_PREFIX=/usr instead (CI packages its
# release build rather than building a second time).
set -euo pipefail
cd "$(dirname "$0")/.."
fail() {
  echo "package.sh: $*" >&2
  exit 1
}
command -v dpkg-shlibdeps >/dev/null 2>&1 ||
  fail "dpkg-shlibdeps is missing (Debian: apt-get install dpkg-dev); it computes the Depends"
command -v file >/dev/null 2>&1 ||
  fail "file is missing (Debian: apt-get install file); CPack runs it to find the binaries"

build=build/package
if (($#)); then
  build=$1
  [[ -f $build/CMakeCache.txt ]] || fail "$build is not a configured build tree"
  grep -qx 'CMAKE_INSTALL_PREFIX:PATH=/usr' "$build/CMakeCache.txt" ||
    fail "$build does not install under /usr (configure it with -DCMAKE_INSTALL_PREFIX=/usr)"
else
  cmake --preset package >&2
  cmake --build --preset package >&2
fi
cpack_log=$(cd "$build" && cpack -G DEB) || fail "cpack failed: $cpack_log"
echo "$cpack_log" >&2
deb=$(sed -n 's/^CPack: - package: \(.*\) generated\.$/\1/p' <<<"$cpack_log")
[[ -f $deb ]] || fail "cpack named no package"

# What the package must hold: the command, its man page and completions, the library, its
# headers and CMake package files, the licence; and Depends, computed by dpkg-shlibdeps.
cache=$build/CMakeCache.txt
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$cache")
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$cache")
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for path in usr/bin/ggufcheck \
            usr/share/man/man1/ggufcheck.1.gz \
            usr/share/bash-completion/completions/ggufcheck \
            usr/share/zsh/vendor-completions/_ggufcheck \
            usr/share/fish/vendor_completions.d/ggufcheck.fish \
            usr/include/ggufcheck/validate.hpp \
            "usr/$libdir/libggufcheck.a" \
            "usr/$libdir/cmake/ggufcheck/ggufcheckConfig.cmake" \
            "usr/$libdir/cmake/ggufcheck/ggufcheckConfigVersion.cmake" \
            "usr/$libdir/cmake/ggufcheck/ggufcheckTargets.cmake" \
            usr/include/ggufcheck.h \
            "usr/$libdir/libggufcheck.so.0" \
            "usr/$libdir/libggufcheck.so" \
            usr/share/doc/ggufcheck/copyright; do
  grep -qx "\./$path" <<<"$contents" || fail "$deb lacks /$path"
done
# The Python package, when the build made it (pybind11 was there).
if grep -qx 'GGUFCHECK_PYTHON:BOOL=ON' "$cache"; then
  python_dir=$(sed -n 's/^GGUFCHECK_PYTHON_INSTALL_DIR:[A-Z]*=//p' "$cache")
  for path in "usr/$python_dir/ggufcheck/__init__.py" "usr/$python_dir/ggufcheck/__main__.py" \
              "usr/$python_dir/ggufcheck/py.typed"; do
    grep -qx "\./$path" <<<"$contents" || fail "$deb lacks /$path"
  done
  grep -q "^\./usr/$python_dir/ggufcheck/_ggufcheck\..*\.so$" <<<"$contents" ||
    fail "$deb lacks the Python extension in /usr/$python_dir/ggufcheck/"
fi
# The shared library's shlibs file, so that packages linking it get their Depends.
shlibs=$(dpkg-deb -I "$deb" shlibs 2>/dev/null || true)
grep -q '^libggufcheck 0 ggufcheck' <<<"$shlibs" ||
  fail "$deb: no shlibs entry for libggufcheck.so.0"
[[ $(dpkg-deb -f "$deb" Package) == ggufcheck ]] || fail "$deb: the package is not named ggufcheck"
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "$deb: Version is not $version"
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *libc6* ]] || fail "$deb: Depends ('$depends') lacks libc6: was it computed?"
# libcurl is loaded at run time (dpkg-shlibdeps cannot see it): CPack's Depends must name it.
if grep -q '^GGUFCHECK_REMOTE:BOOL=ON' "$build/CMakeCache.txt"; then
  [[ $depends == *libcurl4* ]] || fail "$deb: Depends ('$depends') lacks libcurl4, which reads URLs"
fi
# The packaged command runs and is this version; the packaged page is gzip.
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
[[ $("$unpacked/usr/bin/ggufcheck" --version | head -n 1) == "ggufcheck $version (git "* ]] ||
  fail "$deb: usr/bin/ggufcheck --version does not print 'ggufcheck $version (git ...)'"
gzip -t "$unpacked/usr/share/man/man1/ggufcheck.1.gz" || fail "$deb: the man page is not gzip"
echo "package.sh: $deb holds $(wc -l <<<"$contents") paths; Depends: $depends" >&2
echo "$deb"
