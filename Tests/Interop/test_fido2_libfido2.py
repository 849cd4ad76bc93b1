"""SPEC 5.7 through the CLI's own libfido2 calls: `stepsign device enroll --fido2` and the
step-up answers of `stepsign sign --device-key CREDENTIAL_FILE` reach a software security key
(soft_authenticator.py) over `--fido2-device unix:PATH`, so libfido2 frames CTAPHID, asks
getInfo, makeCredential and getAssertion (and clientPIN with a PIN) and parses the replies,
as it does with a key on USB; the real stepsignd verifies what comes back. A counter that grows
signs each time and a cloned one is refused; an answer without user verification is refused
with status 102; a PIN typed on the terminal verifies the user and appears nowhere else."""
import io
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, Daemon, PASSWORD, secret_file
from soft_authenticator import SoftAuthenticator

CLI = os.path.join(BIN, "stepsign")
USER = "fido"
RP_ID = "stepsign.test"
PIN = "Heron-4711"
APPROVER = "ivy"
APPROVAL = f"""
[[approval]]
reason_prefix = "payment:"
approvers = ["{APPROVER}"]
required = 1
timeout_seconds = 600
"""


@pytest.fixture(scope="module")
def daemon():
    # A short directory: the authenticator's socket path must fit in sun_path.
    directory = tempfile.mkdtemp(prefix="sf", dir="/tmp")
    try:
        daemon = Daemon(directory, extra=f'max_attempts = 100\n[lda]\nfido2_rp_id = "{RP_ID}"\n' + APPROVAL)
        admin = daemon.client()
        for user in (USER, APPROVER):
            assert admin.call("admin.addUser", user=user, password=PASSWORD)["error"]["code"] == 0
        admin.close()
        daemon.password_file = secret_file(directory, "pw", PASSWORD)
        yield daemon
        daemon.stop()
    finally:
        shutil.rmtree(directory)


@pytest.fixture()
def key_dir(daemon):
    directory = tempfile.mkdtemp(prefix="k", dir=daemon.directory)
    yield directory
    shutil.rmtree(directory)


def authenticator(key_dir, **kwargs):
    return SoftAuthenticator(os.path.join(key_dir, "key.sock"), **kwargs)


def cli(daemon, *args):
    return subprocess.run([CLI, "--socket", daemon.socket, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def enroll(daemon, key, credential):
    return cli(daemon, "device", "enroll", "--user", USER, "--fido2", "--fido2-device", key.device, "--rp-id", RP_ID,
               "--credential-file", credential, "--label", "soft key", "--password-file", daemon.password_file)


def sign(daemon, key, credential, payload="release 1.2.3"):
    return cli(daemon, "sign", "--user", USER, "--level", "1", "--reason", "Deploy release", "--payload", payload,
               "--device-key", credential, "--fido2-device", key.device, "--json")


def test_enroll_through_libfido2_then_sign_with_the_security_key(daemon, key_dir):
    key = authenticator(key_dir)
    try:
        credential = os.path.join(key_dir, "key.fido2")
        enrolled = enroll(daemon, key, credential)
        assert enrolled.returncode == 0, enrolled.stderr
        kid = enrolled.stdout.strip()
        assert "makeCredential" in key.requests and "getInfo" in key.requests
        assert len(key.credentials) == 1
        with open(credential) as f:
            written = json.load(f)["fido2"]
        assert written["deviceKeyId"] == kid and written["rpId"] == RP_ID
        assert oct(os.stat(credential).st_mode & 0o777) == "0o600"

        signed = sign(daemon, key, credential)
        assert signed.returncode == 0, signed.stderr
        assert "stepsign-lda-v2" in signed.stderr and "Deploy release" in signed.stderr
        assert "Touch the security key unix:" in signed.stderr
        details = json.loads(signed.stdout)
        assert details["authenticatorUsed"] == "lda"
        assert key.requests[-1] == "getAssertion" and key.counters == [1]
    finally:
        key.close()


def test_the_counter_grows_with_each_signature_and_a_clone_is_refused(daemon, key_dir):
    key = authenticator(key_dir)
    try:
        credential = os.path.join(key_dir, "key.fido2")
        assert enroll(daemon, key, credential).returncode == 0
        for n in range(2):
            signed = sign(daemon, key, credential, payload=f"release {n}")
            assert signed.returncode == 0, signed.stderr
        assert key.counters == [1, 2]
        # A copy of the key taken before the second signature: its counter does not grow.
        key.counter = 1
        cloned = sign(daemon, key, credential, payload="release clone")
        assert cloned.returncode != 0, cloned.stdout
        assert "not accepted: Authentication failed" in cloned.stderr, cloned.stderr  # status 102
        assert key.counters == [1, 2, 2]
        with open(os.path.join(daemon.directory, "stepsignd.log"), "rb") as log:
            assert "possible clone" in log.read().decode(errors="replace")
    finally:
        key.close()


def test_an_answer_without_user_verification_is_refused_with_102(daemon, key_dir):
    honest = authenticator(key_dir)
    try:
        credential = os.path.join(key_dir, "key.fido2")
        assert enroll(daemon, honest, credential).returncode == 0
    finally:
        honest.close()
    # The same credential on a key that claims to verify its user and never does.
    liar = authenticator(key_dir, uv="none")
    liar.credentials, liar.counter = honest.credentials, honest.counter
    try:
        signed = sign(daemon, liar, credential)
        assert signed.returncode != 0, signed.stdout
        assert liar.counters == [1]  # libfido2 asked, the key answered, the daemon refused
        assert "not accepted: Authentication failed" in signed.stderr, signed.stderr  # status 102
        with open(os.path.join(daemon.directory, "stepsignd.log"), "rb") as log:
            assert "lacks user verification (UV)" in log.read().decode(errors="replace")
    finally:
        liar.close()


def test_a_pin_typed_on_the_terminal_verifies_the_user_and_appears_nowhere_else(daemon, key_dir):
    pexpect = pytest.importorskip("pexpect")
    key = authenticator(key_dir, uv="pin", pin=PIN)
    try:
        credential = os.path.join(key_dir, "key.fido2")
        transcript = []
        for args in (["device", "enroll", "--user", USER, "--fido2", "--fido2-device", key.device, "--rp-id", RP_ID,
                      "--credential-file", credential, "--password-file", daemon.password_file],
                     ["sign", "--user", USER, "--level", "1", "--reason", "Deploy release", "--payload", "pinned",
                      "--device-key", credential, "--fido2-device", key.device, "--json"]):
            child = pexpect.spawn(CLI, ["--socket", daemon.socket, *args], encoding="utf-8", timeout=60)
            child.logfile_read = io.StringIO()
            child.expect("PIN of the security key: ")
            child.sendline(PIN)
            child.expect(pexpect.EOF)
            child.close()
            transcript.append(child.logfile_read.getvalue())
            assert child.exitstatus == 0, transcript[-1]
            assert PIN not in " ".join(args)
        # The key refused the uv option, then verified the user with a token got by the PIN.
        assert key.requests.count("clientPIN") >= 2 and key.pin_token is not None
        assert json.loads(transcript[-1][transcript[-1].index("{"):])["authenticatorUsed"] == "lda"
        with open(os.path.join(daemon.directory, "stepsignd.log"), "rb") as log:
            assert PIN.encode() not in log.read()
        assert all(PIN not in text for text in transcript)
    finally:
        key.close()


def test_a_key_that_does_not_answer_is_a_clear_error_and_enrolls_nothing(daemon, key_dir):
    credential = os.path.join(key_dir, "key.fido2")
    missing = "unix:" + os.path.join(key_dir, "nobody.sock")
    enrolled = cli(daemon, "device", "enroll", "--user", USER, "--fido2", "--fido2-device", missing, "--rp-id", RP_ID,
                   "--credential-file", credential, "--password-file", daemon.password_file)
    assert enrolled.returncode == 69, enrolled
    assert f"cannot open the security key {missing}" in enrolled.stderr, enrolled.stderr
    assert not os.path.exists(credential)
    # The option names the key of --fido2; with a public key it is a usage error.
    misused = cli(daemon, "device", "enroll", "--user", USER, "--public-key", daemon.password_file,
                  "--fido2-device", missing)
    assert misused.returncode == 2 and "--fido2-device goes with --fido2" in misused.stderr, misused


def test_an_approver_steps_up_with_the_security_key(daemon, key_dir):
    key = authenticator(key_dir)
    try:
        credential = os.path.join(key_dir, "key.fido2")
        enrolled = cli(daemon, "device", "enroll", "--user", APPROVER, "--fido2", "--fido2-device", key.device,
                       "--rp-id", RP_ID, "--credential-file", credential, "--password-file", daemon.password_file)
        assert enrolled.returncode == 0, enrolled.stderr
        # The requester answers with the password; the request then waits for the approver.
        signer = subprocess.Popen([CLI, "--socket", daemon.socket, "sign", "--user", USER, "--reason", "payment: PO-7",
                                   "--payload", "pay 70 EUR", "--password-file", daemon.password_file],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        try:
            for _ in range(200):
                listed = cli(daemon, "approvals", "--user", APPROVER, "--password-file", daemon.password_file, "--json")
                requests = json.loads(listed.stdout or "[]")
                if requests:
                    break
                time.sleep(0.05)
            assert requests, listed.stderr
            approved = cli(daemon, "approve", requests[0]["approvalID"], "--user", APPROVER, "--password-file",
                           daemon.password_file, "--device-key", credential, "--fido2-device", key.device)
            assert approved.returncode == 0, approved.stderr
            assert "1 of 1, signed" in approved.stdout, approved.stdout
            assert key.counters == [1]
            out, err = signer.communicate(timeout=60)
            assert signer.returncode == 0, err
        finally:
            if signer.poll() is None:
                signer.kill()
                signer.communicate()
    finally:
        key.close()
