"""The emulator honours TransactWriteItems' ClientRequestToken as DynamoDB
documents it: the same token and the same request within 10 minutes succeed
without applying again (as an SDK's retry of a transaction whose answer was
lost), the same token with another request is
IdempotentParameterMismatchException, a token is forgotten after 10 minutes
and after a call that failed. Against the launcher in a process of its own,
as the local stack and the integration tests run it; the window with a
clock of the test's own.

    .venv/bin/python -m unittest discover -s infra/dev/emulator -p 'test_*.py'
"""

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")

import boto3  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

import clienttokens  # noqa: E402
from test_launcher_stop import start  # noqa: E402


def add(n, token, condition=None):
    update = {"TableName": "t", "Key": {"pk": {"S": "k"}}, "UpdateExpression": "ADD n :n",
              "ExpressionAttributeValues": {":n": {"N": str(n)}}}
    if condition:
        update["ConditionExpression"] = condition
    return {"TransactItems": [{"Update": update}], "ClientRequestToken": token}


class AgainstTheEmulator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.out = open(os.path.join(cls.dir.name, "out.log"), "w")
        cls.proc, url = start(os.path.join(cls.dir.name, "dynamodb.log"), cls.out)
        cls.client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1")
        cls.client.create_table(TableName="t", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                                BillingMode="PAY_PER_REQUEST")

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        try:
            cls.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            cls.proc.kill()
        cls.out.close()
        cls.dir.cleanup()

    def setUp(self):
        self.client.delete_item(TableName="t", Key={"pk": {"S": "k"}})

    def n(self):
        item = self.client.get_item(TableName="t", Key={"pk": {"S": "k"}}, ConsistentRead=True).get("Item")
        return int(item["n"]["N"]) if item else 0

    def test_the_same_token_and_request_succeed_once_applied(self):
        self.client.transact_write_items(**add(1, "token-same"))
        self.client.transact_write_items(**add(1, "token-same"))
        self.assertEqual(self.n(), 1, "a retry with the token of a transaction that landed applied it again")

    def test_a_retry_does_not_fail_its_own_condition(self):
        once = add(5, "token-cond", condition="attribute_not_exists(n)")
        self.client.transact_write_items(**once)
        self.client.transact_write_items(**once)  # no TransactionCanceledException
        self.assertEqual(self.n(), 5)

    def test_the_same_token_with_another_request_is_a_mismatch(self):
        self.client.transact_write_items(**add(1, "token-other"))
        with self.assertRaises(ClientError) as caught:
            self.client.transact_write_items(**add(2, "token-other"))
        self.assertEqual(caught.exception.response["Error"]["Code"], "IdempotentParameterMismatchException")
        self.assertEqual(self.n(), 1)

    def test_another_token_applies_again(self):
        self.client.transact_write_items(**add(1, "token-a"))
        self.client.transact_write_items(**add(1, "token-b"))
        self.assertEqual(self.n(), 2)

    def test_a_failed_transaction_is_not_remembered(self):
        guarded = add(1, "token-failed", condition="attribute_exists(n)")
        with self.assertRaises(ClientError) as caught:
            self.client.transact_write_items(**guarded)
        self.assertEqual(caught.exception.response["Error"]["Code"], "TransactionCanceledException")
        self.client.transact_write_items(**add(1, "token-first"))
        self.client.transact_write_items(**guarded)  # now its condition holds: applied
        self.assertEqual(self.n(), 2)


class Window(unittest.TestCase):
    def test_a_token_is_forgotten_after_ten_minutes(self):
        now = [0.0]
        applied = []

        def app(environ, start_response):
            applied.append(environ["wsgi.input"].read())
            start_response("200 OK", [])
            return [b"{}"]

        handle = clienttokens.ClientTokens(clock=lambda: now[0]).wrap(app)

        def send(body):
            raw = json.dumps(body).encode()
            got = []
            out = b"".join(handle({"HTTP_X_AMZ_TARGET": clienttokens.TARGET, "wsgi.input": io.BytesIO(raw)},
                                  lambda s, h, e=None: got.append(s)))
            return got[0], out

        body = add(1, "token-w")
        self.assertEqual(send(body)[0], "200 OK")
        now[0] = clienttokens.WINDOW
        self.assertEqual(send(body)[0], "200 OK")
        self.assertEqual(len(applied), 1, "a retry within 10 minutes was applied")
        status, out = send(add(2, "token-w"))
        self.assertTrue(status.startswith("400"), status)
        self.assertIn("IdempotentParameterMismatchException", out.decode())
        now[0] = clienttokens.WINDOW + 0.001
        self.assertEqual(send(body)[0], "200 OK")
        self.assertEqual(len(applied), 2, "a token 10 minutes old was still remembered")
        self.assertEqual(applied[-1], json.dumps(body).encode(), "the request reached moto changed")


if __name__ == "__main__":
    unittest.main()
