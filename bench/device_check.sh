#!/usr/bin/env bash
# GPU check for a lent device machine: install, run the kernel tests compiled for real
# (no interpreter), then the kernel bench and a short engine run on CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-gpu
. .venv-gpu/bin/activate
pip install -q -U pip
# on the GPU machine torch comes with its CUDA build (and its own triton)
pip install -q torch triton
pip install -q -e ".[dev]"
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name())"
export TRITON_INTERPRET=0
# the tests build tensors on the CPU; run them against CUDA copies via SEMCACHE_TEST_DEVICE
SEMCACHE_TEST_DEVICE=cuda python -m pytest -q tests/unit/test_triton_kernels.py -k "not end_to_end" 2>&1 | tail -5
python bench/kernels.py
