#!/usr/bin/env bash
# A manual test of the Debian package on a bare Debian 12 (not run in CI): installs the package
# with apt into a minimal chroot, so that apt must pull every library it depends on, then runs
# the installed command on a valid and a broken sample and lists what was installed.
#   scripts/test-deb-chroot.sh CHROOT_DIR DEB [LOG]
# Needs root, debootstrap and the network (a Debian mirror: DEBIAN_MIRROR, default
# http://deb.debian.org/debian). CHROOT_DIR is made with `debootstrap --variant=minbase bookworm`
# when it holds no system yet, and reused otherwise (a ggufcheck installed by an earlier run is
# purged first, with the libraries apt pulled for it). Every command and its output go to LOG
# (default CHROOT_DIR.log) and to stdout; the exit status is 1 when a command's status is not
# the expected one.
set -euo pipefail
if (($# < 2 || $# > 3)); then
  echo "usage: scripts/test-deb-chroot.sh CHROOT_DIR DEB [LOG]" >&2
  exit 3
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
chroot_dir=$(realpath -m "$1")
deb=$2
log=$(realpath -m "${3:-$chroot_dir.log}")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() {
  echo "test-deb-chroot.sh: $*" >&2
  exit 1
}
[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, chroot, mount)"
[[ -f $deb ]] || fail "$deb: no such package (scripts/package.sh builds it)"
[[ $deb == *.deb ]] || fail "$deb is not a .deb"

if [[ ! -x $chroot_dir/usr/bin/apt-get ]]; then
  command -v debootstrap >/dev/null 2>&1 || fail "debootstrap is missing (apt-get install debootstrap)"
  echo "test-deb-chroot.sh: debootstrap --variant=minbase bookworm $chroot_dir $mirror" >&2
  debootstrap --variant=minbase bookworm "$chroot_dir" "$mirror" >&2
fi
# Name resolution for apt; an https mirror also needs the host's certificate bundle (a minbase
# system has no ca-certificates).
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
if [[ $mirror == https://* ]]; then
  mkdir -p "$chroot_dir/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$chroot_dir/etc/ssl/certs/"
fi

work=/root/ggufcheck-test
mkdir -p "$chroot_dir$work"
cp "$deb" "$chroot_dir$work/"
cp "$repo/examples/valid/tiny-llama.gguf" "$repo/examples/broken/three-problems.gguf" \
   "$chroot_dir$work/"
package=./$(basename "$deb")

mount -t proc proc "$chroot_dir/proc"
trap 'umount "$chroot_dir/proc"' EXIT

: >"$log"
failed=0
# step EXPECTED_STATUS COMMAND: runs COMMAND with sh in the chroot, in $work; logs it.
step() {
  local expected=$1 command=$2 output status
  set +e
  output=$(chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
           DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 /bin/sh -c "cd $work && $command" 2>&1)
  status=$?
  set -e
  {
    echo "# chroot $chroot_dir"
    echo "\$ $command"
    [[ -n $output ]] && echo "$output"
    if [[ $status -eq $expected ]]; then
      echo "[exit $status]"
    else
      echo "[exit $status, expected $expected: FAILED]"
    fi
    echo
  } | tee -a "$log"
  [[ $status -eq $expected ]] || failed=1
}

{
  echo "# scripts/test-deb-chroot.sh $chroot_dir $deb"
  echo "# $(sha256sum "$deb" | cut -d' ' -f1)  $(basename "$deb")"
  echo "# chroot: Debian $(cat "$chroot_dir/etc/debian_version") (debootstrap --variant=minbase bookworm $mirror)"
  echo
} | tee -a "$log"
if chroot "$chroot_dir" dpkg-query -W -f='${Status}' ggufcheck 2>/dev/null | grep -q "ok installed"; then
  step 0 "apt-get purge -y -q --autoremove ggufcheck"
fi
step 0 "apt-get update -q"
step 0 "apt-get install -y -q --no-install-recommends $package"
step 0 "ggufcheck --version"
step 0 "ggufcheck tiny-llama.gguf"
step 1 "ggufcheck three-problems.gguf"
step 0 "ggufcheck --format json tiny-llama.gguf | head"
step 0 "ldd /usr/bin/ggufcheck"
step 0 "test -f /usr/share/man/man1/ggufcheck.1.gz && ls -l /usr/share/man/man1/ggufcheck.1.gz"
step 0 "ls -l /usr/share/bash-completion/completions/ggufcheck /usr/share/zsh/vendor-completions/_ggufcheck /usr/share/fish/vendor_completions.d/ggufcheck.fish"
# The bash completion on its own (no bash-completion package in a minimal system).
step 0 "bash -c '. /usr/share/bash-completion/completions/ggufcheck; COMP_WORDS=(ggufcheck check --for); COMP_CWORD=2; _ggufcheck; echo \"\${COMPREPLY[@]}\"'"
# The C interface: the installed library, loaded by name as another language's binding would.
step 0 "ls -l /usr/lib/*/libggufcheck.so*"
# The Python package, when the package holds it: with Debian's python3 (only recommended).
# (The listing is read whole first: grep -q would end the pipe early, and pipefail fail it.)
listing=$(dpkg-deb -c "$deb")
if grep -q '/dist-packages/ggufcheck/__init__.py$' <<<"$listing"; then
  step 0 "apt-get install -y -q --no-install-recommends python3"
  step 0 "python3 -c 'import ggufcheck; print(ggufcheck.validate(\"tiny-llama.gguf\").ok, ggufcheck.version_info)'"
  step 1 "python3 -m ggufcheck --quiet three-problems.gguf"
  step 0 "python3 -c 'import ctypes; lib = ctypes.CDLL(\"libggufcheck.so.0\"); lib.ggufcheck_version.restype = ctypes.c_char_p; print(lib.ggufcheck_version().decode())'"
fi
step 0 "dpkg -L ggufcheck"
if ((failed)); then
  echo "test-deb-chroot.sh: a command's exit status was not the expected one; see $log" >&2
  exit 1
fi
echo "test-deb-chroot.sh: every command as expected; the log is $log" >&2
