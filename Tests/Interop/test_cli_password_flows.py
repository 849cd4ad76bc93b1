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


# Secret files others may open are refused, as ssh refuses a private key (SPEC §8).

@pytest.mark.parametrize("mode,access", [(0o644, "read"), (0o640, "read"), (0o604, "read"), (0o620, "write"),
                                         (0o666, "read and write"), (0o610, "access")])
def test_a_password_file_others_may_open_is_refused(fresh, mode, access):
    daemon, directory = fresh
    path = secret_file(directory, "pw", FIRST)
    os.chmod(path, mode)
    result = cli(daemon, "login", "--user", "carol", "--password-file", path)
    assert result.returncode == 2, result.stderr
    verb = "gives others access to it" if access == "access" else f"lets others {access} it"
    assert f"refusing the password file {path}: mode {mode:04o} {verb}; chmod 600 it" in result.stderr
    assert FIRST not in result.stdout + result.stderr
    # Nothing was sent: no attempt was spent, and the same file at 0600 (or 0400) logs in.
    for private in (0o600, 0o400):
        os.chmod(path, private)
        assert cli(daemon, "login", "--user", "carol", "--password-file", path).returncode == 0


def test_new_password_and_admin_password_files_are_checked_too(fresh):
    daemon, directory = fresh
    current = secret_file(directory, "pw", FIRST)
    new = secret_file(directory, "new", SECOND)
    os.chmod(new, 0o644)
    changed = cli(daemon, "passwd", "--user", "carol", "--password-file", current, "--new-password-file", new)
    assert changed.returncode == 2, changed.stderr
    assert f"refusing the new password file {new}: mode 0644 lets others read it; chmod 600 it" in changed.stderr
    added = cli(daemon, "admin", "user", "add", "--user", "dave", "--password-file", new)
    assert added.returncode == 2, added.stderr
    assert f"refusing the password file {new}: mode 0644" in added.stderr
    assert SECOND not in changed.stdout + changed.stderr + added.stdout + added.stderr
    os.chmod(new, 0o600)
    assert cli(daemon, "admin", "user", "add", "--user", "dave", "--password-file", new).returncode == 0


def test_an_activation_code_file_others_may_read_is_refused(fresh):
    daemon, directory = fresh
    code = secret_file(directory, "code", "00000000")
    os.chmod(code, 0o644)
    new = secret_file(directory, "new", SECOND)
    result = cli(daemon, "forgot-password", "--user", "carol", "--code-file", code, "--new-password-file", new)
    assert result.returncode == 2, result.stderr
    assert f"refusing the activation code file {code}: mode 0644 lets others read it; chmod 600 it" in result.stderr


def test_the_mode_checked_is_the_files_a_link_points_at(fresh):
    """Links are followed (their own mode is always 0777) and the file opened is the one checked."""
    daemon, directory = fresh
    target = secret_file(directory, "pw", FIRST)
    link = os.path.join(directory, "link")
    os.symlink(target, link)
    assert cli(daemon, "login", "--user", "carol", "--password-file", link).returncode == 0
    os.chmod(target, 0o644)
    refused = cli(daemon, "login", "--user", "carol", "--password-file", link)
    assert refused.returncode == 2
    assert f"refusing the password file {link}: mode 0644 lets others read it" in refused.stderr


def test_stdin_and_descriptors_are_not_files_and_stay_allowed(fresh):
    daemon, _ = fresh
    assert cli(daemon, "login", "--user", "carol", "--password-file", "-", input=FIRST + "\n").returncode == 0
    read_end, write_end = os.pipe()
    os.write(write_end, (FIRST + "\n").encode())
    os.close(write_end)
    try:
        result = cli(daemon, "login", "--user", "carol", "--password-fd", str(read_end), pass_fds=[read_end])
    finally:
        os.close(read_end)
    assert result.returncode == 0, result.stderr
