"""Built-in extensions, one package each."""
