"""orq's Python client: a blocking ``Client`` and an asyncio ``AsyncClient``
for one server, a ``ClusterClient`` that hides a cluster, and a worker loop
for each (``Worker``, ``AsyncWorker``). Wire protocol version 1; the only
dependency is ``msgpack``. docs/CLIENTS.md, "Python client", describes them.

    from orq import Client
    with Client.open("127.0.0.1", 7420) as orq:
        orq.enqueue("shop", [{"topic": "emails", "payload": b"hello"}])
"""

from .async_client import AsyncClient
from .async_worker import AsyncWorker
from .client import Client
from .cluster import ClusterClient
from .errors import ConnectionLost, OrqError
from .fields import policy_fields
from .framing import DEFAULT_PORT, PROTOCOL_VERSION
from .key_shard import fnv1a32, item_shard, shard_of_group, shard_of_key
from .tracing import tracing_available
from .waiting import is_settled
from .worker import Worker
from .worker_settings import nack_delay_ms

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "AsyncWorker",
    "Client",
    "ClusterClient",
    "ConnectionLost",
    "DEFAULT_PORT",
    "OrqError",
    "PROTOCOL_VERSION",
    "Worker",
    "fnv1a32",
    "is_settled",
    "item_shard",
    "nack_delay_ms",
    "policy_fields",
    "shard_of_group",
    "shard_of_key",
    "tracing_available",
]
