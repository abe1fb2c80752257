"""An orq worker: long-poll for items it is able to run, process them, ack or nack.

    /usr/bin/python3 clients/python/worker_example.py --port 7420 --ns default --topic emails

Enqueue something for it (from another shell):

    /usr/bin/python3 -c 'import orq_client as o; c=o.Client.connect(); c.hello(); print(c.enqueue_one("default","emails",b"hi"))'

Each item is processed at most ``--lease-ms`` long; a failing item is nacked
with a back-off so it is retried later (and becomes a dead letter after its
max_attempts). Ctrl-C stops taking new work; the current batch is finished.
"""

import argparse
import signal
import time

from orq_client import Client, ConnectionLost, OrqError


def process(delivery):
    """Stand-in for real work: fail payloads that say so, to show nack."""
    if delivery["payload"].startswith(b"fail"):
        raise RuntimeError("the payload asked to fail")
    print(f"processed {delivery['id']} (attempt {delivery['attempt']}): {delivery['payload'][:60]!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7420)
    parser.add_argument("--token")
    parser.add_argument("--ns", default="default")
    parser.add_argument("--topic", action="append", default=None, help="repeatable; default 'default'")
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--lease-ms", type=int, default=30_000)
    parser.add_argument("--wait-ms", type=int, default=5_000)
    parser.add_argument("--gpu", action="store_true", help="advertise capability gpu=true (matching demo)")
    parser.add_argument("--max-items", type=int, default=0, help="stop after this many items (0 = run until Ctrl-C)")
    args = parser.parse_args()
    topics = {name: args.batch for name in (args.topic or ["default"])}
    capabilities = {"gpu": args.gpu, "lang": ["python"]}

    stopping = False

    def stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    handled = 0
    backoff_s = 0.5
    while not stopping:
        try:
            with Client.connect(args.host, args.port) as orq:
                orq.hello(token=args.token, client="orq-python-worker")
                backoff_s = 0.5
                while not stopping:
                    deliveries = orq.dequeue(
                        args.ns, topics, capabilities=capabilities, wait_ms=args.wait_ms, lease_ms=args.lease_ms
                    )
                    done, failed = [], []
                    for delivery in deliveries:
                        try:
                            process(delivery)
                            done.append(delivery["receipt"])
                        except Exception as error:  # a failed item is the worker's normal business
                            print(f"failed {delivery['id']}: {error}")
                            failed.append({"receipt": delivery["receipt"], "delay_ms": 1000 * delivery["attempt"]})
                    if done:
                        orq.ack(args.ns, done)
                    if failed:
                        orq.nack(args.ns, failed)
                    handled += len(deliveries)
                    if args.max_items and handled >= args.max_items:
                        return
        except (ConnectionLost, ConnectionRefusedError) as error:
            # Server restarting or unreachable: leases of unacked items simply
            # expire and the items are redelivered, so reconnecting is safe.
            print(f"connection lost ({error}); retrying in {backoff_s:.1f} s")
            time.sleep(backoff_s)
            backoff_s = min(backoff_s * 2, 30.0)
        except OrqError as error:
            if error.code in ("UNAVAILABLE", "RATE_LIMITED", "SHUTTING_DOWN"):
                time.sleep((error.retry_after_ms or 1000) / 1000.0)
            else:
                raise


if __name__ == "__main__":
    main()
