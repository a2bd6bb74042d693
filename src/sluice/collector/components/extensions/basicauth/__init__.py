"""``basicauth``: HTTP Basic authentication, checked against htpasswd
entries on receivers (server side) or sent with fixed credentials by
exporters (client side)."""

from sluice.collector.components.extensions.basicauth.factory import BasicAuthFactory

FACTORY = BasicAuthFactory()

__all__ = ["FACTORY", "BasicAuthFactory"]
