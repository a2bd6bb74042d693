"""The recording upstream of the Edge tests behind TLS, with a fresh
self-signed certificate for localhost and 127.0.0.1."""

from __future__ import annotations

import ssl
from pathlib import Path
from types import TracebackType

from tests.edge.helpers import Upstream
from tests.providers.test_tls import self_signed


class TlsUpstream:
    def __init__(self, folder: Path) -> None:
        self.ca_file, self.key_file = self_signed(folder)
        self.upstream = Upstream()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_file, self.key_file)
        server = self.upstream._server
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.upstream.port}"

    def __enter__(self) -> TlsUpstream:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.upstream.stop()
