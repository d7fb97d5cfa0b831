#!/usr/bin/env bash
# Installs NVIDIA's NVRTC runtime compiler (no GPU, no CUDA toolkit needed) so that the
# tessera-cuda tests can compile the device library and generated kernels for sm_90.
#
# Usage (CI):   eval "$(.ci/install-nvrtc.sh)"      # sets LD_LIBRARY_PATH for this shell
#          or:  .ci/install-nvrtc.sh && source "${TESSERA_NVRTC_HOME:-$HOME/.cache/tessera/nvrtc-13.0}/env.sh"
#
# The wheel is installed with `pip --target` into a private directory (default
# ~/.cache/tessera/nvrtc-13.0, override with TESSERA_NVRTC_HOME): this works with only
# Python 3 and pip, needs no virtualenv, and does not trip PEP 668 "externally managed"
# system Pythons. NVRTC 13.0 matches the oldest driver we support (CUDA 13.0, driver 580):
# a newer NVRTC would still produce loadable CUBIN, but 13.0 keeps CI identical to the device.
#
# Progress goes to stderr; stdout carries only the `export` line, so `eval` is safe.
set -euo pipefail

version="13.0.*"
home="${TESSERA_NVRTC_HOME:-$HOME/.cache/tessera/nvrtc-13.0}"
mkdir -p "$home"

find_libdir() {
  local lib
  lib="$(find "$home" -name 'libnvrtc.so.13' -print -quit 2>/dev/null || true)"
  if [[ -n "$lib" ]]; then dirname "$lib"; fi
}

libdir="$(find_libdir)"
if [[ -z "$libdir" ]]; then
  echo "install-nvrtc: installing nvidia-cuda-nvrtc==$version into $home" >&2
  python3 -m pip install -q --disable-pip-version-check --no-deps --upgrade \
    --target "$home/site" "nvidia-cuda-nvrtc==$version" >&2
  libdir="$(find_libdir)"
fi
if [[ -z "$libdir" ]]; then
  echo "install-nvrtc: libnvrtc.so.13 not found under $home after install" >&2
  exit 1
fi

# cudarc tries the unversioned name first in every directory of the search path.
ln -sf libnvrtc.so.13 "$libdir/libnvrtc.so"

# NVRTC dlopens its builtins library (libnvrtc-builtins.so.13.0) from its own directory.
if ! compgen -G "$libdir/libnvrtc-builtins.so*" >/dev/null; then
  echo "install-nvrtc: warning: libnvrtc-builtins not found in $libdir" >&2
fi

export_line="export LD_LIBRARY_PATH=\"$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
echo "$export_line" >"$home/env.sh"
echo "install-nvrtc: NVRTC in $libdir (source $home/env.sh)" >&2
echo "$export_line"
