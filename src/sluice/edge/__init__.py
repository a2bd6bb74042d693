"""Edge: the policy proxy. Receives OTLP/HTTP and Datadog intake, applies the
policies, forwards what survives to an upstream."""
