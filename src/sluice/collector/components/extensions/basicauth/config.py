"""The ``basicauth`` extension's config, as contrib's basicauthextension:
``htpasswd`` (server side) or ``client_auth`` (client side), never both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from sluice.collector.component import ComponentConfig, Problem, section_problems
from sluice.collector.confmap.decode import NIL_POINTER, Duration, Opaque

NO_TIME = Duration(0)
NO_SECRET = Opaque("")
NO_CREDENTIAL_SOURCE = "no credential source provided"
INVALID_FORMAT = "invalid authorization format"
"""Upstream's refusal of a client username holding ``:`` (when an exporter
starts with it: the config itself is valid)."""


@dataclass
class HtpasswdSettings:
    file: str = ""
    inline: str = ""
    """Entries after the file's: for a user in both, the inline entry wins."""


@dataclass
class AwsSecretsManagerSettings:
    """Upstream's credentials from AWS Secrets Manager: accepted, refused as
    not supported."""

    secret_arn: str = ""
    region: str = ""
    refresh_interval: Duration = NO_TIME
    username_key: str = ""
    password_key: str = ""


@dataclass
class ClientAuthSettings:
    username: str = ""
    username_file: str = ""
    """Read at start and re-read when it changes; wins over `username`."""
    password: Opaque = NO_SECRET
    password_file: str = ""
    """Read at start and re-read when it changes; wins over `password`."""
    aws_secrets_manager: Annotated[AwsSecretsManagerSettings | None, NIL_POINTER] = None

    def validate(self) -> Iterator[Problem]:
        secrets = self.aws_secrets_manager
        if secrets is not None:
            if self.username or self.username_file or self.password or self.password_file:
                yield (
                    "",
                    "aws_secrets_manager cannot be combined with username, username_file, "
                    "password, or password_file",
                )
            elif not secrets.secret_arn:
                yield "", "aws_secrets_manager.secret_arn is required"
            yield (
                "aws_secrets_manager",
                "not supported by Sluice; use username_file and password_file "
                "(re-read when they change)",
            )


@dataclass
class BasicAuthConfig(ComponentConfig):
    htpasswd: Annotated[HtpasswdSettings | None, NIL_POINTER] = None
    """Upstream's pointers, nil by default: a null leaves them unset."""
    client_auth: Annotated[ClientAuthSettings | None, NIL_POINTER] = None

    def validate(self) -> Iterator[Problem]:
        server, client = self.htpasswd, self.client_auth
        if server is not None and client is not None:
            yield "", "only one of `htpasswd` or `client_auth` can be specified"
        elif server is None and client is None:
            yield "", NO_CREDENTIAL_SOURCE
        else:
            # An `htpasswd` with neither `file` nor `inline` is valid, as
            # upstream's: only making the extension fails (the factory's).
            yield from section_problems("client_auth", client)
