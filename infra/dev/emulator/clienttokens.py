"""DynamoDB's client request token on TransactWriteItems, which moto 5.2.5
ignores (it applies every request it gets).

DynamoDB documents the token so: a TransactWriteItems that carries the
ClientRequestToken of one that succeeded within the last 10 minutes, with
the same parameters, succeeds without applying anything again; the same
token with other parameters is answered IdempotentParameterMismatchException.
After 10 minutes the token is forgotten and the request is a new one. The
SDKs fill the token in before their first attempt, so an SDK's retry of a
transaction whose answer was lost (it landed) is answered success, as the
landed transaction was: without this, the retry ran again and failed its
own conditions (an owner's approval answered "decided or changed at the
same moment" although it was stored).

ClientTokens.wrap(app) is that check in front of moto's WSGI app. It runs
under the launcher's lock, so a token is never in use by two requests at
once (DynamoDB's TransactionInProgressException does not arise). Only a
transaction moto answered 200 is remembered, as DynamoDB remembers only a
call that succeeded: a cancelled transaction retried with its token runs
again. A request answered from a token never reaches moto, so it is not in
the write log either. Tokens live in memory: a restarted emulator has
forgotten them.
"""

import collections
import hashlib
import json
import time

# How long DynamoDB remembers a token after the call that used it.
WINDOW = 600.0

TARGET = "DynamoDB_20120810.TransactWriteItems"

ERROR_PREFIX = "com.amazonaws.dynamodb.v20120810#"


def digest(body):
    """The request's parameters other than the token, in one spelling."""
    params = {k: v for k, v in body.items() if k != "ClientRequestToken"}
    return hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class ClientTokens:
    def __init__(self, window=WINDOW, clock=time.monotonic):
        self.window = window
        self.clock = clock
        # token -> (digest, when the call that used it completed), oldest first.
        self._seen = collections.OrderedDict()

    def _forget_expired(self, now):
        while self._seen:
            token, (_, done) = next(iter(self._seen.items()))
            if now - done <= self.window:
                break
            del self._seen[token]

    def wrap(self, app):
        def handle(environ, start_response):
            if environ.get("HTTP_X_AMZ_TARGET") != TARGET:
                return app(environ, start_response)
            stream = environ["wsgi.input"]
            raw = stream.read()
            stream.seek(0)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return app(environ, start_response)
            token = body.get("ClientRequestToken") if isinstance(body, dict) else None
            if not token:
                return app(environ, start_response)
            self._forget_expired(self.clock())
            mine = digest(body)
            seen = self._seen.get(token)
            if seen is not None:
                if seen[0] == mine:
                    return answer(start_response, "200 OK", {})
                return answer(start_response, "400 Bad Request", {
                    "__type": ERROR_PREFIX + "IdempotentParameterMismatchException",
                    "message": "Request with the same client token was made with different parameters",
                })
            status = []

            def capture(s, headers, exc_info=None):
                status.append(s)
                return start_response(s, headers, exc_info) if exc_info else start_response(s, headers)

            result = app(environ, capture)
            try:
                served = list(result)
            finally:
                if hasattr(result, "close"):
                    result.close()
            if status and status[0].startswith("200"):
                self._seen[token] = (mine, self.clock())
            return served

        return handle


def answer(start_response, status, body):
    data = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", str(len(data))),
                            ("x-amzn-RequestId", "client-token")])
    return [data]
