"""An example third-party component for Sluice collector distributions."""
