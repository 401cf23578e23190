"""``qctl metrics``: the database's figures as Prometheus/OpenMetrics, from the reads the
dashboard makes, through the collector the system's record names (``System.metrics``).
Read-only whatever the context says. prometheus_client is imported only when the
command runs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from qctl.cli.common import cli
from qctl_kit.errors import InvalidInput


class _Collector:
    """Calls the system's collector on each scrape, one scrape at a time (the handle is
    one connection; the HTTP server answers from several threads)."""

    def __init__(self, collect: Any, handle: Any) -> None:
        self._collect, self._handle, self._lock = collect, handle, threading.Lock()

    def collect(self) -> Any:
        with self._lock:
            return list(self._collect(self._handle))


def _listen_address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidInput(f"--listen: expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def metrics(
    ctx: typer.Context,
    listen: Annotated[
        str,
        typer.Option(
            "--listen",
            metavar="HOST:PORT",
            help="Serve /metrics over HTTP until Ctrl-C (each scrape reads the database).",
        ),
    ] = "",
    textfile: Annotated[
        Path | None,
        typer.Option(
            "--textfile",
            help="Write the figures once to this file, atomically (node-exporter's"
            " textfile collector), instead of printing them.",
        ),
    ] = None,
) -> None:
    """Print the database's figures once as OpenMetrics text, write them to a textfile,
    or serve them over HTTP: depths per kind or queue and state, oldest pending age,
    throughput, failure counts on every system (qctl_<system>_failed_jobs: azync's dead,
    hopper's discarded, dispatch's failed; qctl_dbos_failed_workflows) with dispatch's
    DLQ entries waiting, and what is paused (azync's paused jobs, hopper's paused
    queues). Every figure is a cheap read: where no index holds a failed state (hopper's
    discarded, dispatch's DLQ) a bounded number of rows is read (each gauge's help says
    how many) and bounded=true marks a lower bound. Always read-only."""
    from qctl import systems

    c = cli(ctx)
    system = c.system()
    if not system.metrics:
        raise InvalidInput(f"{system.label} databases have no metrics")
    if listen and textfile:
        raise InvalidInput("--listen and --textfile: give one of them")
    address = _listen_address(listen) if listen else None
    c.read_only = True
    handle = c.handle()

    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(systems.load(system.metrics), handle))
    if address:
        _serve(registry, *address)
    elif textfile:
        from prometheus_client import write_to_textfile

        write_to_textfile(str(textfile), registry)
    else:
        from prometheus_client.openmetrics.exposition import generate_latest

        typer.echo(generate_latest(registry).decode(), nl=False)


def _serve(registry: Any, host: str, port: int) -> None:
    from prometheus_client import start_http_server

    try:
        server, thread = start_http_server(port, host, registry)
    except OSError as exc:
        raise InvalidInput(f"--listen {host}:{port}: {exc.strerror or exc}") from None
    typer.echo(f"serving http://{host}:{port}/metrics (Ctrl-C stops)", err=True)
    try:
        thread.join()
    except KeyboardInterrupt:
        server.shutdown()
