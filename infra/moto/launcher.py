"""Serve moto's AWS emulator on loopback, one request at a time.

Why not moto's own `moto_server` command: it always serves threaded, and
moto's DynamoDB backend takes no lock, so two racing conditional writes can
both succeed against it. Real DynamoDB serializes writes to one item. This
launcher serves the same WSGI app (moto.moto_server.werkzeug_app:
DomainDispatcherApplication(create_backend_app)) with werkzeug's run_simple
and threaded=False, so requests are handled strictly one after another.

Persistence across restarts: moto 5.2.5 keeps all state in memory and has no
snapshot or restore; a restart starts empty. The closest thing it has is its
request recorder (MOTO_ENABLE_RECORDING, MOTO_RECORDER_FILEPATH and the
/moto-api/recorder/* endpoints): a log of every request that its
replay-recording endpoint re-sends over HTTP to the server itself. That
endpoint deadlocks a single-threaded server, so with --state FILE this
launcher replays FILE into the app in-process before it starts listening,
then keeps appending every request to FILE. The recorder logs reads too; at
start the launcher drops DynamoDB reads from FILE, so it grows with writes
only. Delete FILE to start empty.

Usage:
    .venv/bin/python infra/moto/launcher.py --host 127.0.0.1 --port 4599 [--state .prickle/moto.log]
"""

import argparse
import base64
import ipaddress
import json
import os
import signal
import sys
from urllib.parse import urlsplit


def parse_args(argv):
    parser = argparse.ArgumentParser(description="moto server on loopback, single-threaded")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=4599, help="port to listen on (default 4599)")
    parser.add_argument("--state", help="request log to replay at start and append to (keeps state across restarts)")
    args = parser.parse_args(argv)
    if not is_loopback(args.host):
        parser.error(f"--host {args.host} is not a loopback address; the emulator has no authentication")
    return args


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# DynamoDB calls that change nothing: replaying them is wasted time.
READ_ONLY_TARGETS = {
    "DynamoDB_20120810." + action
    for action in (
        "GetItem", "BatchGetItem", "TransactGetItems", "Query", "Scan",
        "DescribeTable", "DescribeTimeToLive", "DescribeContinuousBackups",
        "ListTables", "ListTagsOfResource", "DescribeEndpoints", "DescribeLimits",
    )
} | {
    "DynamoDBStreams_20120810." + action
    for action in ("DescribeStream", "GetRecords", "GetShardIterator", "ListStreams")
}


def is_read_only(entry):
    headers = {k.lower(): v for k, v in entry.get("headers", {}).items()}
    return headers.get("x-amz-target") in READ_ONLY_TARGETS


def replay(app, path):
    """Re-run the recorded writes against app, in order, without the network,
    and rewrite the log with those writes only. Returns how many ran."""
    from werkzeug.test import Client

    client = Client(app)
    kept = []
    with open(path, encoding="utf-8") as log:
        for line in log:
            if not line.strip():
                continue
            entry = json.loads(line)
            if is_read_only(entry):
                continue
            kept.append(line if line.endswith("\n") else line + "\n")
            body = entry.get("body") or b""
            if entry.get("body_encoded"):
                body = base64.b64decode(body)
            url = urlsplit(entry["url"])
            headers = {k: v for k, v in entry.get("headers", {}).items() if k.lower() != "transfer-encoding"}
            client.open(
                path=url.path or "/",
                base_url=f"{url.scheme}://{url.netloc}",
                query_string=url.query,
                method=entry.get("method", "POST"),
                headers=headers,
                data=body,
            )
    compacted = path + ".compacting"
    with open(compacted, "w", encoding="utf-8") as out:
        out.writelines(kept)
    os.replace(compacted, path)
    return len(kept)


def main(argv):
    args = parse_args(argv)
    if args.state:
        os.makedirs(os.path.dirname(os.path.abspath(args.state)), exist_ok=True)
        # moto reads the recorder settings when it is imported.
        os.environ["MOTO_RECORDER_FILEPATH"] = os.path.abspath(args.state)
        os.environ.pop("MOTO_ENABLE_RECORDING", None)

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    app = DomainDispatcherApplication(create_backend_app)

    if args.state:
        from moto.moto_api import recorder

        if os.path.exists(args.state):
            count = replay(app, args.state)
            print(f"moto: replayed {count} recorded writes from {args.state}", flush=True)
        recorder.start_recording()

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    print(f"moto: serving http://{args.host}:{args.port} (single-threaded)", flush=True)
    run_simple(
        args.host,
        args.port,
        app,
        threaded=False,
        processes=1,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
