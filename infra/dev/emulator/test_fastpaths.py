"""Tests of fastpaths.py against moto itself (in-process, mock_aws):
random writes, updates that move items between GSI partitions, deletes and
transactions, with every Query cross-checked against moto's own full scan;
a failed transaction leaves items and streams as they were; the recorder
logs writes only; a snapshot restores what it saved.

    .venv/bin/python -m unittest discover -s infra/dev/emulator -p 'test_*.py'
"""

import json
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["PRICKLE_MOTO_CROSSCHECK"] = "1"
os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

import boto3  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from moto import mock_aws  # noqa: E402

import fastpaths  # noqa: E402

fastpaths.apply()

TABLE = "tasks"


def s(v):
    return {"S": v}


def create(client):
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "assignee", "updated", "project")],
        GlobalSecondaryIndexes=[
            {"IndexName": "by-assignee", "KeySchema": [{"AttributeName": "assignee", "KeyType": "HASH"}, {"AttributeName": "updated", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "by-project", "KeySchema": [{"AttributeName": "project", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            {"IndexName": "by-project-updated", "KeySchema": [{"AttributeName": "project", "KeyType": "HASH"}, {"AttributeName": "updated", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["n", "doc", "assignee"]}},
        ],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )


def query_all(client, **kwargs):
    items, start = [], None
    while True:
        if start:
            kwargs["ExclusiveStartKey"] = start
        page = client.query(TableName=TABLE, **kwargs)
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def scan_all(client):
    return sorted(client.scan(TableName=TABLE)["Items"], key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


def stream_length():
    from moto.dynamodb.models import dynamodb_backends

    table = dynamodb_backends["123456789012"]["us-east-1"].tables[TABLE]
    return len(table.stream_shard.items)


class FastPaths(unittest.TestCase):
    @mock_aws
    def test_queries_answer_as_moto_does_while_items_move(self):
        client = boto3.client("dynamodb")
        create(client)
        r = random.Random(14)
        people, projects, keys = ["ann", "bo", "cy", "di"], ["p1", "p2", "p3"], [f"t{i:03d}" for i in range(60)]
        queries = 0
        for step in range(500):
            pk, sk = r.choice(keys), r.choice(["task", "h1", "h2"])
            roll = r.random()
            if roll < 0.35:
                item = {"pk": s(pk), "sk": s(sk), "updated": s(f"{step:05d}"), "n": {"N": str(step)},
                        "doc": {"M": {"l": {"L": [{"N": "1.5"}, {"BOOL": step % 2 == 0}, {"NULL": True}, {"S": ""}]},
                                      "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2"]}, "b": {"B": bytes([step % 256, 1])}}}}
                if r.random() < 0.8:
                    item["assignee"] = s(r.choice(people))
                if r.random() < 0.8:
                    item["project"] = s(r.choice(projects))
                client.put_item(TableName=TABLE, Item=item)
            elif roll < 0.55:
                client.update_item(TableName=TABLE, Key={"pk": s(pk), "sk": s(sk)}, UpdateExpression="SET assignee = :a, updated = :u",
                                   ExpressionAttributeValues={":a": s(r.choice(people)), ":u": s(f"{step:05d}")})
            elif roll < 0.62:
                client.update_item(TableName=TABLE, Key={"pk": s(pk), "sk": s(sk)}, UpdateExpression="REMOVE #p", ExpressionAttributeNames={"#p": "project"})
            elif roll < 0.70:
                client.delete_item(TableName=TABLE, Key={"pk": s(pk), "sk": s(sk)})
            elif roll < 0.80:
                other = r.choice(keys)
                try:
                    client.transact_write_items(TransactItems=[
                        {"Put": {"TableName": TABLE, "Item": {"pk": s(other), "sk": s("task"), "assignee": s(r.choice(people)), "updated": s(f"{step:05d}"), "project": s("p1")}}},
                        {"Update": {"TableName": TABLE, "Key": {"pk": s(pk), "sk": s("h9")}, "UpdateExpression": "SET assignee = :a, updated = :u",
                                    "ConditionExpression": "attribute_not_exists(pk)" if r.random() < 0.5 else "attribute_exists(pk)",
                                    "ExpressionAttributeValues": {":a": s(r.choice(people)), ":u": s(f"{step:05d}")}}},
                    ] if other != pk else [])
                except ClientError as exc:
                    self.assertIn(exc.response["Error"]["Code"], {"TransactionCanceledException", "ValidationException"})
            else:
                queries += 1
                forward, limit = r.random() < 0.5, r.choice([2, 7, 100])
                which = r.random()
                if which < 0.4:
                    query_all(client, IndexName="by-assignee", KeyConditionExpression="assignee = :a", ExpressionAttributeValues={":a": s(r.choice(people))},
                              ScanIndexForward=forward, Limit=limit)
                elif which < 0.55:
                    query_all(client, IndexName="by-assignee", KeyConditionExpression="assignee = :a AND updated > :u",
                              ExpressionAttributeValues={":a": s(r.choice(people)), ":u": s(f"{r.randrange(step + 1):05d}")}, Limit=limit)
                elif which < 0.65:
                    query_all(client, IndexName="by-project", KeyConditionExpression="project = :p", ExpressionAttributeValues={":p": s(r.choice(projects))}, Limit=limit)
                elif which < 0.75:
                    query_all(client, IndexName="by-project-updated", KeyConditionExpression="project = :p", FilterExpression="attribute_exists(doc)",
                              ExpressionAttributeValues={":p": s(r.choice(projects))}, ScanIndexForward=forward, Limit=limit)
                else:
                    query_all(client, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": s(pk)}, ScanIndexForward=forward, Limit=limit)
        self.assertGreater(queries, 60)
        # And the index answers what a full scan says each partition holds.
        items = scan_all(client)
        for who in people:
            got = query_all(client, IndexName="by-assignee", KeyConditionExpression="assignee = :a", ExpressionAttributeValues={":a": s(who)})
            want = [i for i in items if i.get("assignee") == s(who) and "updated" in i]
            self.assertEqual(sorted(json.dumps(i, sort_keys=True, default=repr) for i in got), sorted(json.dumps(i, sort_keys=True, default=repr) for i in want))

    @mock_aws
    def test_a_failed_transaction_leaves_items_and_stream_as_they_were(self):
        client = boto3.client("dynamodb")
        create(client)
        client.put_item(TableName=TABLE, Item={"pk": s("t1"), "sk": s("task"), "assignee": s("ann"), "updated": s("1"), "v": {"N": "1"}})
        before, records = scan_all(client), stream_length()
        with self.assertRaises(ClientError) as caught:
            client.transact_write_items(TransactItems=[
                {"Update": {"TableName": TABLE, "Key": {"pk": s("t1"), "sk": s("task")}, "UpdateExpression": "SET assignee = :b, v = :two",
                            "ExpressionAttributeValues": {":b": s("bo"), ":two": {"N": "2"}}}},
                {"Put": {"TableName": TABLE, "Item": {"pk": s("t1"), "sk": s("h1"), "assignee": s("bo"), "updated": s("2")}}},
                {"ConditionCheck": {"TableName": TABLE, "Key": {"pk": s("t2"), "sk": s("task")}, "ConditionExpression": "attribute_exists(pk)"}},
            ])
        self.assertEqual(caught.exception.response["Error"]["Code"], "TransactionCanceledException")
        self.assertEqual(scan_all(client), before)
        self.assertEqual(stream_length(), records)
        self.assertEqual(query_all(client, IndexName="by-assignee", KeyConditionExpression="assignee = :a", ExpressionAttributeValues={":a": s("bo")}), [])
        self.assertEqual(len(query_all(client, IndexName="by-assignee", KeyConditionExpression="assignee = :a", ExpressionAttributeValues={":a": s("ann")})), 1)
        # The same transaction with its condition met lands whole.
        client.put_item(TableName=TABLE, Item={"pk": s("t2"), "sk": s("task")})
        client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": {"pk": s("t1"), "sk": s("task")}, "UpdateExpression": "SET assignee = :b",
                        "ExpressionAttributeValues": {":b": s("bo")}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": {"pk": s("t2"), "sk": s("task")}, "ConditionExpression": "attribute_exists(pk)"}},
        ])
        self.assertEqual(len(query_all(client, IndexName="by-assignee", KeyConditionExpression="assignee = :a", ExpressionAttributeValues={":a": s("bo")})), 1)
        self.assertEqual(stream_length(), records + 2)


class Launcher(unittest.TestCase):
    def test_a_snapshot_restores_its_tables_and_is_ignored_for_another_log(self):
        import launcher
        from moto.dynamodb.models import dynamodb_backends

        with mock_aws(), tempfile.TemporaryDirectory() as d:
            state = os.path.join(d, "dynamodb.log")
            with open(state, "w") as f:
                f.write('{"headers": {}, "method": "POST", "url": "http://x/", "body": ""}\n')
            client = boto3.client("dynamodb")
            create(client)
            client.put_item(TableName=TABLE, Item={"pk": s("t1"), "sk": s("task"), "assignee": s("ann"), "updated": s("1")})
            records = stream_length()
            size = launcher.save_snapshot(state)
            self.assertEqual(stream_length(), records, "saving changed the live stream")
            backend = dynamodb_backends["123456789012"]["us-east-1"]
            backend.tables = {}
            self.assertEqual(launcher.load_snapshot(state), size)
            self.assertEqual(len(query_all(client, IndexName="by-assignee", KeyConditionExpression="assignee = :a", ExpressionAttributeValues={":a": s("ann")})), 1)
            # The restored stream holds no old record and numbers the next one after them.
            shard = backend.tables[TABLE].stream_shard
            self.assertEqual((len(shard.items), shard.starting_sequence_number), (0, 1100000000017454423009 + records))
            client.put_item(TableName=TABLE, Item={"pk": s("t2"), "sk": s("task")})
            self.assertEqual(shard.items[0].to_json()["dynamodb"]["SequenceNumber"], str(1100000000017454423009 + records))
            with open(state, "w") as f:
                f.write('{"headers": {}, "method": "POST", "url": "http://y/", "body": ""}\n')
            self.assertEqual(launcher.load_snapshot(state), 0)

    def test_the_lock_serves_one_at_a_time_in_arrival_order(self):
        import threading
        import time

        import launcher

        lock, order, inside = launcher.FairLock(), [], []
        lock.__enter__()
        threads = []
        for i in range(20):
            def work(i=i):
                with lock:
                    inside.append(i)
                    self.assertEqual(len(inside), 1, "two holders at once")
                    order.append(i)
                    inside.pop()
            t = threading.Thread(target=work)
            t.start()
            threads.append(t)
            while len(lock._waiters) < i + 1:
                time.sleep(0.001)
        lock.__exit__(None, None, None)
        for t in threads:
            t.join()
        self.assertEqual(order, list(range(20)))

    def test_the_recorder_logs_writes_only(self):
        from moto.moto_api import recorder

        with mock_aws(), tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "log")
            recorder._location = path
            recorder._user_enabled = True
            try:
                from werkzeug.test import Client
                from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

                app = Client(DomainDispatcherApplication(create_backend_app))
                headers = {"Content-Type": "application/x-amz-json-1.0", "Authorization": "AWS4-HMAC-SHA256 Credential=test/20261202/us-east-1/dynamodb/aws4_request"}
                app.post("/", headers={**headers, "X-Amz-Target": "DynamoDB_20120810.ListTables"}, data="{}")
                app.post("/", headers={**headers, "X-Amz-Target": "DynamoDB_20120810.DeleteTable"}, data='{"TableName": "none"}')
            finally:
                recorder._user_enabled = False
            with open(path) as f:
                targets = [json.loads(line)["headers"].get("X-Amz-Target") for line in f]
            self.assertEqual(targets, ["DynamoDB_20120810.DeleteTable"])

    def test_a_logged_write_keeps_what_its_replay_needs_and_replays(self):
        import launcher
        from moto.moto_api import recorder
        from werkzeug.test import Client
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

        auth = ("AWS4-HMAC-SHA256 Credential=local/20261202/eu-west-1/dynamodb/aws4_request, "
                "SignedHeaders=host;x-amz-date, Signature=" + "ab" * 32)
        headers = {"Content-Type": "application/x-amz-json-1.0", "Authorization": auth,
                   "User-Agent": "aws-sdk-go-v2/1.48.0 " + "x" * 100, "X-Amz-Date": "20261202T000000Z",
                   "Amz-Sdk-Invocation-Id": "d854036b-8cc4-4e8d-a1dd-b35216d80ebb"}
        table = {"TableName": "t", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                 "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}
        item = {"TableName": "t", "Item": {"pk": s("k1"), "text": s("naïve ☃ \"quoted\"\n"), "raw": {"B": "AAEC/w=="}}}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "log")
            with mock_aws():
                recorder._location = path
                recorder._user_enabled = True
                try:
                    app = Client(DomainDispatcherApplication(create_backend_app))
                    for target, body in (("CreateTable", table), ("PutItem", item)):
                        answer = app.post("/", headers={**headers, "X-Amz-Target": "DynamoDB_20120810." + target}, data=json.dumps(body))
                        self.assertEqual(answer.status_code, 200, answer.get_data(as_text=True))
                finally:
                    recorder._user_enabled = False
            with open(path) as f:
                entries = [json.loads(line) for line in f]
            self.assertEqual(len(entries), 2)
            for entry in entries:
                self.assertEqual(set(entry["headers"]), {"Host", "Content-Type", "X-Amz-Target", "Authorization"})
                self.assertEqual(entry["headers"]["Authorization"],
                                 "AWS4-HMAC-SHA256 Credential=local/20261202/eu-west-1/dynamodb/aws4_request")
                self.assertFalse(entry["body_encoded"])
            self.assertEqual(json.loads(entries[1]["body"]), item)

            with mock_aws():
                from moto.dynamodb.models import dynamodb_backends
                from moto.dynamodb.models.dynamo_type import DynamoType

                app = DomainDispatcherApplication(create_backend_app)
                self.assertEqual(launcher.replay(app, path), 2)
                stored = dynamodb_backends["123456789012"]["eu-west-1"].get_table("t").get_item(DynamoType(s("k1")), None)
                self.assertEqual(stored.to_json()["Attributes"], {**item["Item"], "raw": {"B": b"\x00\x01\x02\xff"}})


if __name__ == "__main__":
    unittest.main()
