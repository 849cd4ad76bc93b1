"""Idempotent retries (SPEC §3) through the tools their users run: `stepsign sign
--idempotency-key` and the Python client's `idempotency_key`, against a real daemon. Run again
with the same key, they get the first signature back (`replayed`), with no new step-up."""
import json
import tempfile

import pytest

from stepsign import Client, StepSignError

from conftest import Daemon, cli, secret_file

USER = "erin"
PASSWORD = "Amber-Walrus-31"


@pytest.fixture()
def fresh():
    """A daemon of its own and a user 'erin'."""
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        admin = daemon.client()
        assert admin.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        admin.close()
        try:
            yield daemon, directory
        finally:
            daemon.stop()


def test_cli_sign_run_again_with_its_key_prints_the_same_signature(fresh):
    daemon, directory = fresh
    password = secret_file(directory, "pw", PASSWORD)
    sign = ("sign", "--user", USER, "--reason", "payment", "--payload", "pay 10 EUR", "--json",
            "--idempotency-key", "invoice-77")
    first = cli(daemon, *sign, "--password-file", password)
    assert first.returncode == 0, first.stderr
    again = cli(daemon, *sign, "--password-file", password)
    assert again.returncode == 0, again.stderr
    one, two = json.loads(first.stdout), json.loads(again.stdout)
    assert two["dataSignatureID"] == one["dataSignatureID"] and two["payloadSignature"] == one["payloadSignature"]
    assert two["logIndex"] == one["logIndex"]
    assert "replayed" not in one and two["replayed"] is True
    other = cli(daemon, "sign", "--user", USER, "--reason", "payment", "--payload", "pay 11 EUR",
                "--idempotency-key", "invoice-77", "--password-file", password)
    assert other.returncode != 0
    assert "idempotencyKey" in other.stderr


def test_python_client_sign_with_its_key_twice_steps_up_once(fresh):
    daemon, _ = fresh
    asked = []

    def on_password(challenge):
        asked.append(challenge.attempts_left)
        return PASSWORD

    with Client(daemon.socket) as client:
        first = client.sign("pay 10 EUR", "payment", user=USER, on_password=on_password, idempotency_key="py-1")
    with Client(daemon.socket) as client:
        again = client.sign("pay 10 EUR", "payment", user=USER, on_password=on_password, idempotency_key="py-1")
        batch = client.sign_batch([("a", "r"), ("b", "r")], user=USER, on_password=on_password, idempotency_key="py-2")
        batch_again = client.sign_batch([("a", "r"), ("b", "r")], user=USER, on_password=on_password,
                                        idempotency_key="py-2")
        with pytest.raises(StepSignError) as refused:
            client.sign("pay 12 EUR", "payment", user=USER, on_password=on_password, idempotency_key="py-1")
    assert len(asked) == 2
    assert (again.signature_id, again.jws, again.log_index) == (first.signature_id, first.jws, first.log_index)
    assert again.details["replayed"] is True
    assert [s.signature_id for s in batch_again] == [s.signature_id for s in batch]
    assert refused.value.code == 4
