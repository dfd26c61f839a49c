#!/usr/bin/env bash
# Builds the Debian package of ggufcheck and checks what it holds; prints the .deb's path last
# (the build's output goes to stderr, so `deb=$(scripts/package.sh)` works).
#   scripts/package.sh
# The package preset (build/package/): the cli build, installed under /usr, then
# `cpack -G DEB`. Needs what `scripts/setup.sh demo` installs, and dpkg-dev (dpkg-shlibdeps
# computes the package's Depends). Install the result with `sudo apt install ./ggufcheck_*.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() {
  echo "package.sh: $*" >&2
  exit 1
}
command -v dpkg-shlibdeps >/dev/null 2>&1 ||
  fail "dpkg-shlibdeps is missing (Debian: apt-get install dpkg-dev); it computes the Depends"

cmake --preset package >&2
cmake --build --preset package >&2
cpack_log=$(cd build/package && cpack -G DEB) || fail "cpack failed: $cpack_log"
echo "$cpack_log" >&2
deb=$(sed -n 's/^CPack: - package: \(.*\) generated\.$/\1/p' <<<"$cpack_log")
[[ -f $deb ]] || fail "cpack named no package"

# What the package must hold: the command, its man page and completions, the library, its
# headers and CMake package files, the licence; and Depends, computed by dpkg-shlibdeps.
cache=build/package/CMakeCache.txt
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
            usr/share/doc/ggufcheck/copyright; do
  grep -qx "\./$path" <<<"$contents" || fail "$deb lacks /$path"
done
[[ $(dpkg-deb -f "$deb" Package) == ggufcheck ]] || fail "$deb: the package is not named ggufcheck"
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "$deb: Version is not $version"
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *libc6* ]] || fail "$deb: Depends ('$depends') lacks libc6: was it computed?"
# The packaged command runs and is this version; the packaged page is gzip.
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
[[ $("$unpacked/usr/bin/ggufcheck" --version) == "ggufcheck $version" ]] ||
  fail "$deb: usr/bin/ggufcheck --version does not print 'ggufcheck $version'"
gzip -t "$unpacked/usr/share/man/man1/ggufcheck.1.gz" || fail "$deb: the man page is not gzip"
echo "package.sh: $deb holds $(wc -l <<<"$contents") paths; Depends: $depends" >&2
echo "$deb"
