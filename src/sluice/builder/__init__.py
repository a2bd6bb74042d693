"""sluice-builder: custom collector distributions from a builder manifest."""
