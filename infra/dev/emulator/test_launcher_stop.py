"""The launcher as the local stack runs it, in a process of its own: stopped
by a burst of signals (a stop handler interrupted by the next signal once
deadlocked on its own lock), it saves its snapshot once and exits, and the
next start restores that snapshot with nothing to replay.

    .venv/bin/python -m unittest discover -s infra/dev/emulator -p 'test_*.py'
"""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")

import boto3  # noqa: E402

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(state, log):
    port = free_port()
    proc = subprocess.Popen([sys.executable, LAUNCHER, "--host", "127.0.0.1", "--port", str(port), "--state", state],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the launcher exited with {proc.returncode} before it listened")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("the launcher did not listen within 60 s")


class Stop(unittest.TestCase):
    def test_a_burst_of_signals_saves_one_snapshot_and_exits(self):
        with tempfile.TemporaryDirectory() as d:
            state, out = os.path.join(d, "dynamodb.log"), os.path.join(d, "out.log")
            with open(out, "w") as log:
                proc, url = start(state, log)
                try:
                    client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1")
                    client.create_table(TableName="t", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                                        BillingMode="PAY_PER_REQUEST")
                    # Enough items that saving the snapshot takes a while for the next signals to land in.
                    for batch in range(120):
                        client.batch_write_item(RequestItems={"t": [
                            {"PutRequest": {"Item": {"pk": {"S": f"k{batch}-{i}"}, "body": {"S": "x" * 200},
                                                     "n": {"L": [{"N": str(j)} for j in range(20)]}}}}
                            for i in range(25)]})
                    for _ in range(8):
                        proc.send_signal(signal.SIGTERM)
                        time.sleep(0.02)
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    raise AssertionError("the launcher did not exit within 30 s of a burst of SIGTERMs")
                finally:
                    if proc.poll() is None:
                        proc.kill()
            with open(out) as f:
                printed = f.read()
            self.assertEqual(proc.returncode, 0, printed)
            self.assertEqual(printed.count("saved a snapshot"), 1, printed)

            with open(out, "w") as log:
                proc, url = start(state, log)
                try:
                    client = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1")
                    self.assertEqual(client.scan(TableName="t", Select="COUNT")["Count"], 3000)
                finally:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=60)
            with open(out) as f:
                printed = f.read()
            self.assertIn("and 0 writes after it", printed)


if __name__ == "__main__":
    unittest.main()
