#!/usr/bin/env bash
# Regenerate the Python code for the .proto files under proto/:
#   proto/tero/policy/v1/policy.proto -> src/sluice/providers/wire/policy_pb2.py(i)
#   proto/datadog/agentpayload/agent_payload.proto
#                                     -> src/sluice/telemetry/wire/agent_payload_pb2.py(i)
#   proto/perftools/profiles/profile.proto (Google's pprof format, copied
#   unchanged from github.com/google/pprof)
#                                     -> the pprof extension's profile_pb2.py(i)
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
generate() { # generate PROTO OUT_DIR
  local proto="$1" out="$2" stem
  stem="${proto%.proto}"
  .venv/bin/python -m grpc_tools.protoc \
    --proto_path=proto \
    --descriptor_set_in="$tmp/otel.pb" \
    --python_out="$tmp" --pyi_out="$tmp" \
    "proto/$proto"
  cp "$tmp/${stem}_pb2.py" "$tmp/${stem}_pb2.pyi" "$out/"
  echo "generated $out/$(basename "$stem")_pb2.py and .pyi"
}
generate tero/policy/v1/policy.proto src/sluice/providers/wire
generate datadog/agentpayload/agent_payload.proto src/sluice/telemetry/wire
generate perftools/profiles/profile.proto src/sluice/collector/components/extensions/pprof
