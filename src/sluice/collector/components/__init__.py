"""Built-in components, one package per component type under its kind:
``config.py`` (typed config with ``validate()``), ``factory.py`` (stability,
upstream module path, ``create``) and the component itself."""
