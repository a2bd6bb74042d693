"""The warning upstream's server settings (``config/internal``, used by
``configgrpc`` and ``confighttp``) log when a server listens on every
network interface."""

from __future__ import annotations

import ipaddress
import logging
import re

from sluice.transport.listener import split_host_port

UNSPECIFIED_HOST_WARNING = (
    "Using the 0.0.0.0 address exposes this server to every network interface,"
    " which may facilitate Denial of Service attacks."
)
SECURITY_DOCUMENTATION = (
    "https://github.com/open-telemetry/opentelemetry-collector/blob/main/docs/"
    "security-best-practices.md#safeguards-against-denial-of-service-attacks"
)
_GO_INT64 = re.compile(r"[+-]?[0-9]+", re.ASCII)


def exposes_every_interface(endpoint: str) -> bool:
    """Whether `endpoint` listens on every interface as upstream judges it:
    ``:`` or ``:<port>`` (a port Go's ``strconv.ParseInt`` reads, sign
    included), or a host that is the unspecified address (``0.0.0.0``,
    ``::``). An endpoint that does not split is not."""
    if endpoint.startswith(":"):
        port = endpoint[1:]
        return not port or (
            _GO_INT64.fullmatch(port) is not None and -(1 << 63) <= int(port) < 1 << 63
        )
    try:
        host, _ = split_host_port(endpoint)
        if "%" in host:  # Go's net.ParseIP takes no zone
            return False
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # Go compares ::ffff:0.0.0.0 equal to 0.0.0.0
    return address.is_unspecified


def warn_on_unspecified_host(log: logging.Logger, endpoint: str) -> None:
    """Log upstream's warning when `endpoint` exposes every interface."""
    if exposes_every_interface(endpoint):
        log.warning(
            UNSPECIFIED_HOST_WARNING,
            extra={"fields": {"documentation": SECURITY_DOCUMENTATION}},
        )
