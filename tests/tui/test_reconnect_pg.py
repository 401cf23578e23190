"""A real PostgreSQL outage: ``qctl top`` talks to the server through a TCP proxy that
the test cuts and restores. The dashboard shows ``disconnected`` and recovers by itself."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

import pytest

from qctl.tui.app import QctlTop
from qctl.tui.live import DISCONNECTED
from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.types import EnqueueParams
from tests.conftest import PG_DSN
from tests.tui.helpers import SIZE, row_keys, screen_text, until

pytestmark = [pytest.mark.timeout(180), pytest.mark.pg]


class Proxy:
    """Forwards 127.0.0.1:<port> to the PostgreSQL server until ``cut()``; while
    ``frozen`` is set it passes no bytes either way, as a paused server (or a network
    gone silent) does while the kernels still hold the connections."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.frozen = threading.Event()
        self.socks: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                while self.frozen.is_set() and self.up:
                    time.sleep(0.05)
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.up = False
        with self.lock:
            socks, self.socks = self.socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


@pytest.fixture
def proxied(pg_schema: str) -> Any:
    from urllib.parse import urlsplit

    u = urlsplit(PG_DSN)
    proxy = Proxy(u.hostname or "127.0.0.1", u.port or 5432)
    dsn = u._replace(netloc=f"{u.username}@127.0.0.1:{proxy.port}").geturl()
    store = PostgresStore(dsn, Config(schema=pg_schema))
    store.migrate()
    yield proxy, store
    proxy.close()
    store.close()


async def test_outage_shows_disconnected_then_recovers(proxied: Any) -> None:
    proxy, store = proxied
    store.enqueue(EnqueueParams(kind="before_outage"))
    app = QctlTop(store, location="proxy", poll_interval=0.5, min_interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "queue\x1fbefore_outage" in row_keys(app, "#queues"))
        proxy.cut()
        await pilot.press("r")
        await until(pilot, lambda: app.mode == DISCONNECTED, timeout=40)
        assert "disconnected" in screen_text(app)
        await pilot.press("2")  # still responsive while the database is away
        await until(pilot, lambda: "jobs-table" in str(app.screen.focused))
        await pilot.press("1")
        proxy.restore()
        await until(pilot, lambda: app.mode != DISCONNECTED, timeout=60)
        store.enqueue(EnqueueParams(kind="after_outage"))
        await until(pilot, lambda: "queue\x1fafter_outage" in row_keys(app, "#queues"), 30)
        assert "disconnected" not in screen_text(app)
