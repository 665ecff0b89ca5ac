#!/usr/bin/env bash
# Provision NVRTC for the CUDA backend's kernel-compilation test (tests/dem_cuda.rs), on a
# machine with no CUDA toolkit: the pinned PyPI wheel nvidia-cuda-nvrtc-cu12 is installed
# once into a per-user cache. Idempotent and quiet. Source it (`. .ci/nvrtc.sh`) to get
# LOAM_NVRTC_DIR exported; run it to just provision and print the folder.
set -euo pipefail
loam_nvrtc_version="12.8.93"
loam_nvrtc_cache="${XDG_CACHE_HOME:-$HOME/.cache}/loam/nvrtc"
loam_nvrtc_lib="$loam_nvrtc_cache/nvidia/cuda_nvrtc/lib"
loam_nvrtc_stamp="$loam_nvrtc_cache/.installed-$loam_nvrtc_version"
if [ ! -f "$loam_nvrtc_stamp" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --upgrade \
        --target "$loam_nvrtc_cache" "nvidia-cuda-nvrtc-cu12==$loam_nvrtc_version"
    touch "$loam_nvrtc_stamp"
fi
if ! ls "$loam_nvrtc_lib"/libnvrtc.so* >/dev/null 2>&1; then
    echo "nvrtc.sh: no libnvrtc.so* in $loam_nvrtc_lib after installing the wheel" >&2
    exit 1
fi
export LOAM_NVRTC_DIR="$loam_nvrtc_lib"
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "$LOAM_NVRTC_DIR"
fi
