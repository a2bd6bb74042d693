"""Built-in connectors, one package each."""
