"""The CLI answering device-key (LDA) and IDV challenges, with keys and assertions made by
tools nobody here wrote: cryptography for the device, PyJWT for the IDV server."""
import os
import re
import subprocess
import sys
import tempfile
import textwrap

import pytest

from conftest import BIN, Daemon, secret_file, write_key_pair

CLI = os.path.join(BIN, "stepsign")
VERIFY = os.path.join(BIN, "stepsign-verify")
PASSWORD = "Maple-Ferret-92"
ISSUER = "https://idv.example.test"


@pytest.fixture()
def setup():
    """A daemon with IDV configured, a user 'dana', a device key and an IDV key on disk."""
    with tempfile.TemporaryDirectory() as directory:
        _, idv_private, idv_public = write_key_pair(directory, "idv")
        _, device_private, device_public = write_key_pair(directory, "device")
        # The IDV "server": given the nonce and the challenge, it decodes the operation text
        # (what a real one shows the person), checks it carries that nonce, and PyJWT signs an
        # assertion bound to it: txn = base64url(SHA-256(text)) (SPEC §3.2).
        idv_command = os.path.join(directory, "idv-assert")
        with open(idv_command, "w") as f:
            f.write(textwrap.dedent(f"""\
                #!{sys.executable}
                import base64, hashlib, sys, time, jwt
                nonce, challenge = sys.argv[1], sys.argv[2]
                text = base64.urlsafe_b64decode(challenge + "=" * (-len(challenge) % 4))
                lines = text.decode().split("\\n")
                assert lines[0] == "stepsign-idv-v1" and lines[1] == nonce, lines
                print("showing:", lines[2:], file=sys.stderr)
                txn = base64.urlsafe_b64encode(hashlib.sha256(text).digest()).rstrip(b"=").decode()
                key = open({idv_private!r}).read()
                now = int(time.time())
                print(jwt.encode({{"iss": {ISSUER!r}, "sub": "dana", "nonce": nonce, "txn": txn, "iat": now,
                                  "exp": now + 120, "result": "match"}}, key, algorithm="ES256"))
                """))
        os.chmod(idv_command, 0o755)
        daemon = Daemon(directory, extra=f'[idv]\nissuer = "{ISSUER}"\ntrusted_keys = "{idv_public}"\n')
        admin = daemon.client()
        assert admin.call("admin.addUser", user="dana", password=PASSWORD)["error"]["code"] == 0
        admin.close()
        password_file = secret_file(directory, "pw", PASSWORD)
        yield {"daemon": daemon, "dir": directory, "device": device_private, "device_public": device_public,
               "idv_command": idv_command, "password_file": password_file}
        daemon.stop()


def cli(setup, *args):
    return subprocess.run([CLI, "--socket", setup["daemon"].socket, *args], capture_output=True, text=True, timeout=60)


def verify(setup, token, *args):
    keys = os.path.join(setup["dir"], "jwks.json")
    with open(keys, "w") as f:
        f.write(cli(setup, "keys", "export", "--jwks").stdout)
    return subprocess.run([VERIFY, "--keys", keys, "--json", *args, token], capture_output=True, text=True)


def test_device_enroll_then_sign_with_the_device_key(setup):
    enrolled = cli(setup, "device", "enroll", "--user", "dana", "--public-key", setup["device_public"],
                   "--label", "laptop", "--password-file", setup["password_file"])
    assert enrolled.returncode == 0, enrolled.stderr
    kid = enrolled.stdout.strip()
    signed = cli(setup, "sign", "--user", "dana", "--level", "1", "--reason", "Deploy release",
                 "--payload", "release 1.2.3", "--device-key", setup["device"], "--json")
    assert signed.returncode == 0, signed.stderr
    assert "Device challenge to sign:" in signed.stderr
    assert "stepsign-lda-v2" in signed.stderr and "Deploy release" in signed.stderr
    import json
    details = json.loads(signed.stdout)
    assert details["authenticatorUsed"] == "lda"
    checked = verify(setup, details["payloadSignature"], "--payload", "release 1.2.3", "--user", "dana")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert kid


def test_sign_without_the_device_key_falls_back_to_the_password(setup):
    assert cli(setup, "device", "enroll", "--user", "dana", "--public-key", setup["device_public"],
               "--password-file", setup["password_file"]).returncode == 0
    signed = cli(setup, "sign", "--user", "dana", "--level", "1", "--reason", "r", "--payload", "p",
                 "--password-file", setup["password_file"], "--json")
    assert signed.returncode == 0, signed.stderr
    assert '"authenticatorUsed":"password"' in signed.stdout.replace(" ", "")


def test_a_device_key_that_is_not_enrolled_is_refused_by_the_cli(setup):
    enrolled_pub = setup["device_public"]
    enrolled = cli(setup, "device", "enroll", "--user", "dana", "--public-key", enrolled_pub,
                   "--password-file", setup["password_file"])
    assert enrolled.returncode == 0, enrolled.stderr
    kid = enrolled.stdout.strip()
    _, path, _ = write_key_pair(setup["dir"], "other")
    signed = cli(setup, "sign", "--user", "dana", "--level", "1", "--reason", "r", "--payload", "p", "--device-key", path)
    assert signed.returncode == 1 and signed.stdout == "", signed
    # The other key's kid (its thumbprint) and the one the daemon offered, the enrolled key's.
    assert re.fullmatch(rf"stepsign: the key in {re.escape(path)} \([A-Za-z0-9_-]{{43}}\) is not one of the user's device "
                        rf"keys: {re.escape(kid)}\n", signed.stderr), signed.stderr


def test_level_4_with_an_idv_assertion_made_by_pyjwt(setup):
    import json
    signed = cli(setup, "sign", "--user", "dana", "--level", "4", "--type", "1", "--reason", "High value",
                 "--payload", "wire 1,000,000 EUR", "--idv-command", setup["idv_command"], "--json")
    assert signed.returncode == 0, signed.stderr
    details = json.loads(signed.stdout)
    assert details["authLevel"] == 4
    assert details["authenticatorUsed"] == "idv-biometric"
    checked = verify(setup, details["payloadSignature"], "--user", "dana")
    assert checked.returncode == 0
    assert json.loads(checked.stdout)["claims"]["authLevel"] == 4


def test_a_device_key_others_may_read_is_refused(setup):
    """As ssh refuses a private key (SPEC §8): exit 2 naming the file and its mode, the key unprinted."""
    assert cli(setup, "device", "enroll", "--user", "dana", "--public-key", setup["device_public"],
               "--password-file", setup["password_file"]).returncode == 0
    path = setup["device"]
    for mode, verb in [(0o644, "lets others read it"), (0o660, "lets others read and write it")]:
        os.chmod(path, mode)
        signed = cli(setup, "sign", "--user", "dana", "--level", "1", "--reason", "r", "--payload", "p",
                     "--device-key", path)
        assert signed.returncode == 2, signed.stderr
        assert f"refusing the device key {path}: mode {mode:04o} {verb}; chmod 600 it" in signed.stderr
        assert "PRIVATE KEY" not in signed.stdout + signed.stderr
        assert signed.stdout == ""
    os.chmod(path, 0o600)
    signed = cli(setup, "sign", "--user", "dana", "--level", "1", "--reason", "r", "--payload", "p", "--device-key", path)
    assert signed.returncode == 0, signed.stderr
