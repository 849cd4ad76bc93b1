"""The CLI's login, passwd and forgot-password flows against a real daemon, scripted with
files and interactive on a pseudo-terminal."""
import json
import os
import tempfile
import time

import pexpect
import pytest

from conftest import CLI, Daemon, cli, secret_file

FIRST = "Amber-Walrus-31"
SECOND = "Cobalt-Heron-64"


@pytest.fixture()
def fresh():
    """A daemon of its own (these tests change passwords) and a user 'carol'."""
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        admin = daemon.client()
        assert admin.call("admin.addUser", user="carol", password=FIRST)["error"]["code"] == 0
        admin.close()
        try:
            yield daemon, directory
        finally:
            daemon.stop()


def test_login_with_a_password_file(fresh):
    daemon, directory = fresh
    ok = cli(daemon, "login", "--user", "carol", "--password-file", secret_file(directory, "pw", FIRST))
    assert ok.returncode == 0, ok.stderr
    assert "logged in as carol" in ok.stdout
    bad = cli(daemon, "login", "--user", "carol", "--password-file", secret_file(directory, "bad", "nope"))
    assert bad.returncode == 1
    assert "2 attempts left" in bad.stderr


def test_passwd_changes_the_password_and_shows_the_policy_in_words(fresh):
    daemon, directory = fresh
    changed = cli(daemon, "passwd", "--user", "carol", "--password-file", secret_file(directory, "pw", FIRST),
                  "--new-password-file", secret_file(directory, "new", SECOND))
    assert changed.returncode == 0, changed.stderr
    assert "Password must be 8 to 64 characters long" in changed.stderr
    assert cli(daemon, "login", "--user", "carol", "--password-file", os.path.join(directory, "new")).returncode == 0
    assert cli(daemon, "login", "--user", "carol", "--password-file", os.path.join(directory, "pw")).returncode == 1


def test_passwd_refuses_a_password_that_breaks_the_policy(fresh):
    daemon, directory = fresh
    refused = cli(daemon, "passwd", "--user", "carol", "--password-file", secret_file(directory, "pw", FIRST),
                  "--new-password-file", secret_file(directory, "new", "nodigits-Here"))
    assert refused.returncode == 1
    assert "minDg" in refused.stderr


def test_login_replaces_an_expired_password(fresh):
    daemon, directory = fresh
    admin = daemon.client()
    assert admin.call("admin.expirePassword", user="carol")["error"]["code"] == 0
    admin.close()
    done = cli(daemon, "login", "--user", "carol", "--password-file", secret_file(directory, "pw", FIRST),
               "--new-password-file", secret_file(directory, "new", SECOND))
    assert done.returncode == 0, done.stderr
    assert "expired" in done.stderr
    assert cli(daemon, "login", "--user", "carol", "--password-file", os.path.join(directory, "new")).returncode == 0


def test_forgot_password_with_the_delivered_code(fresh):
    daemon, directory = fresh
    child = pexpect.spawn(CLI, ["--socket", daemon.socket, "forgot-password", "--user", "carol",
                                "--new-password-file", secret_file(directory, "new", SECOND)],
                          timeout=30, encoding="utf-8")
    child.expect('verification key "([^"]+)"')
    key = child.match.group(1)
    child.expect("Activation code: ")
    outbox = os.path.join(directory, "state", "outbox", "carol")
    # The code is delivered after the reply (SPEC §5.1): wait for it, as a user waits for mail.
    deadline = time.monotonic() + 10
    while not (os.path.exists(outbox) and open(outbox).read().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.02)
    message = json.loads(open(outbox).read().strip().split("\n")[-1])
    assert message["user"] == "carol"
    assert message["verificationKey"] == key
    child.sendline(message["activationCode"])
    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    assert child.exitstatus == 0, output
    assert message["activationCode"] not in output
    assert cli(daemon, "login", "--user", "carol", "--password-file", os.path.join(directory, "new")).returncode == 0
    log = open(os.path.join(directory, "stepsignd.log")).read()
    assert message["activationCode"] not in log
    assert SECOND not in log and FIRST not in log


def test_admin_user_list_expire_remove(fresh):
    daemon, _ = fresh
    listed = cli(daemon, "admin", "user", "list", "--json")
    assert listed.returncode == 0
    users = json.loads(listed.stdout)
    assert [u["user"] for u in users] == ["carol"]
    assert users[0]["passwordExpired"] is False
    assert cli(daemon, "admin", "user", "expire", "--user", "carol").returncode == 0
    assert json.loads(cli(daemon, "admin", "user", "list", "--json").stdout)[0]["passwordExpired"] is True
    assert cli(daemon, "admin", "user", "remove", "--user", "carol").returncode == 0
    assert json.loads(cli(daemon, "admin", "user", "list", "--json").stdout) == []
