"""The CLI's rough edges of issue #13, each against a real daemon: refused peers, both paths of
forgot password, secrets from stdin, one output convention and one exit-status convention."""
import json
import re
import os
import shutil
import subprocess
import tempfile
import time

import pexpect
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import BIN, CLI, Client, Daemon, cli, secret_file

VERIFY = os.path.join(BIN, "stepsign-verify")
FIRST = "Amber-Walrus-31"
SECOND = "Cobalt-Heron-64"
SETPRIV = shutil.which("setpriv")
NOBODY = 65534


@pytest.fixture()
def fresh():
    """A daemon of its own and a user 'erin'."""
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        admin = daemon.client()
        assert admin.call("admin.addUser", user="erin", password=FIRST)["error"]["code"] == 0
        admin.close()
        try:
            yield daemon, directory
        finally:
            daemon.stop()


def enroll_device(daemon, directory, user="erin"):
    """A P-256 key made by cryptography, enrolled for `user`; returns its PKCS#8 PEM file."""
    key = ec.generate_private_key(ec.SECP256R1())
    path = os.path.join(directory, "device.pem")
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    os.chmod(path, 0o600)  # stepsign refuses a private key others can read
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    admin = daemon.client()
    assert admin.call("admin.enrollDeviceKey", user=user, publicKey=public.decode(), label="t")["error"]["code"] == 0
    admin.close()
    return path


def outbox_codes(directory, user="erin"):
    path = os.path.join(directory, "state", "outbox", user)
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path).read().split("\n") if line.strip()]


def wait_for_code(directory, count=1):
    deadline = time.time() + 30
    while time.time() < deadline:
        codes = outbox_codes(directory)
        if len(codes) >= count:
            return codes[count - 1]
        time.sleep(0.05)
    raise AssertionError("no activation code delivered")


# 1. A refused peer always gets the daemon's message.

@pytest.mark.skipif(os.getuid() != 0 or SETPRIV is None, reason="needs root and setpriv to run the CLI as uid 65534")
def test_a_refused_peer_gets_the_daemons_message_every_time():
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        daemon = Daemon(directory, server='socket_mode = "0666"')
        try:
            for run in range(40):
                result = subprocess.run([SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                                         CLI, "--socket", daemon.socket, "status"],
                                        capture_output=True, text=True, timeout=60)
                assert "error 13: this peer may not use stepsignd" in result.stderr, (run, result.stderr)
                assert "Broken pipe" not in result.stderr
                assert result.returncode == 1, (run, result.returncode)
        finally:
            daemon.stop()


@pytest.mark.skipif(os.getuid() != 0 or SETPRIV is None, reason="needs root and setpriv to run the CLI as uid 65534")
def test_a_user_outside_the_sockets_group_is_told_why():
    """Issue 27: a user not (yet) in group stepsign got only "Permission denied"."""
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        daemon = Daemon(directory)  # socket_mode 0660
        try:
            result = subprocess.run([SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                                     CLI, "--socket", daemon.socket, "status"], capture_output=True, text=True, timeout=60)
            assert result.returncode == 1
            assert "Permission denied" in result.stderr and "not in group stepsign?" in result.stderr, result.stderr
            assert "log in again" in result.stderr
        finally:
            daemon.stop()


def test_too_many_connections_gets_the_daemons_message_every_time():
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory, server="max_connections_per_uid = 1")
        holder = None
        try:
            # The start-up probe's connection may not be counted out yet: take the one place.
            deadline = time.time() + 10
            while holder is None:
                candidate = Client(daemon.socket)
                try:
                    candidate.sock.sendall(b'{"id":1,"op":"status"}\n')
                except OSError:
                    pass  # refused and closed already: its line is still there to read
                reply = json.loads(candidate.file.readline())
                if reply["error"]["code"] == 0:
                    holder = candidate
                else:
                    candidate.close()
                    assert time.time() < deadline, reply
                    time.sleep(0.05)
            for run in range(40):
                result = cli(daemon, "status")
                assert "error 14: too many connections of this uid" in result.stderr, (run, result.stderr)
                assert result.returncode == 1
        finally:
            try:
                if holder is not None:
                    holder.close()
            finally:
                daemon.stop()


# 2. forgot-password: both paths, and only options that exist.

def test_forgot_password_path_a_with_the_device_key(fresh):
    daemon, directory = fresh
    device = enroll_device(daemon, directory)
    process = subprocess.Popen([CLI, "--socket", daemon.socket, "forgot-password", "--user", "erin",
                                "--code-file", "-", "--device-key", device],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        code = wait_for_code(directory)["activationCode"]
        out, err = process.communicate(code + "\n", timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "logged in with the device key" in out
    assert "Device challenge to sign:" in err and "Log in with a device key" in err
    assert code not in out + err
    # Path A leaves the password as it was.
    assert cli(daemon, "login", "--user", "erin", "--password-file", secret_file(directory, "pw", FIRST)).returncode == 0


@pytest.mark.parametrize("decline", [["--decline-device"], []])
def test_forgot_password_path_b_for_a_user_with_a_device_key(fresh, decline):
    daemon, directory = fresh
    enroll_device(daemon, directory)
    new = secret_file(directory, "new", SECOND)
    read_end, write_end = os.pipe()
    process = subprocess.Popen([CLI, "--socket", daemon.socket, "forgot-password", "--user", "erin",
                                "--code-fd", str(read_end), "--new-password-file", new, *decline],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, pass_fds=[read_end])
    os.close(read_end)
    try:
        code = wait_for_code(directory)["activationCode"]
        os.write(write_end, (code + "\n").encode())
        os.close(write_end)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "password reset for erin" in out
    assert "getUserConsentForLDA" not in err
    assert cli(daemon, "login", "--user", "erin", "--password-file", new).returncode == 0


def test_forgot_password_device_key_and_decline_together_is_a_usage_error(fresh):
    daemon, directory = fresh
    result = cli(daemon, "forgot-password", "--user", "erin", "--device-key", "/nonexistent", "--decline-device")
    assert result.returncode == 2
    assert "--device-key" in result.stderr and "--decline-device" in result.stderr
    assert outbox_codes(directory) == []


def test_forgot_password_without_a_terminal_names_only_options_that_exist(fresh):
    daemon, directory = fresh
    result = subprocess.run([CLI, "--socket", daemon.socket, "forgot-password", "--user", "erin"],
                            capture_output=True, text=True, timeout=60, start_new_session=True,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result.stderr
    assert outbox_codes(directory) == [], "no code may be spent before the CLI knows it can read it"
    named = {word.strip(",.;:()") for word in result.stderr.split() if word.startswith("--")}
    assert named, result.stderr
    help_text = subprocess.run([CLI, "forgot-password", "--help"], capture_output=True, text=True).stdout
    for option in named:
        assert option in help_text, f"{option} is suggested but does not exist"


def test_forgot_password_says_a_code_was_sent_once(fresh):
    daemon, directory = fresh
    child = pexpect.spawn(CLI, ["--socket", daemon.socket, "forgot-password", "--user", "erin",
                                "--new-password-file", secret_file(directory, "new", SECOND)],
                          timeout=30, encoding="utf-8")
    seen = []
    try:
        child.expect("Activation code: ")
        seen.append(child.before)
        child.sendline("WRONG-CODE-1")
        child.expect("Activation code: ")
        seen.append(child.before)
        child.sendline(wait_for_code(directory)["activationCode"])
        child.expect(pexpect.EOF)
        seen.append(child.before)
    finally:
        child.close(force=True)
    transcript = "".join(seen)
    assert child.exitstatus == 0, transcript
    assert transcript.count("was sent") == 1, transcript
    assert "2 attempts left" in seen[1] or "attempts left" in seen[1], seen[1]


# 3. A wrong password is reported once.

def test_login_with_a_wrong_password_says_so_once(fresh):
    daemon, directory = fresh
    bad = cli(daemon, "login", "--user", "erin", "--password-file", secret_file(directory, "bad", "nope"))
    assert bad.returncode == 1
    assert bad.stderr.count("attempts left") == 1, bad.stderr


# 4. Two payload sources are a usage error.

def test_sign_refuses_payload_and_payload_file_together(fresh):
    daemon, directory = fresh
    result = cli(daemon, "sign", "--user", "erin", "--level", "0", "--reason", "r", "--payload", "a",
                 "--payload-file", secret_file(directory, "payload", "b"))
    assert result.returncode == 2, result.stderr
    assert "--payload" in result.stderr and "--payload-file" in result.stderr
    assert result.stdout == ""


# 5. "-" reads a secret from stdin.

def test_password_file_dash_reads_stdin(fresh):
    daemon, directory = fresh
    assert cli(daemon, "login", "--user", "erin", "--password-file", "-", input=FIRST + "\n").returncode == 0
    signed = cli(daemon, "sign", "--user", "erin", "--reason", "r", "--payload", "p", "--password-file", "-",
                 input=FIRST + "\n")
    assert signed.returncode == 0, signed.stderr
    assert signed.stdout.strip().count(".") == 2
    added = cli(daemon, "admin", "user", "add", "--user", "fred", "--password-file", "-", input=SECOND + "\n")
    assert added.returncode == 0, added.stderr
    # Two secrets from stdin: one line each, in the order they are asked for.
    changed = cli(daemon, "passwd", "--user", "fred", "--password-file", "-", "--new-password-file", "-",
                  input=SECOND + "\n" + FIRST + "\n")
    assert changed.returncode == 0, changed.stderr
    assert cli(daemon, "login", "--user", "fred", "--password-fd", "0", input=FIRST + "\n").returncode == 0


def test_sign_refuses_a_secret_on_stdin_when_stdin_is_the_payload(fresh):
    daemon, _ = fresh
    result = cli(daemon, "sign", "--user", "erin", "--reason", "r", "--password-file", "-", input="payload\n")
    assert result.returncode == 2
    assert "stdin" in result.stderr


# 6. stepsign-verify takes a JWS, @FILE or a readable path, and says which.

def test_verify_takes_a_file_and_says_so(fresh):
    daemon, directory = fresh
    token = cli(daemon, "sign", "--user", "erin", "--level", "0", "--reason", "r", "--payload", "p").stdout.strip()
    keys = os.path.join(directory, "jwks.json")
    with open(keys, "w") as f:
        f.write(cli(daemon, "keys", "export", "--jwks").stdout)
    path = os.path.join(directory, "signature.jws")
    with open(path, "w") as f:
        f.write(token + "\n")
    for argument in (path, "@" + path):
        result = subprocess.run([VERIFY, "--keys", keys, "--min-level", "0", argument], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"JWS read from the file {path}" in result.stderr
        report = json.loads(subprocess.run([VERIFY, "--keys", keys, "--min-level", "0", "--json", argument],
                                           capture_output=True, text=True).stdout)
        assert report["valid"] is True and report["source"] == "file" and report["file"] == path
    direct = subprocess.run([VERIFY, "--keys", keys, "--min-level", "0", "--json", token], capture_output=True, text=True)
    report = json.loads(direct.stdout)
    assert report["source"] == "argument" and report["file"] is None and report["reason"] is None
    missing = subprocess.run([VERIFY, "--keys", keys, "@" + path + ".missing"], capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    mistyped = subprocess.run([VERIFY, "--keys", keys, path + ".missing"], capture_output=True, text=True)
    assert mistyped.returncode == 2
    assert "the argument was taken as a JWS: no readable file has that name" in mistyped.stderr, mistyped.stderr
    piped = subprocess.run([VERIFY, "--keys", keys, "--min-level", "0", "--json", "@-"], input=token, capture_output=True, text=True)
    assert json.loads(piped.stdout)["source"] == "stdin"


# 7. Help says the default once.

def test_keys_export_help_names_the_default_once():
    text = subprocess.run([CLI, "keys", "export", "--help"], capture_output=True, text=True).stdout
    assert text.count("(default: --jwks)") == 1, text


# 8. Admin user commands take --user like the client commands.

def test_admin_user_commands_take_user(fresh):
    daemon, directory = fresh
    pw = secret_file(directory, "pw", SECOND)
    assert cli(daemon, "admin", "user", "add", "--user", "gus", "--password-file", pw).returncode == 0
    assert cli(daemon, "admin", "user", "expire", "--user", "gus").returncode == 0
    assert cli(daemon, "admin", "user", "unlock", "--user", "gus").returncode == 0
    users = json.loads(cli(daemon, "admin", "user", "list", "--json").stdout)
    assert {u["user"]: u["passwordExpired"] for u in users} == {"erin": False, "gus": True}
    assert cli(daemon, "admin", "user", "remove", "--user", "gus").returncode == 0
    assert [u["user"] for u in json.loads(cli(daemon, "admin", "user", "list", "--json").stdout)] == ["erin"]
    positional = cli(daemon, "admin", "user", "remove", "erin")
    assert positional.returncode == 2


def test_key_revoke_takes_a_kid_that_begins_with_a_dash(fresh):
    """A kid is base64url: one in 64 begins with '-'. Copied from `admin key list`, it must
    reach the daemon (which does not know this one), not be read as an unknown option."""
    daemon, _ = fresh
    result = cli(daemon, "admin", "key", "revoke", "-Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg")
    assert result.returncode == 1, result.stderr
    assert "Missing expected argument" not in result.stderr
    assert "admin.revokeKey" in result.stderr or "kid" in result.stderr, result.stderr
    assert cli(daemon, "admin", "key", "revoke").returncode == 2
    assert cli(daemon, "admin", "key", "revoke", "kid-one", "kid-two").returncode == 2


# 9. One output convention: prose by default, --json for machines, the same fields everywhere.

def test_prose_by_default_and_json_on_request(fresh):
    daemon, _ = fresh
    status = cli(daemon, "status")
    assert status.returncode == 0
    assert status.stdout.startswith("stepsignd ") and "{" not in status.stdout, status.stdout
    assert set(json.loads(cli(daemon, "status", "--json").stdout)) == {"version", "uptimeSeconds", "activeKid", "signatures"}
    users = cli(daemon, "admin", "user", "list")
    assert "erin" in users.stdout and "[" not in users.stdout, users.stdout
    keys = cli(daemon, "admin", "key", "list")
    assert "active" in keys.stdout and "[" not in keys.stdout, keys.stdout
    listed = json.loads(cli(daemon, "admin", "key", "list", "--json").stdout)
    rotated = cli(daemon, "admin", "key", "rotate", "--json")
    assert json.loads(rotated.stdout)["activeKid"] not in [k["kid"] for k in listed]
    assert cli(daemon, "admin", "key", "rotate").stdout.startswith("active key ")


DEBUG_TEXT = re.compile(r"\b(string|int|double|bool|object|array|Optional)\(")


def test_human_output_is_plain_text_never_the_clients_own_representation(fresh):
    """Issue 27: `stepsign status` printed `stepsignd string("0.1.0")` and `int(1) signatures`.
    Golden lines for status; and no command's human output or message carries Swift's debug text."""
    daemon, directory = fresh
    status = cli(daemon, "status")
    lines = status.stdout.splitlines()
    assert re.fullmatch(r"stepsignd \d+\.\d+\.\d+(-\S+)?, up (\d+[dhm] )*\d+s", lines[0]), status.stdout
    assert re.fullmatch(r"active key [A-Za-z0-9_-]{43}", lines[1]), status.stdout
    assert re.fullmatch(r"\d+ signatures?", lines[2]), status.stdout
    password = secret_file(directory, "pw", FIRST)
    wrong = secret_file(directory, "wrong", "Not-The-Password-1")
    outputs = [
        status,
        cli(daemon, "admin", "user", "list"),
        cli(daemon, "admin", "key", "list"),
        cli(daemon, "admin", "group", "list"),
        cli(daemon, "admin", "group", "add", "--group", "ops", "--user", "erin"),
        cli(daemon, "admin", "group", "list"),
        cli(daemon, "approvals", "--user", "erin", "--password-file", password),
        cli(daemon, "sign", "--user", "erin", "--reason", "r", "--payload", "p", "--password-file", wrong),
        cli(daemon, "sign", "--user", "nobody-here", "--level", "2", "--reason", "r", "--payload", "p"),
        cli(daemon, "admin", "audit", "verify"),
    ]
    for result in outputs:
        text = result.stdout + result.stderr
        assert not DEBUG_TEXT.search(text), f"{result.args}: {text}"
    assert cli(daemon, "admin", "group", "list").stdout.strip() == "ops: erin"
    backup = cli(daemon, "admin", "backup", "--to", os.path.join(directory, "copy.sqlite"))
    assert backup.returncode == 0 and not DEBUG_TEXT.search(backup.stdout + backup.stderr), backup
    made, keep, never = backup.stdout.splitlines()
    assert re.fullmatch(rf"backup written to {re.escape(directory)}/copy\.sqlite: \d+ ledger entr(y|ies), \d+ bytes", made)
    assert re.fullmatch(r"keep with it, from the state directory: (keys/\S+ )*keys/seal\.key( keys/\S+)*", keep), keep
    assert never == "never restore keys/log-checkpoint from a copy: it shows what a restore lost"
    refused = outputs[7]
    assert refused.returncode == 1 and refused.stderr == "stepsign: Authentication failed, 2 attempts left\n", refused.stderr


def test_audit_verify_and_verify_ledger_report_the_same_fields(fresh):
    daemon, directory = fresh
    assert cli(daemon, "sign", "--user", "erin", "--level", "0", "--reason", "r", "--payload", "p").returncode == 0
    prose = cli(daemon, "admin", "audit", "verify")
    # The signature, and the events of SPEC §5.4 before it (the daemon's start, erin added).
    assert prose.returncode == 0 and prose.stdout.startswith("ledger ok: ") and "(1 signature, " in prose.stdout, prose.stdout
    daemon_report = json.loads(cli(daemon, "admin", "audit", "verify", "--json").stdout)
    ledger = os.path.join(directory, "ledger.jsonl")
    with open(ledger, "w") as f:
        f.write(cli(daemon, "admin", "audit", "export").stdout)
    keys = os.path.join(directory, "jwks.json")
    with open(keys, "w") as f:
        f.write(cli(daemon, "keys", "export", "--jwks").stdout)
    offline = subprocess.run([VERIFY, "ledger", ledger, "--keys", keys, "--json"], capture_output=True, text=True)
    assert offline.returncode == 0, offline.stderr
    offline_report = json.loads(offline.stdout)
    assert set(daemon_report) == set(offline_report) == {"ok", "entries", "firstBadSeq", "checkpoints", "problem", "events"}
    assert daemon_report["firstBadSeq"] is None and offline_report["firstBadSeq"] is None
    assert daemon_report["problem"] is None and offline_report["problem"] is None
    assert daemon_report["ok"] is offline_report["ok"] is True
    assert daemon_report["entries"] == offline_report["entries"] == 1 + daemon_report["events"]
    assert daemon_report["events"] == offline_report["events"] >= 3


# 10. One exit-status convention: 0 done, 1 refused or invalid, 2 usage or bad input.

def test_exit_status_convention_is_shared_and_documented(fresh):
    daemon, directory = fresh
    assert cli(daemon, "sign", "--no-such-option").returncode == 2
    assert cli(daemon, "admin", "user", "add").returncode == 2
    both = cli(daemon, "login", "--user", "erin", "--password-file", "-", "--password-fd", "0")
    assert both.returncode == 2 and "--password-file and --password-fd cannot be used together" in both.stderr
    assert cli(daemon, "sign", "--user", "erin", "--reason", "r", "--payload-file", "/nonexistent").returncode == 2
    assert cli(daemon, "admin", "user", "remove", "--user", "nobody-here").returncode == 1
    assert subprocess.run([VERIFY, "--no-such-option"], capture_output=True).returncode == 2
    for tool in (CLI, VERIFY):
        text = subprocess.run([tool, "--help"], capture_output=True, text=True).stdout
        words = " ".join(text.split())
        assert "Exit status: 0" in words and "2 usage error or bad input" in words, text


@pytest.mark.parametrize("args", [
    ["login", "--user", "erin"],
    ["passwd", "--user", "erin"],
    ["sign", "--user", "erin", "--reason", "r", "--payload", "p"],
    ["admin", "user", "add", "--user", "hal"],
    ["device", "enroll", "--user", "erin", "--public-key", "PUBLIC"],
])
def test_without_a_terminal_every_suggestion_names_an_option_of_that_command(fresh, args):
    daemon, directory = fresh
    args = [secret_file(directory, "public.pem", "not read before the login") if a == "PUBLIC" else a for a in args]
    result = subprocess.run([CLI, "--socket", daemon.socket, *args], capture_output=True, text=True, timeout=60,
                            start_new_session=True, stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result
    assert re.fullmatch(r"stepsign: no terminal to ask for the [a-z ]+ on; use .+\n", result.stderr), result.stderr
    named = {word.strip(",.;:()") for word in result.stderr.split() if word.startswith("--")}
    assert named, result.stderr
    help_text = subprocess.run([CLI, *args[:args.index("--user")], "--help"], capture_output=True, text=True).stdout
    for option in named:
        assert option in help_text, f"{option} is suggested by {args[0]} but does not exist"


def test_forgot_password_on_a_terminal_asks_whether_to_use_the_device_key(fresh):
    daemon, directory = fresh
    enroll_device(daemon, directory)
    child = pexpect.spawn(CLI, ["--socket", daemon.socket, "forgot-password", "--user", "erin"],
                          timeout=30, encoding="utf-8")
    try:
        child.expect("Activation code: ")
        child.sendline(wait_for_code(directory)["activationCode"])
        child.expect("erin has a device key")
        child.expect(r"\(empty: set a new password\): ")
        child.sendline("")
        child.expect("New password: ")
        child.sendline(SECOND)
        child.expect("New password again: ")
        child.sendline(SECOND)
        child.expect(pexpect.EOF)
        output = child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, output
    assert "password reset for erin" in output
    assert cli(daemon, "login", "--user", "erin", "--password-file", secret_file(directory, "new", SECOND)).returncode == 0
