"""Generated message classes of wire formats Sluice reads (see scripts/gen-proto.sh):
the Datadog Agent's metric payloads (``agent_payload_pb2``)."""
