"""The tero.policy.v1 wire format: generated messages (see scripts/gen-proto.sh)
and the conversions between binary protobuf and the proto3 JSON mapping."""
