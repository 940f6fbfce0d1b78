#!/usr/bin/env bash
# Installs what hwxdp needs on a Debian machine, skipping what is already there. Rust (cargo 1.85 or newer) must be
# installed already; everything else comes from Debian's packages.
set -euo pipefail

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# Tool or package -> Debian package.
have_cmd clang || need+=(clang)
have_cmd llvm-objdump || need+=(llvm)
have_cmd clang-19 || need+=(clang-19)
have_cmd llvm-mc-19 || need+=(llvm-19)
have_cmd bpftool || need+=(bpftool)
have_cmd ip || need+=(iproute2)
have_cmd pkg-config || need+=(pkg-config)
# Under -target bpf, clang defines neither __x86_64__ nor __i386__, so glibc's headers (reached through linux/if.h)
# ask for the 32-bit stubs.
if [ "$(uname -m)" = x86_64 ] && [ ! -e /usr/include/x86_64-linux-gnu/gnu/stubs-32.h ]; then
  need+=(libc6-dev-i386)
fi
# ccache: each Verilator model compiles the same run-time library and testbench again (crates/rtlsim/src/build.rs).
for pkg in libbpf-dev libelf-dev zlib1g-dev linux-libc-dev verilator yosys g++ make ccache; do
  have_pkg "$pkg" || need+=("$pkg")
done

if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

if ! have_cmd cargo; then
  echo "cargo is missing: install Rust 1.85 or newer (https://rustup.rs) and run this again" >&2
  exit 1
fi
