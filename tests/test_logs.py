"""What log lines and messages may print of a URL (:func:`sluice.logs.redact_url`)."""

from __future__ import annotations

import pytest

from sluice.logs import redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:secretpw@host/p?x=1", "http://***@host/p?***"),
        ("https://TOKEN@host:443/sync", "https://***@host:443/sync"),
        ("http://u:p@ss@host/a@b", "http://***@host/a@b"),
        ("grpcs://u:secretpw@host:4317", "grpcs://***@host:4317"),
        ("u:secretpw@host:4317", "***@host:4317"),
        ("http://host/v1/policy/sync?api_key=k", "http://host/v1/policy/sync?***"),
        ("http://host/a@b", "http://host/a@b"),
        ("http://[::1]:4318/prefix", "http://[::1]:4318/prefix"),
        ("host:4317", "host:4317"),
    ],
)
def test_credentials_and_queries_are_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown
