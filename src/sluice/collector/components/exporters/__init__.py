"""Built-in exporters, one package each."""
