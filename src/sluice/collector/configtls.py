"""TLS settings shared by receivers (server side) and exporters (client side),
with upstream ``configtls``'s keys, defaults and messages.

:class:`TLSServerConfig` and :class:`TLSClientConfig` decode a ``tls:``
section and build an ``ssl.SSLContext`` (for the HTTP layer) or hand out the
PEM bytes gRPC's credentials take. Problems found without touching files are
reported by ``validate()``; files that do not load raise :class:`TLSError` when
the context is built (at component start, as upstream).
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sluice.collector.component import Problem
from sluice.collector.confmap.decode import Duration

NO_TIME = Duration(0)
"""A zero duration: the setting is off, or left to the default."""
VERSIONS = {
    "1.0": ssl.TLSVersion.TLSv1,
    "1.1": ssl.TLSVersion.TLSv1_1,
    "1.2": ssl.TLSVersion.TLSv1_2,
    "1.3": ssl.TLSVersion.TLSv1_3,
}
DEFAULT_MIN_VERSION = "1.2"

CIPHER_SUITES = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    # TLS 1.3 suites are accepted and, as in Go, not configurable.
    "TLS_AES_128_GCM_SHA256": "",
    "TLS_AES_256_GCM_SHA384": "",
    "TLS_CHACHA20_POLY1305_SHA256": "",
}
"""The suite names upstream accepts (Go's ``tls.CipherSuites()``), as OpenSSL names."""


_CERT_AND_KEY = "failed to load TLS config: failed to load TLS cert and key"


class TLSError(ValueError):
    """A certificate, key or CA that does not load, in upstream's words."""


@dataclass
class TLSConfig:
    """Settings both sides share (upstream ``configtls.Config``)."""

    ca_file: str = ""
    ca_pem: str = ""
    include_system_ca_certs_pool: bool = False
    cert_file: str = ""
    cert_pem: str = ""
    key_file: str = ""
    key_pem: str = ""
    min_version: str = ""
    max_version: str = ""
    cipher_suites: list[str] = field(default_factory=list)
    reload_interval: Duration = NO_TIME
    """How often the certificate and key are read again (0: never)."""

    def validate(self) -> Iterator[Problem]:
        """Problems as (key below ``tls``, message)."""
        if self.ca_file and self.ca_pem:
            yield "", "provide either a CA file or the PEM-encoded string, but not both"
        if self.cert_file and self.cert_pem:
            yield "", "provide either certificate file or PEM, but not both"
        if self.key_file and self.key_pem:
            yield "", "provide either key file or PEM, but not both"
        if bool(self.cert_file or self.cert_pem) != bool(self.key_file or self.key_pem):
            yield (
                "",
                "TLS configuration must include both certificate and key "
                "(CertFile/CertPem and KeyFile/KeyPem)",
            )
        for key in ("min_version", "max_version"):
            value = getattr(self, key)
            if value and value not in VERSIONS:
                yield key, f'invalid TLS {key}: unsupported TLS version: "{value}"'
        if (
            self.min_version in VERSIONS
            and self.max_version in VERSIONS
            and VERSIONS[self.max_version] < VERSIONS[self.min_version]
        ):
            yield "", "invalid TLS configuration: min_version cannot be greater than max_version"
        for suite in self.cipher_suites:
            if suite not in CIPHER_SUITES:
                yield "cipher_suites", f'invalid TLS cipher suite: "{suite}"'
        if self.reload_interval < 0:
            yield "reload_interval", "must not be negative"

    @property
    def has_certificate(self) -> bool:
        return bool(self.cert_file or self.cert_pem or self.key_file or self.key_pem)

    @property
    def has_ca(self) -> bool:
        return bool(self.ca_file or self.ca_pem)

    def certificate_pem(self) -> tuple[bytes, bytes]:
        """(certificate chain, private key) as PEM; raises :class:`TLSError`."""
        has_cert = bool(self.cert_file or self.cert_pem)
        has_key = bool(self.key_file or self.key_pem)
        if has_cert != has_key:
            raise TLSError("for auth via TLS, provide both certificate and key, or neither")
        if self.cert_file and self.cert_pem:
            raise TLSError(
                "for auth via TLS, provide either a certificate or the PEM-encoded string, but not both"
            )
        if self.key_file and self.key_pem:
            raise TLSError(
                "for auth via TLS, provide either a key or the PEM-encoded string, but not both"
            )
        return (
            _read(self.cert_file, _CERT_AND_KEY) or self.cert_pem.encode(),
            _read(self.key_file, _CERT_AND_KEY) or self.key_pem.encode(),
        )

    def ca_pem_bytes(self) -> bytes | None:
        """The CA certificates (``ca_file`` or ``ca_pem``), None when unset."""
        if self.ca_file:
            return _read(
                self.ca_file,
                f"failed to load TLS config: failed to load CA CertPool File: "
                f"failed to load cert {self.ca_file}",
            )
        return self.ca_pem.encode() if self.ca_pem else None

    def load_certificate(self, context: ssl.SSLContext) -> None:
        """(Re)load the certificate and key into `context`: connections made
        afterwards use them. Raises :class:`TLSError`."""
        cert, key = self.certificate_pem()
        # The ssl module loads a chain from files only: key material given
        # inline goes through private temporary files, removed at once.
        with tempfile.TemporaryDirectory(prefix="sluice-tls-") as directory:
            cert_path = Path(directory, "cert.pem")
            key_path = Path(directory, "key.pem")
            for path, data in ((cert_path, cert), (key_path, key)):
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(descriptor, "wb") as out:
                    out.write(data)
            try:
                context.load_cert_chain(cert_path, key_path)
            except (ssl.SSLError, OSError) as problem:
                raise TLSError(
                    f"failed to load TLS config: failed to load TLS cert and key: "
                    f"failed to load TLS cert and key PEMs: {problem}"
                ) from None

    def _configure(self, context: ssl.SSLContext) -> None:
        """Versions, cipher suites, the certificate; raises :class:`TLSError`."""
        context.minimum_version = VERSIONS[self.min_version or DEFAULT_MIN_VERSION]
        if self.max_version:
            context.maximum_version = VERSIONS[self.max_version]
        suites = [CIPHER_SUITES[s] for s in self.cipher_suites if CIPHER_SUITES.get(s)]
        if suites:
            try:
                context.set_ciphers(":".join(suites))
            except ssl.SSLError as problem:
                raise TLSError(f"failed to load TLS config: cipher suites: {problem}") from None
        if self.has_certificate:
            self.load_certificate(context)


def _read(path: str, context: str) -> bytes:
    if not path:
        return b""
    try:
        return Path(path).read_bytes()
    except OSError as problem:
        reason = (problem.strerror or str(problem)).lower()
        raise TLSError(f"{context}: open {path}: {reason}") from None


def _trust(context: ssl.SSLContext, pem: bytes, what: str) -> None:
    try:
        context.load_verify_locations(cadata=pem.decode("ascii", "replace"))
    except (ssl.SSLError, ValueError) as problem:
        raise TLSError(f"failed to load TLS config: failed to parse {what}: {problem}") from None


@dataclass
class TLSServerConfig(TLSConfig):
    """A server's ``tls:`` section (upstream ``configtls.ServerConfig``)."""

    client_ca_file: str = ""
    """CA that client certificates must chain to; set, clients must present one."""
    client_ca_file_reload: bool = False

    def validate(self) -> Iterator[Problem]:
        yield from super().validate()
        if not (self.cert_file or self.cert_pem):
            yield "", "a server needs a certificate: set cert_file and key_file"

    def client_ca_pem(self) -> bytes | None:
        if not self.client_ca_file:
            return None
        return _read(self.client_ca_file, f"failed to load CA {self.client_ca_file}")

    def ssl_context(self) -> ssl.SSLContext:
        """A server context; raises :class:`TLSError`."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._configure(context)
        client_ca = self.client_ca_pem()
        if client_ca is not None:
            _trust(context, client_ca, f"CA {self.client_ca_file}")
            context.verify_mode = ssl.CERT_REQUIRED
        return context


@dataclass
class TLSClientConfig(TLSConfig):
    """A client's ``tls:`` section (upstream ``configtls.ClientConfig``)."""

    insecure: bool = False
    """gRPC: plaintext instead of TLS (HTTP clients follow the URL's scheme)."""
    insecure_skip_verify: bool = False
    """TLS without checking the server's certificate."""
    server_name_override: str = ""

    def ssl_context(self) -> ssl.SSLContext | None:
        """A client context; None when `insecure` is set and no CA is given
        (upstream's rule). Raises :class:`TLSError`."""
        if self.insecure and not self.has_ca:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self._configure(context)
        ca = self.ca_pem_bytes()
        if ca is None or self.include_system_ca_certs_pool:
            context.load_default_certs()
        if ca is not None:
            _trust(context, ca, f"CA {self.ca_file or 'ca_pem'}")
        if self.insecure_skip_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    def https_context(self) -> ssl.SSLContext:
        """The context of an HTTP client's ``https`` URLs: where `insecure`
        leaves none, Go's default (system roots, TLS 1.2 at least)."""
        context = self.ssl_context()
        if context is None:
            context = ssl.create_default_context()
            context.minimum_version = VERSIONS[DEFAULT_MIN_VERSION]
        return context

    def grpc_pem(self) -> tuple[bytes | None, bytes | None, bytes | None]:
        """(root CAs, private key, certificate chain) as PEM for gRPC's
        channel credentials (None: gRPC's default roots, no client
        certificate). Raises :class:`TLSError` for files that do not load or
        a CA that does not parse (gRPC would only fail at the first call)."""
        roots = self.ca_pem_bytes()
        if roots is not None:
            _trust(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), roots, f"CA {self.ca_file or 'ca_pem'}")
        if not self.has_certificate:
            return roots, None, None
        chain, key = self.certificate_pem()
        return roots, key, chain
