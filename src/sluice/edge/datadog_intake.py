"""Where each Datadog Agent call goes: the intake families and their upstreams.

The Agent sends three families of calls, to different Datadog hosts when it
talks to Datadog directly:

* logs (``/api/v2/logs``; ``/v1/input`` on the legacy HTTP intake) to the logs
  intake, ``https://http-intake.logs.<site>``: Edge's ``logs_url``;
* metrics (series v1 and v2, sketches, check runs; and the public API's
  distribution points, which API clients post to the same host) to the
  site's API: ``metrics_url``;
* everything else under ``/api/`` and ``/intake/`` (API key validation, host
  metadata, inventories, events, service checks) to its main endpoint,
  ``https://app.<site>`` (``GetInfraEndpoint`` in the Agent's
  ``pkg/config/utils/endpoints.go``): ``api_url``.

Every family falls back to ``upstream_url``. ``api_url`` first falls back to
the site of ``metrics_url`` (``https://api.datadoghq.eu`` gives
``https://app.datadoghq.eu``), or to ``metrics_url`` itself when that is not
a Datadog host (a relay that takes everything the Agent sends, as the Agent's
own ``dd_url`` does).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

LOGS_PATH = "/api/v2/logs"
LEGACY_LOGS_PREFIX = "/v1/input"
"""The legacy HTTP logs intake: ``/v1/input/<API key>``, a key in the path."""
V1_SERIES, V2_SERIES = "/api/v1/series", "/api/v2/series"
SKETCHES, CHECK_RUNS = "/api/beta/sketches", "/api/v1/check_run"
DISTRIBUTION_POINTS = "/api/v1/distribution_points"
METRICS_UNFILTERED = frozenset({CHECK_RUNS, DISTRIBUTION_POINTS})
"""Metrics-family calls forwarded unchanged: check runs are not metrics, and
distribution points are not among the routes EDGE.md section 2 filters (the
Agent sends its distributions as sketches)."""
METRICS_PATHS = frozenset({V1_SERIES, V2_SERIES, SKETCHES, *METRICS_UNFILTERED})
CONTENT_ENCODINGS = {"zstd1": "zstd"}
"""Datadog's own names of Content-Encodings, as the codec they name: the API
clients' ``zstd1`` (``MetricContentEncoding.ZSTD1``) is a zstd frame."""
API_PREFIXES = ("/api/", "/intake/")
"""Paths of the Agent's other calls (those not in the logs or metrics families)."""

SITE_DOMAINS = ("datadoghq.com", "datadoghq.eu", "ddog-gov.com", "datad0g.com", "datad0g.eu")
"""The domains Datadog sites live under."""
_DATACENTER = re.compile(r"[a-z]+[0-9]+")
"""The label that names a site's datacenter: ``us3``, ``us5``, ``ap1``..."""


def datadog_site(url: str) -> str | None:
    """The Datadog site a URL belongs to (``us3.datadoghq.com`` for
    ``https://api.us3.datadoghq.com``), None for any other host."""
    host = (urlsplit(url).hostname or "").rstrip(".")
    for domain in SITE_DOMAINS:
        if host == domain or host.endswith("." + domain):
            labels = host[: -len(domain)].rstrip(".").split(".")
            datacenter = labels[-1]
            if _DATACENTER.fullmatch(datacenter):
                return f"{datacenter}.{domain}"
            return domain
    return None


def default_api_url(metrics_url: str) -> str:
    """Where the Agent's other calls go when ``api_url`` is not set and
    ``metrics_url`` is: the main endpoint of its site, else ``metrics_url``."""
    site = datadog_site(metrics_url)
    if site is None:
        return metrics_url
    return f"{urlsplit(metrics_url).scheme}://app.{site}"


def codec(encoding: str) -> str:
    """The codec of a Content-Encoding on a Datadog intake route (a
    lower-cased header value)."""
    return CONTENT_ENCODINGS.get(encoding, encoding)


def loggable_path(path: str) -> str:
    """A request path as a log line may show it: the API key of a legacy
    logs path (``/v1/input/<key>``) as ``***``."""
    if path.startswith(LEGACY_LOGS_PREFIX + "/"):
        return LEGACY_LOGS_PREFIX + "/***"
    return path
