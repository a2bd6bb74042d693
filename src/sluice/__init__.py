"""Sluice: telemetry policy filtering for OpenTelemetry and Datadog."""

__version__ = "0.1.0"
