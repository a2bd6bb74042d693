"""Built-in processors, one package each."""
