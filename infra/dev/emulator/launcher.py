"""Serve moto's AWS emulator on loopback: many connections, one request at a time.

Why not moto's own `moto_server` command: it serves threaded, and moto's
DynamoDB backend takes no lock, so two racing conditional writes can both
succeed against it. Real DynamoDB serializes writes to one item. This
launcher serves the same WSGI app (moto.moto_server.werkzeug_app:
DomainDispatcherApplication(create_backend_app)) with werkzeug, and runs the
app under one lock, taken in the order requests arrive: a request's body is
read first, then the request is handled, and its answer built, strictly one
after another, as a single-threaded server would.

Why werkzeug's threaded server (moto's own dependency) with HTTP/1.0, one
request per connection: both servers tried with keep-alive lose answers.
werkzeug's threaded server turns keep-alive on, and its request handler, after
each answer, reads and discards for 10 ms whatever the socket holds, which can
be the client's next request (the integration suite once saw a CreateEventBus
answered "already exists": the SDK's retry of a request served unanswered).
waitress (HTTP/1.1 keep-alive, used for a while) lost answers too: the Go SDK
read "use of closed network connection" in the body of an answer it had the
headers of, and sent the request again, which was then served twice; 30 to 50
SDK retries in each run of shared/owners/web's integration tests, 0 with this server
(the lines this launcher prints for a retried request, and the SDK's
LogRetries). So did werkzeug's server with HTTP/1.0 on a pool of 4 worker
threads, where accepted connections wait their turn unread (17 and 19 a run):
a thread per connection, reading each request as it arrives, served none
twice. A retried write fails its own condition: a sign-in link that says
"already used", a notification never sent. A connection per request costs a
TCP connect and a thread, well below one request's handling in moto.
infra/dev/local's TestRequestsAreServedOnce sends many fresh writes from many
goroutines and checks each was logged, and so served, exactly once, and that
the emulator saw no retried request.

The patches of fastpaths.py (installed before serving) keep moto's Query,
TransactWriteItems and request recorder from growing with the table.
clienttokens.py honours TransactWriteItems' ClientRequestToken as DynamoDB
does (moto ignores it): an SDK's retry of a transaction that landed succeeds
without applying again.

Persistence across restarts: moto 5.2.5 keeps all state in memory and has no
snapshot or restore. With --state FILE, the launcher keeps two things:
- FILE, moto's request recorder's log of every request that may change
  something (the recorder logs reads too; fastpaths.py stops that, and a log
  of an older launcher is rewritten without them at start), appended to as
  requests arrive;
- FILE.snapshot, the DynamoDB tables pickled when the launcher stops
  (SIGTERM, SIGINT) and after a start that had to replay log entries, with the
  size and SHA-256 of the log it includes. Stream records are left out (as
  DynamoDB drops them after 24 h): the local stack reads streams from their
  end when it starts, and the sequence numbers go on where they were.
At start it loads the snapshot if its log is FILE's beginning (same moto
version), and replays in-process only what FILE holds after it; else it
replays FILE whole. A killed launcher (SIGKILL) loses no write: its next
start replays the log since the last snapshot. Delete FILE to start empty
(a snapshot whose log is gone is ignored).

Usage:
    .venv/bin/python infra/dev/emulator/launcher.py --host 127.0.0.1 --port 4599 [--state .prickle/moto.log]
"""

import argparse
import base64
import collections
import cProfile
import gc
import hashlib
import io
import ipaddress
import json
import os
import pickle
import signal
import sys
import threading
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clienttokens  # noqa: E402
import fastpaths  # noqa: E402

# How many connections may wait to be accepted: more than the agents a load
# run plays, each with a request in flight.
LISTEN_QUEUE = 4096

SNAPSHOT_VERSION = 1


def parse_args(argv):
    parser = argparse.ArgumentParser(description="moto server on loopback, one request at a time")
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


def is_read_only(entry):
    headers = {k.lower(): v for k, v in entry.get("headers", {}).items()}
    return headers.get("x-amz-target") in fastpaths.READ_ONLY_TARGETS


def replay(app, path, offset=0):
    """Re-run the recorded writes of path from byte offset against app, in
    order, without the network. From the start (offset 0) it also rewrites
    the log with those writes only. Returns how many ran."""
    from werkzeug.test import Client

    client = Client(app)
    kept = []
    count = 0
    with open(path, "rb") as log:
        log.seek(offset)
        for raw in log:
            line = raw.decode("utf-8")
            if not line.strip():
                continue
            entry = json.loads(line)
            if is_read_only(entry):
                continue
            kept.append(line if line.endswith("\n") else line + "\n")
            count += 1
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
    if offset == 0:
        compacted = path + ".compacting"
        with open(compacted, "w", encoding="utf-8") as out:
            out.writelines(kept)
        os.replace(compacted, path)
    return count


def log_digest(path, size):
    """The SHA-256 of the first size bytes of path."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        left = size
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def dynamodb_tables():
    """Every region's DynamoDB tables: {(account, region): {name: Table}}."""
    from moto.dynamodb.models import dynamodb_backends

    out = {}
    for account, regions in dynamodb_backends.items():
        for region, backend in regions.items():
            if backend.tables:
                out[(account, region)] = backend.tables
    return out


def save_snapshot(state):
    """Pickle the tables with the size and digest of the log they include."""
    import moto

    size = os.path.getsize(state) if os.path.exists(state) else 0
    tables = dynamodb_tables()
    snap = {
        "version": SNAPSHOT_VERSION,
        "moto": moto.__version__,
        "log_size": size,
        "log_sha256": log_digest(state, size) if size else "",
        "tables": tables,
    }
    # Stream records are not kept: a restarted stack reads its streams from
    # their end (infra/dev/local), and the next record continues the sequence.
    shards = [t.stream_shard for per_region in tables.values() for t in per_region.values() if t.stream_shard is not None]
    kept = [(shard, shard.items, shard.starting_sequence_number) for shard in shards]
    for shard, items, start in kept:
        shard.items, shard.starting_sequence_number = [], start + len(items)
    tmp = state + ".snapshot.tmp"
    try:
        with open(tmp, "wb") as f:
            pickle.dump(snap, f, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        for shard, items, start in kept:
            shard.items, shard.starting_sequence_number = items, start
    os.replace(tmp, state + ".snapshot")
    return size


def load_snapshot(state):
    """Restore the tables of state's snapshot if it includes the beginning of
    state's log; returns the log offset to replay from (0: none restored)."""
    import moto
    from moto.dynamodb.models import dynamodb_backends

    path = state + ".snapshot"
    if not os.path.exists(path) or not os.path.exists(state):
        return 0
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    # Millions of new objects would trigger a collection pass over all of them again and again.
    gc.disable()
    # An item's attributes are a LimitedSizeDict, whose every insertion weighs
    # the whole item again to refuse one over 400 KB: unpickling an item of n
    # attributes weighed it n times (95% of loading 5,000 tasks, 16 s). The
    # items were weighed when they were written: insert them as a dict does.
    weighed = LimitedSizeDict.__setitem__
    LimitedSizeDict.__setitem__ = dict.__setitem__
    try:
        with open(path, "rb") as f:
            snap = pickle.load(f)
    except Exception as exc:  # a torn or foreign file: the log has everything
        print(f"moto: ignoring {path}: {exc}", flush=True)
        return 0
    finally:
        LimitedSizeDict.__setitem__ = weighed
        # What was loaded lives as long as the server: out of every collection
        # pass, including the first one after enable (it walked all of it, 0.25 s).
        gc.freeze()
        gc.enable()
    if snap.get("version") != SNAPSHOT_VERSION or snap.get("moto") != moto.__version__:
        print(f"moto: ignoring {path}: written by another version", flush=True)
        return 0
    size = snap["log_size"]
    if size == 0 or os.path.getsize(state) < size or log_digest(state, size) != snap["log_sha256"]:
        print(f"moto: ignoring {path}: it is not of {state}", flush=True)
        return 0
    for (account, region), tables in snap["tables"].items():
        dynamodb_backends[account][region].tables = tables
    return size


class FairLock:
    """A lock that hands itself to its waiters in the order they came: with
    hundreds of connections waiting, a plain lock lets some wait far longer
    than the queue is long (the emulator's answers then hit the clients' timeouts)."""

    def __init__(self):
        self._guard = threading.Lock()
        self._waiters = collections.deque()
        self._held = False

    def __enter__(self):
        with self._guard:
            if not self._held:
                self._held = True
                return self
            turn = threading.Event()
            self._waiters.append(turn)
        turn.wait()
        return self

    def __exit__(self, *exc):
        with self._guard:
            if self._waiters:
                self._waiters.popleft().set()  # held on: the next waiter owns it now
            else:
                self._held = False
        return False


def serialized(app, lock, profile=None):
    """app as a WSGI app that reads the request body, then handles the request
    under lock: one request at a time, whatever the number of connections.
    With a cProfile.Profile, every request's handling is profiled."""

    def handle(environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        if length:
            body = environ["wsgi.input"].read(length)
        elif environ.get("wsgi.input_terminated"):
            body = environ["wsgi.input"].read()
        else:
            body = b""
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        # The SDKs number their tries of one call (amz-sdk-request: attempt=N;
        # max=M): a write tried again after its first try landed fails its own
        # condition, so every retry is worth a line in the emulator's log.
        attempt = environ.get("HTTP_AMZ_SDK_REQUEST", "")
        if attempt and not attempt.startswith("attempt=1;"):
            target = environ.get("HTTP_X_AMZ_TARGET", "?")
            invocation = environ.get("HTTP_AMZ_SDK_INVOCATION_ID", "?")
            print(f"moto: a retried request ({attempt}): {target}, invocation {invocation}", file=sys.stderr, flush=True)
        with lock:
            if profile is not None:
                profile.enable()
            try:
                result = app(environ, start_response)
                try:
                    return list(result)
                finally:
                    if hasattr(result, "close"):
                        result.close()
            finally:
                if profile is not None:
                    profile.disable()

    return handle


def main(argv):
    args = parse_args(argv)
    if args.state:
        args.state = os.path.abspath(args.state)
        os.makedirs(os.path.dirname(args.state), exist_ok=True)
        # moto reads the recorder settings when it is imported.
        os.environ["MOTO_RECORDER_FILEPATH"] = args.state
        os.environ.pop("MOTO_ENABLE_RECORDING", None)

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    fastpaths.apply()
    app = DomainDispatcherApplication(create_backend_app)
    lock = FairLock()

    if args.state:
        from moto.moto_api import recorder

        started = time.monotonic()
        if os.path.exists(args.state):
            offset = load_snapshot(args.state)
            count = replay(app, args.state, offset)
            how = f"a snapshot of {offset} log bytes and {count} writes after it" if offset else f"{count} recorded writes"
            print(f"moto: restored {how} from {args.state} in {time.monotonic() - started:.1f} s", flush=True)
            if count:
                save_snapshot(args.state)
            # What was restored lives as long as the server: keep it out of every collection pass.
            gc.freeze()
        recorder.start_recording()

    # PRICKLE_MOTO_PROFILE=FILE: profile every request (cProfile) and write the
    # statistics to FILE at stop (read them with python -m pstats FILE).
    profile_path = os.environ.get("PRICKLE_MOTO_PROFILE")
    profile = cProfile.Profile() if profile_path else None

    # A signal that lands while stop runs would run stop again inside it, and
    # wait forever for the lock the outer call holds: only the first one
    # stops, and later ones are ignored (also while the interpreter exits).
    stopping = []

    def stop(signum, frame):
        if stopping:
            return
        stopping.append(signum)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if profile is not None:
            with lock:
                profile.dump_stats(profile_path)
        if args.state:
            with lock:
                size = save_snapshot(args.state)
            print(f"moto: saved a snapshot of {size} log bytes", flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # Served (not replayed) transactions honour their ClientRequestToken: see clienttokens.py.
    served = clienttokens.ClientTokens().wrap(app)
    server = make_server(serialized(served, lock, profile), args.host, args.port)
    print(f"moto: serving http://{args.host}:{args.port} (threaded, one request per connection, one at a time)", flush=True)
    server.serve_forever()


def make_server(app, host, port):
    """A threaded werkzeug server of app on host:port, bound and listening,
    that answers HTTP/1.0: one request per connection."""
    from moto.moto_server.werkzeug_app import MotoRequestHandler
    from werkzeug.serving import BaseWSGIServer
    from werkzeug.serving import make_server as werkzeug_server

    class OneRequestPerConnection(MotoRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_request(self, code="-", size="-"):
            """Nothing: a line per request would grow the emulator's log with
            every call of a stack that runs for weeks."""

    BaseWSGIServer.request_queue_size = LISTEN_QUEUE
    return werkzeug_server(host, port, app, threaded=True, request_handler=OneRequestPerConnection)


if __name__ == "__main__":
    main(sys.argv[1:])
