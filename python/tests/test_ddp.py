"""DistributedDataParallel over two processes (gloo, 127.0.0.1) with convgrad layers: after each
step, the gradients equal those of one process on the combined batch (ddp_worker.py, tolerance
stated there). The processes are killed after 120 s, so the test can never hang CI."""
import os
import socket
import subprocess
import sys

import pytest

TIMEOUT_S = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_two_processes_match_single_process():
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="2",
               OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    worker = os.path.join(os.path.dirname(__file__), "ddp_worker.py")
    procs = [subprocess.Popen([sys.executable, worker], env=dict(env, RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    outputs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=TIMEOUT_S)
            outputs.append(out)
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        pytest.fail(f"DDP workers did not finish within {TIMEOUT_S} s")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for r, (p, out) in enumerate(zip(procs, outputs)):
        print(out)
        assert p.returncode == 0, f"rank {r} failed:\n{out}"
        assert "largest relative gradient difference" in out
