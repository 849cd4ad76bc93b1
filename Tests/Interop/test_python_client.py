"""The Python client (`clients/python`, package `stepsign`, installed by scripts/test with `pip
install ./clients/python`) against the real daemon: every challenge, batches, errors with the
spec's codes, pipelining (sync and asyncio), timeouts, a retry after error 15 (the database held
by another writer past the daemon's busy timeout) and a broken connection; typed (`mypy
--strict`, `py.typed`). Signatures checked with PyJWT and cryptography, which nobody here wrote."""
import asyncio
import importlib.resources
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import jwt
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

import stepsign
from stepsign import AsyncClient, Client, Code, ConnectionLost, SigningFailed, Status, StepSignError

from conftest import Daemon, write_key_pair

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
USER = "py"
PASSWORD = "Copper-Heron-57"


@pytest.fixture()
def daemon():
    with tempfile.TemporaryDirectory() as directory:
        d = Daemon(directory)
        with Client(d.socket) as admin:
            admin.admin("addUser", user=USER, password=PASSWORD)
        try:
            yield d
        finally:
            if d.process.poll() is None:
                d.stop()


def verified(daemon, token):
    with Client(daemon.socket) as client:
        jwks = client.public_keys()["jwks"]
    key = next(jwt.PyJWK(k) for k in jwks["keys"] if k["kid"] == jwt.get_unverified_header(token)["kid"])
    return jwt.decode(token, key=key, algorithms=["ES256"])


def test_sign_answers_the_password_and_a_wrong_one_is_asked_again(daemon):
    asked = []

    def on_password(challenge):
        asked.append((challenge.attempts_left, challenge.status))
        return "Wrong-Guess-11" if len(asked) == 1 else PASSWORD

    with Client(daemon.socket) as client:
        signature = client.sign("release 3.1", "Release", level=1, user=USER, on_password=on_password)
    assert asked == [(3, Status.SUCCESS), (2, Status.AUTHENTICATION_FAILED)]
    claims = verified(daemon, signature.jws)
    assert claims["payload"] == "release 3.1" and claims["jti"] == signature.signature_id and claims["sub"] == USER
    assert isinstance(signature.log_index, int)


def test_a_device_key_and_a_batch(daemon, tmp_path):
    device, _, public = write_key_pair(str(tmp_path), "device")
    with Client(daemon.socket) as client:
        client.admin("enrollDeviceKey", user=USER, publicKey=open(public).read(), label="py")

        def on_device(challenge):
            r, s = decode_dss_signature(device.sign(challenge.challenge, ec.ECDSA(hashes.SHA256())))
            return challenge.device_keys[0], r.to_bytes(32, "big") + s.to_bytes(32, "big")

        one = client.sign("firmware.bin", "Flash", user=USER, on_device_challenge=on_device)
        assert verified(daemon, one.jws)["authenticatorUsed"] == "lda"
        batch = client.sign_batch([(f"artifact-{n}", "Release") for n in range(5)], user=USER, on_device_challenge=on_device)
    assert [verified(daemon, s.jws)["batch"]["index"] for s in batch] == list(range(5))
    assert len({s.signature_id for s in batch}) == 5


def test_errors_carry_the_specs_codes(daemon):
    with Client(daemon.socket) as client:
        with pytest.raises(StepSignError) as invalid:
            client.sign("", "Release", user=USER, on_password=lambda c: PASSWORD)
        assert invalid.value.code == Code.INVALID_ARGUMENTS and not invalid.value.retryable
        with pytest.raises(StepSignError) as unsupported:
            client.sign("p", "r", level=2, user=USER)
        assert unsupported.value.code == Code.UNSUPPORTED_AUTH_COMBINATION
        # Three wrong answers block the user: the signing ends with 153, as an exception.
        with pytest.raises(SigningFailed) as blocked:
            client.sign("p", "r", user=USER, on_password=lambda c: "Wrong-Guess-11")
        assert blocked.value.status == Status.ATTEMPTS_EXHAUSTED
        with pytest.raises(StepSignError) as refused:
            client.sign("p", "r", user=USER, on_password=lambda c: PASSWORD)
        assert refused.value.code == Code.USER_BLOCKED


def test_pipelining_sync_and_async(daemon):
    with Client(daemon.socket) as client:
        replies = client.pipeline([("status", {})] * 20 + [("getCheckpoint", {})])
    assert [r.code for r in replies] == [0] * 21 and "checkpoint" in replies[-1].result

    async def many():
        async with await AsyncClient.connect(daemon.socket) as client:
            results = await asyncio.gather(*[
                client.call("authenticateUserAndSignData", {"user": USER, "payload": f"p{n}", "reason": "r",
                                                            "authLevel": 0, "authenticatorType": 0})
                for n in range(40)])
            return [r.last_event["details"]["dataPayload"] for r in results]

    assert asyncio.run(many()) == [f"p{n}" for n in range(40)]


def test_async_sign_answers_the_challenge(daemon):
    async def sign():
        async with await AsyncClient.connect(daemon.socket) as client:
            return await client.sign("async payload", "Release", user=USER, on_password=lambda c: PASSWORD)

    assert verified(daemon, asyncio.run(sign()).jws)["payload"] == "async payload"


def test_a_timeout_raises_instead_of_hanging(tmp_path):
    """A peer that accepts and never answers (a daemon stuck behind something): the call ends
    with TimeoutError after the client's timeout, sync and async."""
    import socket as sockets
    path = str(tmp_path / "silent.sock")
    silent = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    silent.bind(path)
    silent.listen(4)
    try:
        with Client(path, timeout=1) as client:
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                client.status()
            assert time.monotonic() - started < 10

        async def silent_async():
            async with await AsyncClient.connect(path, timeout=1) as client:
                with pytest.raises(TimeoutError):
                    await client.status()

        asyncio.run(silent_async())
    finally:
        silent.close()


def test_a_retry_after_error_15_signs(daemon):
    """The ledger's database held by another writer longer than the daemon's busy timeout (5 s):
    the signing gets 15, nothing signed, safe to retry; the retry signs."""
    database = sqlite3.connect(os.path.join(daemon.directory, "state", "stepsign.sqlite"), timeout=30,
                               isolation_level=None, check_same_thread=False)
    database.execute("BEGIN EXCLUSIVE")
    released = threading.Timer(8, lambda: database.execute("COMMIT"))
    with Client(daemon.socket, timeout=60) as client:
        before = client.status()["signatures"]
        try:
            released.start()
            with pytest.raises(StepSignError) as busy:
                client.sign("held", "Release", level=0, user=USER)
            assert busy.value.code == Code.INTERNAL_ERROR and busy.value.retryable
        finally:
            released.join()
            database.close()
        signature = None
        for _ in range(5):
            try:
                signature = client.sign("held", "Release", level=0, user=USER)
                break
            except StepSignError as error:
                assert error.retryable
                time.sleep(1)
        assert signature is not None and verified(daemon, signature.jws)["payload"] == "held"
        assert client.status()["signatures"] == before + 1


def test_a_broken_connection_raises_and_a_new_one_works(daemon):
    client = Client(daemon.socket, timeout=30)
    assert client.status()["signatures"] == 0
    daemon.process.send_signal(signal.SIGKILL)
    daemon.process.wait(timeout=30)
    with pytest.raises((ConnectionLost, ConnectionResetError, BrokenPipeError)):
        client.status()
    client.close()

    async def lost():
        restarted = Daemon(daemon.directory)
        try:
            async_client = await AsyncClient.connect(restarted.socket)
            assert (await async_client.status())["version"]
            restarted.process.send_signal(signal.SIGKILL)
            restarted.process.wait(timeout=30)
            with pytest.raises(ConnectionLost):
                await async_client.status()
            await async_client.close()
        finally:
            if restarted.process.poll() is None:
                restarted.stop()

    asyncio.run(lost())


def test_the_package_is_typed_and_clean_under_mypy_strict():
    assert importlib.resources.files(stepsign).joinpath("py.typed").is_file()
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", os.path.join(ROOT, "clients", "python", "src")],
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
