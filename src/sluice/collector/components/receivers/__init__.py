"""Built-in receivers, one package each."""
