"""Where policies come from: files, and (later) HTTP and gRPC sync."""
