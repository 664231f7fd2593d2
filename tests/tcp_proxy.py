"""A TCP proxy on 127.0.0.1 that a test can cut, as a network would: the open connections
break, and new ones are dropped at once, until it is mended.

    async with tcp_proxy(server.url) as proxy:
        ... a client of proxy.url ...
        proxy.cut()
        proxy.mend()
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit


class TcpProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.url = ""
        self.broken = False
        self._open: set[asyncio.StreamWriter] = set()

    def cut(self) -> None:
        self.broken = True
        for writer in list(self._open):
            writer.transport.abort()

    def mend(self) -> None:
        self.broken = False

    async def handle(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        if self.broken:
            client_out.transport.abort()
            return
        server_in, server_out = await asyncio.open_connection(*self.target)
        self._open |= {client_out, server_out}
        try:
            await asyncio.gather(self._pipe(client_in, server_out), self._pipe(server_in, client_out))
        finally:
            self._open -= {client_out, server_out}
            for writer in (client_out, server_out):
                writer.transport.abort()

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while chunk := await source.read(65536):
                sink.write(chunk)
                await sink.drain()
        # One side is done (or broken): so is the other.
        sink.transport.abort()


@contextlib.asynccontextmanager
async def tcp_proxy(url: str) -> AsyncIterator[TcpProxy]:
    """A proxy to the server at `url` (http://host:port), on a free port; its own address is `proxy.url`."""
    target = urlsplit(url)
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 80)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    proxy.url = f"http://127.0.0.1:{port}"
    try:
        yield proxy
    finally:
        proxy.cut()
        server.close()
        await server.wait_closed()
