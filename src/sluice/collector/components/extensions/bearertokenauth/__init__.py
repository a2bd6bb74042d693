"""``bearertokenauth``: a static token (or several, or a file's) that
receivers require on every request and exporters add to every request."""

from sluice.collector.components.extensions.bearertokenauth.factory import BearerTokenAuthFactory

FACTORY = BearerTokenAuthFactory()

__all__ = ["FACTORY", "BearerTokenAuthFactory"]
