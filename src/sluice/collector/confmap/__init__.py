"""Reading collector config: sources merged in order (:mod:`.sources`),
``${env:...}`` expansion (:mod:`.expand`) and decoding into typed component
configs with key-path errors (:mod:`.decode`)."""
