"""Record views and codecs: how the engine reads and writes fields of OTLP
protobuf messages, OTLP JSON documents and Datadog records."""
