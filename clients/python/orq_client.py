"""A small, blocking Python client for orq (wire protocol version 1).

Written from the wire contract alone (/work/shared/PROTOCOL.md): each frame is
a 4-byte big-endian length followed by one MessagePack map. Requests carry an
``id`` chosen here; replies are matched by that id, so replies that arrive for
other requests (after ``pipeline``) are kept until asked for.

Needs the ``msgpack`` package (Debian: ``apt install python3-msgpack``). One
``Client`` is one TCP connection and is not thread-safe: give each thread its own.

    from orq_client import Client
    with Client.connect("127.0.0.1", 7420) as orq:
        orq.hello()
        [item_id] = orq.enqueue("default", [{"topic": "emails", "payload": b"hi"}])
        for delivery in orq.dequeue("default", {"emails": 10}, wait_ms=1000):
            orq.ack("default", [delivery["receipt"]])
"""

import socket
import struct

import msgpack

__all__ = ["Client", "OrqError", "ConnectionLost", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = 1
DEFAULT_PORT = 7420
# Largest reply this client accepts. The server's own limit is announced by
# hello (max_frame_bytes, 4 MiB by default); replies can be that large.
REPLY_BYTES_MAX = 64 * 1024 * 1024
# Request ids run from 1 to 2^53-1 (the contract); wrapping is harmless
# because ids only need to be unique among requests in flight.
REQUEST_ID_MAX = 2**53 - 1
_LENGTH = struct.Struct(">I")


class OrqError(Exception):
    """An error reply. ``code`` is the contract's code (BAD_REQUEST, TOO_LARGE, ...)."""

    def __init__(self, code, message, details=None, request_id=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.request_id = request_id

    @property
    def retry_after_ms(self):
        return self.details.get("retry_after_ms")


class ConnectionLost(OrqError):
    """The connection closed or failed; requests still in flight have no reply."""

    def __init__(self, message):
        super().__init__("CONNECTION_LOST", message)


def _without_none(fields):
    # The contract treats nil as absent; leaving the key out keeps frames small.
    return {key: value for key, value in fields.items() if value is not None}


def _topic_counts(topics):
    """Accept {"topic": count}, [("topic", count)], [{"topic":..., "count":...}] or ["topic"] (count 1)."""
    if isinstance(topics, dict):
        return [{"topic": name, "count": count} for name, count in topics.items()]
    result = []
    for entry in topics:
        if isinstance(entry, str):
            result.append({"topic": entry, "count": 1})
        elif isinstance(entry, dict):
            result.append(entry)
        else:
            name, count = entry
            result.append({"topic": name, "count": count})
    return result


def policy_fields(ns, topic, group=None, weight=None, max_leased=None, rate=None, clear=None):
    """A ``policy`` request's fields: ``rate`` as a dict or a (count, per_ms) pair; ``clear`` sent only when true."""
    if rate is not None and not isinstance(rate, dict):
        count, per_ms = rate
        rate = {"count": count, "per_ms": per_ms}
    return _without_none(
        {"ns": ns, "topic": topic, "group": group, "weight": weight, "max_leased": max_leased, "rate": rate, "clear": True if clear else None}
    )


def _every_page(ask, field):
    """Every entry of a paged listing: ``ask(after)`` returns a page {field: [...], "next"}; follows ``next`` until None."""
    after = None
    while True:
        page = ask(after)
        yield from page[field]
        if page["next"] is None:
            return
        after = page["next"]


def _receipt_items(items):
    """Accept receipt strings or dicts with a receipt and options."""
    return [{"receipt": entry} if isinstance(entry, str) else _without_none(entry) for entry in items]


class Client:
    """One connection to an orq server."""

    def __init__(self, sock, timeout=30.0):
        self._sock = sock
        self._timeout = timeout
        self._next_id = 1
        self._replies = {}
        self._closed = False
        self._packer = msgpack.Packer(use_bin_type=True)
        self.server_info = None
        self._token = None

    @classmethod
    def connect(cls, host="127.0.0.1", port=DEFAULT_PORT, timeout=30.0):
        """Open a TCP connection. ``timeout`` (seconds) bounds each reply wait beyond a dequeue's own wait_ms."""
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock, timeout)

    @classmethod
    def open(cls, host="127.0.0.1", port=DEFAULT_PORT, timeout=30.0, token=None, client="orq-python"):
        """Connect and say hello: a ready client (what the worker loop's ``connect`` returns)."""
        orq = cls.connect(host, port, timeout)
        try:
            orq.hello(token=token, client=client)
        except Exception:
            orq.close()
            raise
        return orq

    @property
    def closed(self):
        """True once closed, by close() or by a lost connection."""
        return self._closed

    def worker(self, ns, topic, handler, **options):
        """A worker loop (orq_worker.Worker) against this client's server, on connections of its own; call run() or start()."""
        from orq_worker import Worker

        host, port = self._sock.getpeername()[:2]
        token = self._token
        return Worker(lambda: Client.open(host, port, self._timeout, token, "orq-python-worker"), ns, topic, handler, **options)

    # -- context manager -------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        if not self._closed:
            self._closed = True
            self._sock.close()

    # -- framing ---------------------------------------------------------

    def _send(self, op, fields):
        if self._closed:
            raise ConnectionLost("the connection is closed")
        request_id = self._next_id
        self._next_id = 1 if request_id >= REQUEST_ID_MAX else request_id + 1
        body = self._packer.pack({"id": request_id, "op": op, **_without_none(fields)})
        limit = (self.server_info or {}).get("max_frame_bytes")
        if limit is not None and len(body) > limit:
            raise OrqError("FRAME_TOO_LARGE", f"request is {len(body)} bytes, the server accepts {limit}")
        try:
            self._sock.sendall(_LENGTH.pack(len(body)) + body)
        except OSError as error:
            self.close()
            raise ConnectionLost(f"send failed: {error}") from error
        return request_id

    def _read_exactly(self, count):
        chunks = []
        remaining = count
        while remaining > 0:
            try:
                chunk = self._sock.recv(min(remaining, 1 << 20))
            except socket.timeout as error:
                # A reply may still arrive later and would be matched to the
                # wrong request by a confused caller: drop the connection.
                self.close()
                raise ConnectionLost("timed out waiting for a reply") from error
            except OSError as error:
                self.close()
                raise ConnectionLost(f"receive failed: {error}") from error
            if not chunk:
                self.close()
                raise ConnectionLost("the server closed the connection")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _read_reply(self):
        (length,) = _LENGTH.unpack(self._read_exactly(4))
        if length > REPLY_BYTES_MAX:
            self.close()
            raise ConnectionLost(f"reply of {length} bytes exceeds {REPLY_BYTES_MAX}")
        reply = msgpack.unpackb(self._read_exactly(length), raw=False)
        if not isinstance(reply, dict) or "id" not in reply:
            self.close()
            raise ConnectionLost(f"the server sent a frame that is not a reply: {reply!r}")
        return reply

    def _wait(self, request_id, wait_ms=0):
        """Read replies until the one for ``request_id``; keep the others."""
        self._sock.settimeout(self._timeout + wait_ms / 1000.0)
        while request_id not in self._replies:
            reply = self._read_reply()
            if reply["id"] == 0:
                # A connection-level error (BAD_FRAME, FRAME_TOO_LARGE,
                # BAD_REQUEST for a missing id): raise it where it can be seen.
                self._raise_error(reply)
            self._replies[reply["id"]] = reply
        reply = self._replies.pop(request_id)
        if not reply.get("ok"):
            self._raise_error(reply)
        return reply

    @staticmethod
    def _raise_error(reply):
        error = reply.get("error") or {}
        raise OrqError(
            error.get("code", "INTERNAL"),
            error.get("message", "no message"),
            error.get("details"),
            reply.get("id"),
        )

    # -- generic requests ------------------------------------------------

    def request(self, op, **fields):
        """Send one request and return its ok reply (a dict); raise OrqError on an error reply."""
        return self._wait(self._send(op, fields), fields.get("wait_ms") or 0)

    def pipeline(self, requests):
        """Send every (op, fields) pair before reading any reply; return replies (or OrqError objects) in order."""
        ids = [self._send(op, fields) for op, fields in requests]
        results = []
        for request_id in ids:
            try:
                results.append(self._wait(request_id))
            except ConnectionLost:
                raise
            except OrqError as error:
                results.append(error)
        return results

    # -- the contract's operations ----------------------------------------

    def hello(self, token=None, client="orq-python"):
        """Say hello (and authenticate with ``token``); returns the server's description, limits included."""
        reply = self.request("hello", protocol=PROTOCOL_VERSION, token=token, client=client)
        self.server_info = reply
        # Kept for worker(), which opens connections of its own with the same token.
        self._token = token
        return reply

    @property
    def memory_namespaces(self):
        """The namespaces the server keeps in memory only (``["*"]``: all of them), from the last ``hello``; empty when none or before it.

        Their items are lost at a restart of the server."""
        return list((self.server_info or {}).get("memory_namespaces") or [])

    def ping(self):
        """Round trip; returns the server's clock (now_ms)."""
        return self.request("ping")["now_ms"]

    def enqueue(self, ns, items):
        """Enqueue a batch of item dicts (``topic`` required; ``payload``/``metadata`` as bytes). Returns ids in order."""
        return self.request("enqueue", ns=ns, items=[_without_none(item) for item in items])["ids"]

    def enqueue_one(self, ns, topic, payload=b"", **fields):
        """Enqueue one item; the keyword arguments are the contract's item fields (priority=, delay_ms=, requires=, ...)."""
        return self.enqueue(ns, [{"topic": topic, "payload": payload, **fields}])[0]

    def dequeue(self, ns, topics, capabilities=None, wait_ms=None, lease_ms=None):
        """Lease up to ``count`` ready items per topic. ``wait_ms`` long-polls when nothing is ready. Returns deliveries."""
        reply = self.request(
            "dequeue",
            ns=ns,
            topics=_topic_counts(topics),
            capabilities=capabilities,
            wait_ms=wait_ms,
            lease_ms=lease_ms,
        )
        return reply["items"]

    def ack(self, ns, receipts):
        """End deliveries successfully. Returns {"acked": n, "stale": [receipts that no longer name a delivery]}."""
        reply = self.request("ack", ns=ns, receipts=list(receipts))
        return {"acked": reply["acked"], "stale": reply["stale"]}

    def nack(self, ns, items):
        """Give deliveries back: receipts, or dicts {receipt, delay_ms?, metadata?}. Returns {"nacked", "stale"}."""
        reply = self.request("nack", ns=ns, items=_receipt_items(items))
        return {"nacked": reply["nacked"], "stale": reply["stale"]}

    def extend(self, ns, items):
        """Set leases to end ``lease_ms`` from now: dicts {receipt, lease_ms}. Returns {"extended", "stale"}."""
        reply = self.request("extend", ns=ns, items=_receipt_items(items))
        return {"extended": reply["extended"], "stale": reply["stale"]}

    def topics(self, ns, prefix=None, limit=None, after=None):
        """One page of the namespace's topics: {"topics": [...], "next": str or None}.

        Each entry holds its counts by state and ``paused`` (bool), plus
        ``paused_until_ms`` for a pause that ends by itself.
        """
        reply = self.request("topics", ns=ns, prefix=prefix, limit=limit, after=after)
        return {"topics": reply["topics"], "next": reply.get("next")}

    def list(self, ns, topic, state=None, limit=None, after=None):
        """One page of a topic's items (read only): {"items": [...], "next": str or None}.

        Ready items come in delivery order, the others in enqueue order;
        ``state`` keeps one state only. Pass ``next`` as ``after`` for the
        next page; a page may be short while ``next`` is set.
        """
        reply = self.request("list", ns=ns, topic=topic, state=state, limit=limit, after=after)
        return {"items": reply["items"], "next": reply.get("next")}

    def list_all(self, ns, topic, state=None, limit=None):
        """Every item of a topic, following ``next`` page by page (a generator)."""
        after = None
        while True:
            page = self.list(ns, topic, state=state, limit=limit, after=after)
            yield from page["items"]
            if page["next"] is None:
                return
            after = page["next"]

    def pause(self, ns, topic, for_ms=None, group=None):
        """Stop deliveries from a topic (with ``group``, from that group's items only) for ``for_ms`` (None: until resume).

        Returns when it ends (``paused_until_ms``), or None for a pause until resume.
        """
        return self.request("pause", ns=ns, topic=topic, group=group, for_ms=for_ms).get("paused_until_ms")

    def resume(self, ns, topic, group=None):
        """Lift a topic's pause (or one group's). Returns False when it was not paused."""
        return self.request("resume", ns=ns, topic=topic, group=group)["resumed"]

    # -- fair sharing: policies, groups, explain ---------------------------

    def policy(self, ns, topic, group=None, weight=None, max_leased=None, rate=None, clear=None):
        """Set the policy of a topic (no ``group``), one group, or every group without its own (``group="*"``).

        It replaces the whole stored policy: a bound not given is no bound.
        ``rate`` is ``{"count": n, "per_ms": ms}`` or a ``(count, per_ms)``
        pair. ``clear=True`` removes the policy instead. Returns
        ``{"policy": {group?, weight?, max_leased?, rate?}}`` as stored, or
        ``{"cleared": bool}``.
        """
        reply = self.request(
            "policy",
            **policy_fields(ns, topic, group=group, weight=weight, max_leased=max_leased, rate=rate, clear=clear),
        )
        return {"policy": reply["policy"]} if reply.get("policy") is not None else {"cleared": bool(reply.get("cleared"))}

    def policies(self, ns, topic, limit=None, after=None):
        """One page of a topic's policies, its own first, then by group name: {"policies": [...], "next": str or None}."""
        reply = self.request("policies", ns=ns, topic=topic, limit=limit, after=after)
        return {"policies": reply["policies"], "next": reply.get("next")}

    def policies_all(self, ns, topic, limit=None):
        """Every policy of a topic, following ``next`` page by page (a generator)."""
        return _every_page(lambda after: self.policies(ns, topic, limit=limit, after=after), "policies")

    def groups(self, ns, topic, limit=None, after=None):
        """One page of a topic's groups with their counts by state: {"groups": [...], "next": str or None}.

        By group name; the items without a group come first as ``group: None``
        (its cursor is ""). Each entry has ``paused`` and, for a pause that
        ends by itself, ``paused_until_ms``.
        """
        reply = self.request("groups", ns=ns, topic=topic, limit=limit, after=after)
        return {"groups": reply["groups"], "next": reply.get("next")}

    def groups_all(self, ns, topic, limit=None):
        """Every group of a topic, following ``next`` page by page (a generator)."""
        return _every_page(lambda after: self.groups(ns, topic, limit=limit, after=after), "groups")

    def explain(self, ns, ids):
        """Why each item is not being delivered right now: [{id, state, reasons} or None], in request order."""
        return self.request("explain", ns=ns, ids=list(ids))["items"]
