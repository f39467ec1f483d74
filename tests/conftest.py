"""Settings of the whole suite: how two pytest-xdist workers share two cores."""

from __future__ import annotations

import os

# One TensorFlow thread pool of one thread per worker: two workers with a pool each as wide as the machine
# oversubscribe the two cores (set before any test file imports TensorFlow).
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
