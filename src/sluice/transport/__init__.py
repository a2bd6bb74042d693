"""HTTP/1.1 on asyncio shared by Edge and the collector: the server protocol
with its limits (:mod:`sluice.transport.http_server`), the pooled client
that replays a request only when a stale pooled connection failed it
(:mod:`sluice.transport.http_client`), and the event loop both serve on
(:mod:`sluice.transport.loop`)."""
