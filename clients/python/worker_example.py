"""An orq worker: long-poll for items it is able to run, process them, ack or nack.

    python3 clients/python/worker_example.py --port 7420 --ns default --topic emails [--cluster]

(the script's folder holds the ``orq`` package, so it runs from a clone;
elsewhere install it: ``pip install ./clients/python``).

Enqueue something for it (from another shell):

    python3 -c 'import orq; print(orq.Client.open().enqueue_one("default", "emails", b"hi"))'

It runs the blocking worker loop (orq/worker.py): up to ``--concurrency``
items at once, each lease extended while its item is processed, a failing
item nacked with an exponential back-off so it is retried later (and becomes
a dead letter after its max_attempts). ``--cluster`` works a whole cluster
through any node. Ctrl-C stops taking new work; running items are finished.
"""

import argparse
import signal

from orq import Client, ClusterClient, Worker


def process(delivery, lease_lost):
    """Stand-in for real work: fail payloads that say so, to show nack."""
    if delivery["payload"].startswith(b"fail"):
        raise RuntimeError("the payload asked to fail")
    print(f"processed {delivery['id']} (attempt {delivery['attempt']}): {delivery['payload'][:60]!r}")


def report(event):
    if event["kind"] == "nacked":
        print(f"failed {event['delivery']['id']}: {event['error']} (again in {event['delay_ms']} ms)")
    elif event["kind"] in ("error", "lease_lost"):
        print(f"{event['kind']} {event.get('during', '')}: {event.get('error', event.get('delivery', {}).get('id'))}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7420)
    parser.add_argument("--token")
    parser.add_argument("--ns", default="default")
    parser.add_argument("--topic", default="default")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--lease-ms", type=int, default=30_000)
    parser.add_argument("--wait-ms", type=int, default=5_000)
    parser.add_argument("--gpu", action="store_true", help="advertise capability gpu=true (matching demo)")
    parser.add_argument("--cluster", action="store_true", help="--host is one node of a cluster: work every node's items")
    parser.add_argument("--max-items", type=int, default=0, help="stop after this many items (0 = run until Ctrl-C)")
    args = parser.parse_args()

    def connect():
        if args.cluster:
            return ClusterClient(args.host, args.port, token=args.token)
        return Client.open(args.host, args.port, token=args.token, client="orq-python-worker")

    handled = [0]
    worker = None

    def on_event(event):
        report(event)
        if event["kind"] in ("acked", "nacked"):
            handled[0] += 1
            if args.max_items and handled[0] >= args.max_items:
                worker.stop(wait=False)

    worker = Worker(
        connect,
        args.ns,
        args.topic,
        process,
        concurrency=args.concurrency,
        lease_ms=args.lease_ms,
        wait_ms=args.wait_ms,
        capabilities={"gpu": args.gpu, "lang": ["python"]},
        on_event=on_event,
    )
    # Ctrl-C or SIGTERM: take no new work, finish (ack or nack) what runs, then exit.
    signal.signal(signal.SIGINT, lambda signum, frame: worker.stop(wait=False))
    signal.signal(signal.SIGTERM, lambda signum, frame: worker.stop(wait=False))
    # A lost server is ridden out: dequeues pause and retry, a plain Client is
    # reconnected, unacked leases expire and their items come again.
    worker.run()


if __name__ == "__main__":
    main()
