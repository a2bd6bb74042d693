"""Client-side ``tls`` settings of exporters (upstream's ``configtls.ClientConfig``)
and the ``ssl.SSLContext`` they make.

Kept here until the shared ``sluice.collector.configtls`` (server and client
settings) lands; the keys and meaning are upstream's.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import dataclass

from sluice.collector.component import Problem
from sluice.collector.confmap.decode import Duration

_TLS_VERSIONS = {
    "1.0": ssl.TLSVersion.TLSv1,
    "1.1": ssl.TLSVersion.TLSv1_1,
    "1.2": ssl.TLSVersion.TLSv1_2,
    "1.3": ssl.TLSVersion.TLSv1_3,
}


_NO_RELOAD = Duration(0.0)


@dataclass
class ClientTLSSettings:
    """``tls`` of a client. `insecure` means plaintext for gRPC (with no
    `ca_file`); HTTP uses TLS exactly when the URL is ``https``."""

    insecure: bool = False
    insecure_skip_verify: bool = False
    server_name_override: str = ""
    ca_file: str = ""
    ca_pem: str = ""
    cert_file: str = ""
    cert_pem: str = ""
    key_file: str = ""
    key_pem: str = ""
    include_system_ca_certs_pool: bool = False
    min_version: str = ""
    max_version: str = ""
    cipher_suites: list[str] | None = None
    reload_interval: Duration = _NO_RELOAD

    def problems(self) -> Iterator[Problem]:
        for key in ("min_version", "max_version"):
            version = getattr(self, key)
            if version and version not in _TLS_VERSIONS:
                yield f"tls::{key}", f'invalid TLS version "{version}"'
        if bool(self.cert_file or self.cert_pem) != bool(self.key_file or self.key_pem):
            yield "tls", "load TLS config: for auth via TLS, provide both certificate and key"
        if self.cert_pem or self.key_pem:
            yield (
                "tls",
                "cert_pem and key_pem are not supported by Sluice; use cert_file and key_file",
            )
        if self.cipher_suites:
            yield "tls::cipher_suites", "not supported by Sluice (Python's ssl picks the suites)"

    @property
    def has_ca(self) -> bool:
        return bool(self.ca_file or self.ca_pem)

    def context(self) -> ssl.SSLContext:
        """A client context verifying the server against `ca_file` (or the
        system roots), presenting `cert_file` when set. Raises OSError or
        ssl.SSLError naming the file that does not load."""
        context = ssl.create_default_context(
            cafile=self.ca_file or None, cadata=self.ca_pem or None
        )
        if self.has_ca and self.include_system_ca_certs_pool:
            context.load_default_certs()
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file or None)
        if self.min_version:
            context.minimum_version = _TLS_VERSIONS[self.min_version]
        if self.max_version:
            context.maximum_version = _TLS_VERSIONS[self.max_version]
        if self.insecure_skip_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context
