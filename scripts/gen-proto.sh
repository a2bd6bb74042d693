#!/usr/bin/env bash
# Regenerate the Python code for proto/tero/policy/v1/policy.proto into
# src/sluice/providers/wire/ (policy_pb2.py and its .pyi stub), and for
# proto/perftools/profiles/profile.proto (Google's pprof format, copied
# unchanged from github.com/google/pprof) into the pprof extension's package.
#
# The OpenTelemetry common.proto that policy.proto imports is not shipped as a
# file; its descriptor is taken from the installed opentelemetry-proto package
# and handed to protoc with --descriptor_set_in. Needs the dev dependencies
# (grpcio-tools), which ./scripts/test installs into .venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
.venv/bin/python - "$tmp/otel.pb" <<'PY'
import sys
from google.protobuf import descriptor_pb2
from opentelemetry.proto.common.v1 import common_pb2

files = descriptor_pb2.FileDescriptorSet()
common_pb2.DESCRIPTOR.CopyToProto(files.file.add())
with open(sys.argv[1], "wb") as out:
    out.write(files.SerializeToString())
PY
out=src/sluice/providers/wire
.venv/bin/python -m grpc_tools.protoc \
  --proto_path=proto \
  --descriptor_set_in="$tmp/otel.pb" \
  --python_out="$tmp" --pyi_out="$tmp" \
  proto/tero/policy/v1/policy.proto
cp "$tmp/tero/policy/v1/policy_pb2.py" "$tmp/tero/policy/v1/policy_pb2.pyi" "$out/"
echo "generated $out/policy_pb2.py and $out/policy_pb2.pyi"
out=src/sluice/collector/components/extensions/pprof
.venv/bin/python -m grpc_tools.protoc \
  --proto_path=proto \
  --python_out="$tmp" --pyi_out="$tmp" \
  proto/perftools/profiles/profile.proto
cp "$tmp/perftools/profiles/profile_pb2.py" "$tmp/perftools/profiles/profile_pb2.pyi" "$out/"
echo "generated $out/profile_pb2.py and $out/profile_pb2.pyi"
