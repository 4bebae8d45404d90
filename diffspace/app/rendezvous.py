"""Every process of a distributed job checks in with process 0 before JAX's runtime is joined.

JAX's own join (``RegisterTask`` with the coordination service) waits for every process and, when one never
comes, terminates the whole process from C++ (exit 134, a stack trace blaming "another task died"), which no
Python code can catch. So the processes first meet over a plain TCP connection at the coordinator's own
address: process 0 listens there and reports who is missing while it waits (``waiting for 1 of 2 processes``);
the others connect (retrying while process 0 is not up yet) and send their id. When all ``N`` have checked in,
process 0 answers ``go`` to each, closes the port, and every process joins JAX's runtime, whose service then
binds the same port. When the wait exceeds ``--coordinator-timeout``, every waiting process stops with one
line (:class:`~diffspace.core.status.ConfigError`: exit 2): process 0 names the ids that never came, the
others say that process 0 did not answer or gave up.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable

from ..core.status import ConfigError

GO, GIVE_UP = b"go\n", b"give up\n"
POLL_S = 0.5  # accept / connect retry period
REPORT_EVERY_S = 10.0  # progress lines while waiting


def _address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--coordinator: expected HOST:PORT, got {address!r}")
    return host.strip("[]"), int(port)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def gather(address: str, count: int, rank: int, timeout_s: float, say: Callable[[str], None] = _stderr) -> None:
    """Return once all ``count`` processes have checked in; raise :class:`ConfigError` after ``timeout_s``."""
    if count == 1:
        return
    host, port = _address(address)
    deadline = time.monotonic() + timeout_s
    if rank == 0:
        _lead(port, count, deadline, timeout_s, address, say)
    else:
        _follow(host, port, rank, deadline, timeout_s, address)


def _lead(port: int, count: int, deadline: float, timeout_s: float, address: str, say) -> None:
    peers: dict[int, socket.socket] = {}
    with socket.create_server(("", port), family=socket.AF_INET, reuse_port=False) as server:
        server.settimeout(POLL_S)
        reported = time.monotonic()
        while len(peers) < count - 1:
            now = time.monotonic()
            if now >= deadline:
                missing = sorted(set(range(1, count)) - set(peers))
                _send_all(peers, GIVE_UP)
                raise ConfigError(f"--coordinator {address}: {len(missing)} of {count} processes did not join "
                                  f"within {timeout_s:g} s (process id {', '.join(map(str, missing))}); start "
                                  "every process or raise --coordinator-timeout")
            if now - reported >= REPORT_EVERY_S:
                say(f"waiting for {count - 1 - len(peers)} of {count} processes to join at {address} "
                    f"({now - deadline + timeout_s:.0f} s of {timeout_s:g} s)")
                reported = now
            try:
                connection, _ = server.accept()
            except socket.timeout:
                continue
            rank = _read_rank(connection, count)
            if rank is None or rank in peers:
                connection.close()
                continue
            peers[rank] = connection
        _send_all(peers, GO)
        for connection in peers.values():  # the peer closes first: no TIME_WAIT left on the port
            connection.settimeout(5.0)
            try:
                connection.recv(16)
            except OSError:
                pass


def _read_rank(connection: socket.socket, count: int) -> int | None:
    connection.settimeout(5.0)
    try:
        text = connection.recv(64).decode(errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and 0 < int(text) < count else None


def _send_all(peers: dict[int, socket.socket], message: bytes) -> None:
    for connection in peers.values():
        try:
            connection.sendall(message)
        except OSError:
            pass


def _follow(host: str, port: int, rank: int, deadline: float, timeout_s: float, address: str) -> None:
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ConfigError(f"--coordinator {address}: process 0 did not answer within {timeout_s:g} s; "
                              "start it (--process-id 0) or raise --coordinator-timeout")
        try:
            connection = socket.create_connection((host, port), timeout=min(POLL_S, remaining))
            break
        except OSError:
            time.sleep(min(POLL_S, max(remaining, 0.0)))
    with connection:
        connection.sendall(f"{rank}\n".encode())
        connection.settimeout(max(deadline - time.monotonic(), 0.1) + 5.0)  # process 0 decides at the deadline
        try:
            answer = connection.recv(16)
        except OSError:
            answer = b""
    if answer != GO:
        raise ConfigError(f"--coordinator {address}: process 0 gave up waiting for the other processes "
                          f"(--coordinator-timeout {timeout_s:g} s)")
