"""The collector distribution: standard OpenTelemetry Collector YAML, the
service that runs pipelines of components, and the components Sluice ships
(``components/<kind>/<type>/``), with the ``policy`` processor built in."""
