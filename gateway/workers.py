"""`semcache serve --workers N`: N uvicorn worker processes on one port, each with its own listening socket.

uvicorn's own multi-process mode shares one listening socket, and one worker
then tends to accept a whole burst of connections (asyncio accepts up to the
backlog per wake-up): with keep-alive clients, one worker served every request
of the load bench while the other idled. Here each worker gets its own socket,
bound to the same address with SO_REUSEPORT, so the kernel spreads new
connections over the workers. The parent holds the sockets, so connections
that arrive while a worker restarts wait in its queue instead of being refused.

Each worker builds its app from the environment (`gateway.app:app_from_env`).
A worker that dies is restarted; one that fails during start-up stops them all.
"""
from __future__ import annotations

import logging
import multiprocessing
import signal
import socket
import sys
import time

log = logging.getLogger("semcache.gateway")
STARTUP_FAILURE = 3            # uvicorn's exit status when the app's start-up fails
STOP_TIMEOUT_S = 30.0


def reuse_port_supported() -> bool:
    return hasattr(socket, "SO_REUSEPORT") and sys.platform.startswith("linux")


def bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


def _check_free(host: str, port: int) -> None:
    """Fail like a plain bind would when the address is taken: SO_REUSEPORT alone would let a second gateway
    (of the same user) share the port with the first one instead of failing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def _worker(sock: socket.socket, log_level: str) -> None:
    """One worker process: uvicorn on its own socket, the app from the environment."""
    if sys.platform.startswith("linux"):          # SIGTERM when the parent dies, even by SIGKILL
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)
    import uvicorn
    config = uvicorn.Config("gateway.app:app_from_env", factory=True, log_config=None, access_log=False,
                            log_level=log_level)
    uvicorn.Server(config).run(sockets=[sock])


def serve(host: str, port: int, workers: int, log_level: str) -> int:
    """Run the workers until SIGINT or SIGTERM; returns the exit status."""
    _check_free(host, port)
    sockets = [bind(host, port) for _ in range(workers)]
    context = multiprocessing.get_context("spawn")
    stopping = []

    def on_signal(signum, _frame):
        stopping.append(signum)
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def start(i: int):
        process = context.Process(target=_worker, args=(sockets[i], log_level), name=f"semcache-worker-{i}",
                                  daemon=False)
        process.start()
        return process, time.monotonic()

    procs = [start(i) for i in range(workers)]
    status = 0
    log.info("workers started", extra={"fields": {"workers": workers, "pids": [p.pid for p, _ in procs],
                                                  "address": f"{host}:{port}"}})
    try:
        while not stopping:
            time.sleep(0.5)
            for i, (process, started) in enumerate(procs):
                if process.is_alive() or stopping:
                    continue
                if process.exitcode == STARTUP_FAILURE:
                    log.error("a worker failed to start; stopping", extra={"fields": {"pid": process.pid}})
                    stopping.append(None)
                    status = 1
                    break
                log.warning("worker died; restarting", extra={"fields": {"pid": process.pid,
                                                                         "exitcode": process.exitcode}})
                procs[i] = start(i)
    finally:
        for process, _ in procs:
            if process.is_alive():
                process.terminate()                 # uvicorn shuts down gracefully on SIGTERM
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process, _ in procs:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        for sock in sockets:
            sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status
