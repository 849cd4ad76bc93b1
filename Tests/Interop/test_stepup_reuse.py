"""SPEC 3.4, the step-up reuse window, through the real CLI and daemon: with `reuse_scope =
"peer"` one `stepsign sign` that steps up lets the next ones of the same uid sign without a
password, each JWS naming the step-up's signature in `stepUp.reusedFrom` (checked with PyJWT
against the published JWKS, and by stepsign-verify), until `reuse_max_uses` is used up; a
password change ends the window."""
import json
import os
import subprocess
import tempfile

import jwt
import pytest

from conftest import BIN, CLI, Daemon, PASSWORD, USER, secret_file

VERIFY = os.path.join(BIN, "stepsign-verify")


# What the CLI says when the daemon asks for a password and it has none and no terminal.
NO_TERMINAL = "stepsign: no terminal to ask for the password on; use --password-file or --password-fd\n"


def run(*args, **kwargs):
    # No terminal (a session of its own, stdin empty): what is not given is not asked for.
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          start_new_session=True, **kwargs)


@pytest.fixture(scope="module")
def daemon():
    with tempfile.TemporaryDirectory() as directory:
        d = Daemon(directory, extra='[stepup]\nreuse_seconds = 600\nreuse_max_uses = 2\nreuse_scope = "peer"\n')
        client = d.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        client.close()
        yield d
        d.stop()


def sign(daemon, payload, *extra):
    return run(CLI, "--socket", daemon.socket, "sign", "--user", USER, "--reason", "reuse", "--payload", payload, *extra)


def claims(daemon, token):
    jwks = json.loads(run(CLI, "--socket", daemon.socket, "keys", "export").stdout)
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(jwt.PyJWK(k) for k in jwks["keys"] if k["kid"] == kid)
    return jwt.decode(token, key=key, algorithms=["ES256"], options={"verify_aud": False})


def test_a_window_covers_the_next_signatures_of_the_uid_and_no_more(daemon, tmp_path):
    password = secret_file(str(tmp_path), "pw", PASSWORD)
    first = sign(daemon, "release 1", "--password-file", password)
    assert first.returncode == 0, first.stderr
    opened = claims(daemon, first.stdout.strip())
    assert "stepUp" not in opened and opened["authenticatorUsed"] == "password"
    for n in (2, 3):
        again = sign(daemon, f"release {n}")
        assert again.returncode == 0, again.stderr
        token = again.stdout.strip()
        reused = claims(daemon, token)
        assert reused["stepUp"] == {"reusedFrom": opened["jti"]}
        assert reused["authenticatorUsed"] == "password" and reused["authLevel"] == 1
        jws_file = tmp_path / f"{n}.jws"
        jws_file.write_text(token)
        keys = tmp_path / "keys.json"
        keys.write_text(run(CLI, "--socket", daemon.socket, "keys", "export").stdout)
        assert run(VERIFY, "--keys", str(keys), str(jws_file)).returncode == 0
    # reuse_max_uses = 2: the next one asks for the password again (none given: it fails).
    used_up = sign(daemon, "release 4")
    assert used_up.returncode == 2 and used_up.stderr == NO_TERMINAL, used_up.stderr


def test_a_password_change_ends_the_window(daemon, tmp_path):
    password = secret_file(str(tmp_path), "pw", PASSWORD)
    assert sign(daemon, "before", "--password-file", password).returncode == 0
    assert sign(daemon, "reused").returncode == 0
    client = daemon.client()
    assert client.call("admin.expirePassword", user=USER)["error"]["code"] == 0
    client.close()
    after = sign(daemon, "after the expiry")
    assert after.returncode == 2 and after.stderr == NO_TERMINAL, after.stderr
