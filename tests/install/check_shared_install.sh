#!/usr/bin/env bash
# Builds libconvgrad as a shared library (the library, the CLI, the example and the Python
# module) in BUILD_DIR and runs check_install.sh --shared on it. The example and the Python
# module link the shared library, so they prove that the public API alone is enough for them.
#   usage: check_shared_install.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$1
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DCONVGRAD_BUILD_TESTS=OFF \
  -DCONVGRAD_BUILD_BENCH=OFF -DCONVGRAD_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
"$build/examples/dcgan_backward" >/dev/null
if [[ -d "$build/python/convgrad" ]]; then
  # An extension module's undefined symbols only show at import: import it and run one op.
  PYTHONPATH="$build/python" /usr/bin/python3 - <<'PY'
import numpy as np
import convgrad
x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5) % 7 - 3
dy = np.arange(2 * 4 * 3 * 3, dtype=np.float32).reshape(2, 4, 3, 3) % 5 - 2
dw = convgrad.convolution_backward_weights(x, dy, weights_shape=[4, 3, 3, 3], strides=[1, 1],
                                           pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1],
                                           data_format="NCX", weights_format="OIX")
want = np.zeros((4, 3, 3, 3))
for ky in range(3):
    for kx in range(3):
        want[:, :, ky, kx] = np.einsum("nchw,nohw->oc", x[:, :, ky:ky + 3, kx:kx + 3], dy)
assert np.array_equal(np.asarray(dw), want.astype(np.float32)), "python module on the shared library: wrong dW"
print("python module on the shared library: import and one op, exact; version", convgrad.__version__)
PY
fi
"$here/check_install.sh" "$build" --shared
