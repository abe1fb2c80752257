"""A stand-in for OpenTelemetry's API, for orq's tests only (see ../README.md)."""
