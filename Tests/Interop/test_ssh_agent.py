"""The SSH agent (SPEC §3.5, issue 42) with stock tools only: ssh-add, ssh-keygen -Y and git sign
through `[ssh_agent] socket` after `stepsign unlock`, every signature is in the ledger, and the
agent refuses (SSH_AGENT_FAILURE, "agent refused operation", a log line saying why) before an
unlock, after `stepsign lock`, a logOff or a password change, for another uid, for a foreign
namespace and for an SSH login's session data."""
import base64
import fcntl
import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import termios
import time

import pytest

from conftest import CLI, PASSWORD, USER, Daemon, cli, secret_file

NOBODY = 65534
PRINCIPAL = "dev@stepsign.invalid"
SETPRIV = shutil.which("setpriv")

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None or shutil.which("git") is None,
                                reason="needs openssh-client and git (scripts/setup installs them)")


def claims(jws):
    payload = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Agent:
    """A daemon with the SSH agent on, its user, and a world-readable work directory (another uid
    runs the tools there too)."""

    def __init__(self, directory, agent_extra=""):
        os.chmod(directory, 0o755)
        self.directory = directory
        self.socket = os.path.join(directory, "agent.sock")
        try:
            self.daemon = Daemon(directory, server='socket_mode = "0666"', client_uids=[NOBODY],
                                 extra=f'[ssh_agent]\nsocket = "{self.socket}"\n' + agent_extra)
        except AssertionError:
            print(self.log())
            raise
        admin = self.daemon.client()
        for user in (USER, "changer"):
            assert admin.call("admin.addUser", user=user, password=PASSWORD)["error"]["code"] == 0
        admin.close()
        self.password_file = secret_file(directory, "password", PASSWORD)
        self.work = os.path.join(directory, "work")
        os.mkdir(self.work)
        os.chmod(self.work, 0o777)
        exported = cli(self.daemon, "keys", "export", "--ssh")
        assert exported.returncode == 0, exported.stderr
        self.public_key_line = exported.stdout.strip()
        self.public_key = os.path.join(self.work, "stepsign.pub")
        with open(self.public_key, "w") as f:
            f.write(self.public_key_line + "\n")
        signers = cli(self.daemon, "keys", "export", "--ssh-allowed-signers", PRINCIPAL)
        assert signers.returncode == 0, signers.stderr
        self.allowed_signers = os.path.join(self.work, "allowed_signers")
        with open(self.allowed_signers, "w") as f:
            f.write(signers.stdout)
        for path in (self.public_key, self.allowed_signers):
            os.chmod(path, 0o644)

    def env(self):
        return {**os.environ, "SSH_AUTH_SOCK": self.socket}

    def unlock(self, user=USER, *more):
        result = cli(self.daemon, "unlock", "--user", user, "--level", "1", "--password-file", self.password_file, *more)
        assert result.returncode == 0, result.stderr
        return result

    def lock(self):
        assert cli(self.daemon, "lock").returncode == 0

    def sign_file(self, text, namespace="file", prefix=()):
        """`ssh-keygen -Y sign` of a new file holding `text` through the agent: the result, and
        the file's path (its signature is PATH.sig)."""
        path = tempfile.mktemp(dir=self.work, suffix=".txt")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        result = subprocess.run([*prefix, "ssh-keygen", "-Y", "sign", "-f", self.public_key, "-n", namespace, path],
                                capture_output=True, text=True, timeout=60, env=self.env())
        return result, path

    def verify_file(self, path, namespace="file"):
        with open(path, "rb") as message:
            return subprocess.run(["ssh-keygen", "-Y", "verify", "-f", self.allowed_signers, "-I", PRINCIPAL,
                                   "-n", namespace, "-s", path + ".sig"], stdin=message, capture_output=True, text=True,
                                  timeout=60)

    def log(self):
        with open(os.path.join(self.directory, "stepsignd.log"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def ledger(self):
        admin = self.daemon.client()
        try:
            reply = admin.call("admin.exportLedger", afterSeq=0, limit=10000)
            assert reply["error"]["code"] == 0, reply
            return [claims(entry["payloadSignature"]) for entry in reply["result"]["entries"]]
        finally:
            admin.close()

    def assert_refused(self, result, why):
        assert result.returncode != 0, result
        assert "agent refused operation" in result.stderr, result.stderr
        deadline = time.time() + 10
        while time.time() < deadline:
            if any("ssh-agent refused" in line and why in line for line in self.log().splitlines()):
                return
            time.sleep(0.05)
        raise AssertionError(f"no log line saying {why!r}:\n" + "\n".join(
            line for line in self.log().splitlines() if "ssh-agent" in line))

    def stop(self):
        self.daemon.stop()


@pytest.fixture(scope="module")
def agent():
    with tempfile.TemporaryDirectory() as directory:
        a = Agent(directory)
        yield a
        a.stop()


def git(repository, *args, env=None, check=True):
    result = subprocess.run(["git", "-C", repository, *args], capture_output=True, text=True, timeout=300,
                            env=env)
    if check:
        assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def new_repository(agent):
    repository = tempfile.mkdtemp(dir=agent.work)
    env = {**agent.env(), "GIT_CONFIG_NOSYSTEM": "1", "HOME": agent.work}
    git(repository, "init", "-q", env=env)
    for key, value in [("user.name", "Dev"), ("user.email", PRINCIPAL), ("gpg.format", "ssh"),
                       ("user.signingkey", agent.public_key), ("gpg.ssh.allowedSignersFile", agent.allowed_signers)]:
        git(repository, "config", key, value, env=env)
    return repository, env


# The agent's answers to what OpenSSH's clients ask.

def test_ssh_add_lists_the_active_signing_key_as_ecdsa_sha2_nistp256(agent):
    result = subprocess.run(["ssh-add", "-L"], capture_output=True, text=True, timeout=30, env=agent.env())
    assert result.returncode == 0, result.stderr
    listed = result.stdout.strip().splitlines()
    assert len(listed) == 1
    assert listed[0].startswith("ecdsa-sha2-nistp256 ")
    assert listed[0] == agent.public_key_line  # the same key and comment (its kid) as `keys export --ssh`
    status = agent.daemon.client().call("status")
    assert listed[0].split(" ")[2] == status["result"]["activeKid"]


def test_the_agent_refuses_to_add_or_remove_keys_as_openssh_refuses_what_it_does_not_support(agent):
    key = os.path.join(agent.work, "other")
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "256", "-N", "", "-f", key], check=True, timeout=30)
    added = subprocess.run(["ssh-add", key], capture_output=True, text=True, timeout=30, env=agent.env())
    assert added.returncode != 0 and "agent refused operation" in added.stderr, added
    removed = subprocess.run(["ssh-add", "-D"], capture_output=True, text=True, timeout=30, env=agent.env())
    assert removed.returncode != 0, removed
    assert "ADD_IDENTITY is not supported" in agent.log()
    assert "REMOVE_ALL_IDENTITIES is not supported" in agent.log()
    # The agent still lists only its key.
    listed = subprocess.run(["ssh-add", "-L"], capture_output=True, text=True, timeout=30, env=agent.env())
    assert listed.stdout.strip() == agent.public_key_line


# Signing inside a window, and what the log shows.

def test_ssh_keygen_signs_after_unlock_and_the_signature_verifies_and_is_in_the_ledger(agent):
    agent.lock()
    before = len(agent.ledger())
    agent.unlock()
    result, path = agent.sign_file("release 1.0\n")
    assert result.returncode == 0, result.stderr
    verified = agent.verify_file(path)
    assert verified.returncode == 0, verified.stderr
    assert f'Good "file" signature for {PRINCIPAL} with ECDSA key' in verified.stdout + verified.stderr
    entries = agent.ledger()[before:]
    unlock = [c for c in entries if c["reason"].startswith("stepsign unlock")]
    signed = [c for c in entries if "ssh" in c]
    assert len(unlock) == 1 and len(signed) == 1, entries
    assert unlock[0]["authenticatorUsed"] == "password" and unlock[0]["sub"] == USER
    claim = signed[0]
    assert claim["ssh"] == {"namespace": "file", "hashAlgorithm": "sha512",
                            "hash": hashlib.sha512(b"release 1.0\n").hexdigest()}
    assert claim["sub"] == USER and claim["authenticatorUsed"] == "password" and claim["authLevel"] == 1
    assert claim["stepUp"] == {"reusedFrom": unlock[0]["jti"]}
    assert claim["peer"]["uid"] == os.getuid() and claim["peer"]["comm"] == "ssh-keygen"


def test_git_commit_and_tag_are_signed_and_verify_with_the_allowed_signers_file(agent):
    agent.unlock()
    repository, env = new_repository(agent)
    with open(os.path.join(repository, "a.txt"), "w") as f:
        f.write("a\n")
    git(repository, "add", "a.txt", env=env)
    git(repository, "commit", "-q", "-S", "-m", "signed commit", env=env)
    git(repository, "tag", "-s", "-m", "signed tag", "v1", env=env)
    commit = git(repository, "verify-commit", "HEAD", env=env)
    assert f'Good "git" signature for {PRINCIPAL}' in commit.stderr, commit.stderr
    tag = git(repository, "verify-tag", "v1", env=env)
    assert f'Good "git" signature for {PRINCIPAL}' in tag.stderr, tag.stderr
    assert [c["ssh"]["namespace"] for c in agent.ledger() if "ssh" in c][-2:] == ["git", "git"]


def test_a_50_commit_rebase_signs_every_commit_inside_one_window(agent):
    agent.lock()
    repository, env = new_repository(agent)
    for n in range(50):
        with open(os.path.join(repository, "n.txt"), "w") as f:
            f.write(f"{n}\n")
        git(repository, "add", "n.txt", env=env)
        git(repository, "commit", "-q", "-m", f"commit {n}", env=env)
    before = len([c for c in agent.ledger() if "ssh" in c])
    agent.unlock()
    git(repository, "rebase", "-q", "--root", "--exec", "git commit -q --amend --no-edit -S", env=env)
    marks = git(repository, "log", "--format=%G?", env=env).stdout.split()
    assert marks == ["G"] * 50, marks
    signed = [c for c in agent.ledger() if "ssh" in c][before:]
    assert len(signed) == 50
    assert len({c["stepUp"]["reusedFrom"] for c in signed}) == 1  # one unlock covered them all


# Refusals.

def test_refused_before_unlock(agent):
    agent.lock()
    result, _ = agent.sign_file("no window\n")
    agent.assert_refused(result, "no unlock window for this uid")


def test_refused_after_lock(agent):
    agent.unlock()
    assert agent.sign_file("in the window\n")[0].returncode == 0
    agent.lock()
    result, _ = agent.sign_file("after lock\n")
    agent.assert_refused(result, "no unlock window for this uid")


def test_refused_after_the_user_logs_off_from_the_same_uid(agent):
    agent.unlock()
    assert agent.sign_file("before logOff\n")[0].returncode == 0
    client = agent.daemon.client()
    assert client.call("setUser", user=USER)["events"][0]["event"] == "getPassword"
    assert client.call("setPassword", password=PASSWORD, challengeMode=0)["events"][0]["event"] == "onUserLoggedIn"
    assert client.call("logOff")["error"]["code"] == 0
    client.close()
    result, _ = agent.sign_file("after logOff\n")
    agent.assert_refused(result, "no unlock window for this uid")


def test_refused_after_a_password_change(agent):
    agent.unlock("changer")
    assert agent.sign_file("before the change\n")[0].returncode == 0
    client = agent.daemon.client()
    client.call("setUser", user="changer")
    assert client.call("setPassword", password=PASSWORD, challengeMode=0)["events"][0]["event"] == "onUserLoggedIn"
    assert client.call("initiateUpdateFlowForCredential", credentialType="Password")["error"]["code"] == 0
    changed = client.call("updatePassword", currentPassword=PASSWORD, newPassword="Granite-Otter-58", challengeMode=2)
    assert changed["events"][0]["status"]["code"] == 100, changed
    client.close()
    result, _ = agent.sign_file("after the change\n")
    agent.assert_refused(result, "no unlock window for this uid")


@pytest.mark.skipif(os.getuid() != 0 or SETPRIV is None, reason="needs root and setpriv to run ssh-keygen as uid 65534")
def test_refused_for_another_uid_while_this_uid_has_a_window(agent):
    agent.unlock()
    drop = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    result, _ = agent.sign_file("another uid\n", prefix=drop)
    agent.assert_refused(result, "no unlock window for this uid")
    assert f"uid={NOBODY}" in [line for line in agent.log().splitlines() if "no unlock window" in line][-1]
    assert agent.sign_file("this uid\n")[0].returncode == 0  # the window is this uid's, untouched


def test_refused_for_a_foreign_namespace(agent):
    agent.unlock()
    result, _ = agent.sign_file("not git, not file\n", namespace="other@example.org")
    agent.assert_refused(result, "namespace not in [ssh_agent] namespaces")


def agent_request(path, message):
    """One raw agent message (type byte and contents) and its reply's type and contents; None
    when the agent closed the connection instead."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        try:
            s.sendall(struct.pack(">I", len(message)) + message)
            header = s.recv(4, socket.MSG_WAITALL)
        except (ConnectionResetError, BrokenPipeError):
            return None, b""
        if len(header) < 4:
            return None, b""
        (length,) = struct.unpack(">I", header)
        body = s.recv(length, socket.MSG_WAITALL)
        return body[0], body[1:]


def ssh_string(data):
    return struct.pack(">I", len(data)) + data


def test_refused_for_login_session_data_and_extensions(agent):
    agent.unlock()
    blob = base64.b64decode(agent.public_key_line.split(" ")[1])
    # What an SSH client asks an agent to sign at login (RFC 4252 §7): session ID, then
    # SSH_MSG_USERAUTH_REQUEST with the user, service, "publickey", TRUE, algorithm and key.
    userauth = (ssh_string(os.urandom(32)) + bytes([50]) + ssh_string(b"root") + ssh_string(b"ssh-connection")
                + ssh_string(b"publickey") + b"\x01" + ssh_string(b"ecdsa-sha2-nistp256") + ssh_string(blob))
    reply, _ = agent_request(agent.socket, bytes([13]) + ssh_string(blob) + ssh_string(userauth) + struct.pack(">I", 0))
    assert reply == 5  # SSH_AGENT_FAILURE
    assert any("ssh-agent refused" in line and "allow_authentication is false" in line for line in agent.log().splitlines())
    reply, _ = agent_request(agent.socket, bytes([27]) + ssh_string(b"session-bind@openssh.com"))
    assert reply == 5
    assert "EXTENSION is not supported" in agent.log()


def test_hostile_input_is_bounded_like_the_main_socket():
    with tempfile.TemporaryDirectory() as directory:
        a = Agent(directory)
        try:
            # A length over 64 KiB closes the connection without a reply.
            reply, _ = agent_request(a.socket, b"\x0b" + b"\x00" * (64 * 1024))
            assert reply is None
            assert "more than 65536" in a.log()
            # A malformed SIGN_REQUEST is a failure, and the connection serves on.
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(a.socket)
                s.sendall(struct.pack(">I", 5) + bytes([13]) + b"\xff\xff\xff\xff")
                assert s.recv(5, socket.MSG_WAITALL) == struct.pack(">I", 1) + b"\x05"
                s.sendall(struct.pack(">I", 1) + bytes([11]))
                (length,) = struct.unpack(">I", s.recv(4, socket.MSG_WAITALL))
                assert s.recv(length, socket.MSG_WAITALL)[0] == 12
        finally:
            a.stop()


def test_a_client_that_ends_its_input_and_reads_late_gets_every_reply(agent):
    """Replies still queued in the daemon when the client's input ends are written before the
    connection closes (they were dropped: the close came right after the last request)."""
    count = 500  # more than the socket buffer holds, less than it and the daemon's queue of writes
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(agent.socket)
        s.sendall((struct.pack(">I", 1) + bytes([11])) * count)  # REQUEST_IDENTITIES
        s.shutdown(socket.SHUT_WR)
        time.sleep(1.5)  # the socket's buffer and the daemon's queue of writes fill meanwhile
        received = b""
        while chunk := s.recv(65536):
            received += chunk
    replies = 0
    while received:
        (length,) = struct.unpack(">I", received[:4])
        assert received[4] == 12  # IDENTITIES_ANSWER
        received = received[4 + length:]
        replies += 1
    assert replies == count


def test_a_client_that_never_reads_its_replies_is_no_longer_read(agent):
    """Replies a client does not read fill what one connection may hold, and then the daemon
    reads no more of it (what a peer can make the daemon hold is bounded): what the kernel holds
    of the client's requests unread (TIOCOUTQ) stops going down. A daemon that kept reading would
    drain it until the deadline."""
    message = (struct.pack(">I", 1) + bytes([11])) * 2000  # REQUEST_IDENTITIES
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(agent.socket)
        s.setblocking(False)

        def unread():
            return struct.unpack("i", fcntl.ioctl(s.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]

        stopped = False
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not stopped:
            try:
                s.send(message)
                continue
            except BlockingIOError:
                pass
            before = unread()
            time.sleep(1)
            stopped = before > 0 and unread() == before
        assert stopped, "the agent kept reading a client that reads none of its replies"
    # The agent still serves others.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
        other.connect(agent.socket)
        other.settimeout(10)
        other.sendall(struct.pack(">I", 1) + bytes([11]))
        reply = b""
        while len(reply) < 5:
            reply += other.recv(5 - len(reply))
        assert reply[4] == 12  # IDENTITIES_ANSWER


def test_idle_and_per_uid_connections_are_bounded():
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        socket_path = os.path.join(directory, "agent.sock")
        try:
            daemon = Daemon(directory, server="idle_timeout_seconds = 1\nmax_connections_per_uid = 2",
                            extra=f'[ssh_agent]\nsocket = "{socket_path}"\n')
        except AssertionError:
            with open(os.path.join(directory, "stepsignd.log"), encoding="utf-8", errors="replace") as f:
                print(f.read())
            raise
        try:
            held = []
            for _ in range(2):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(socket_path)
                held.append(s)
            third = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            third.connect(socket_path)
            third.settimeout(10)
            assert third.recv(1) == b""  # closed: two connections of this uid are open
            third.close()
            # The idle ones are closed after the idle timeout.
            for s in held:
                s.settimeout(10)
                started = time.time()
                assert s.recv(1) == b""
                assert time.time() - started < 5
                s.close()
            with open(os.path.join(directory, "stepsignd.log"), encoding="utf-8", errors="replace") as f:
                assert "ssh-agent connection refused: too many connections of one uid" in f.read()
        finally:
            daemon.stop()


def test_unlock_is_refused_when_the_agent_is_off_and_for_too_long_a_window(agent):
    too_long = cli(agent.daemon, "unlock", "--user", USER, "--password-file", agent.password_file, "--for", "2h")
    assert too_long.returncode == 1 and "unlock_seconds" in too_long.stderr, too_long.stderr
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        try:
            off = cli(daemon, "unlock", "--user", USER, "--password-file", agent.password_file)
            assert off.returncode == 1 and "170" in off.stderr and "[ssh_agent] socket" in off.stderr, off.stderr
        finally:
            daemon.stop()


def test_max_uses_ends_the_window():
    with tempfile.TemporaryDirectory() as directory:
        a = Agent(directory, agent_extra="max_uses = 2\n")
        try:
            a.unlock()
            assert a.sign_file("one\n")[0].returncode == 0
            assert a.sign_file("two\n")[0].returncode == 0
            result, _ = a.sign_file("three\n")
            a.assert_refused(result, "used up")
        finally:
            a.stop()


def test_commits_signed_before_a_rotation_keep_verifying_with_the_new_allowed_signers():
    with tempfile.TemporaryDirectory() as directory:
        a = Agent(directory)
        try:
            a.unlock()
            repository, env = new_repository(a)
            git(repository, "commit", "-q", "--allow-empty", "-S", "-m", "before the rotation", env=env)
            signed_at = time.strftime("%Y%m%d%H%M%SZ", time.gmtime())
            result, early = a.sign_file("a file before the rotation\n")
            assert result.returncode == 0, result.stderr
            admin = a.daemon.client()
            rotated = admin.call("admin.rotateKey")
            admin.close()
            assert rotated["error"]["code"] == 0, rotated
            time.sleep(1.1)  # the new key's commits are a second later than the rotation
            new_key = cli(a.daemon, "keys", "export", "--ssh").stdout.strip()
            assert new_key != a.public_key_line and new_key.split(" ")[2] == rotated["result"]["activeKid"]
            with open(a.public_key, "w") as f:
                f.write(new_key + "\n")
            git(repository, "commit", "-q", "--allow-empty", "-S", "-m", "after the rotation", env=env)
            signers = cli(a.daemon, "keys", "export", "--ssh-allowed-signers", PRINCIPAL).stdout
            lines = signers.strip().splitlines()
            assert len(lines) == 2, signers
            old, new = lines
            assert old.startswith(f'{PRINCIPAL} valid-after="') and ',valid-before="' in old and old.endswith(a.public_key_line)
            assert new.startswith(f'{PRINCIPAL} valid-after="') and "valid-before" not in new and new.endswith(new_key)
            with open(a.allowed_signers, "w") as f:
                f.write(signers)
            for ref in ("HEAD~1", "HEAD"):
                verified = git(repository, "verify-commit", ref, env=env)
                assert f'Good "git" signature for {PRINCIPAL}' in verified.stderr, (ref, verified.stderr)
            # The old key's line ends at the rotation: its file signature verifies at a time before
            # it, not now (ssh-keygen's verify-time; git passes the commit's).
            def verify_at(*options):
                with open(early, "rb") as message:
                    return subprocess.run(["ssh-keygen", "-Y", "verify", "-f", a.allowed_signers, "-I", PRINCIPAL, "-n", "file",
                                           "-s", early + ".sig", *options], stdin=message, capture_output=True, text=True,
                                          timeout=60)
            assert verify_at(f"-Overify-time={signed_at}").returncode == 0
            time.sleep(1.1)  # valid-before is the rotation's second rounded up: now is past it
            assert verify_at().returncode != 0, (signers, time.strftime("%Y%m%d%H%M%SZ", time.gmtime()))
        finally:
            a.stop()


def test_an_idle_agent_connection_does_not_hold_up_shutdown():
    with tempfile.TemporaryDirectory() as directory:
        a = Agent(directory)
        idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            idle.connect(a.socket)
            idle.sendall(struct.pack(">I", 1) + bytes([11]))  # one request answered, then idle
            (length,) = struct.unpack(">I", idle.recv(4, socket.MSG_WAITALL))
            idle.recv(length, socket.MSG_WAITALL)
            started = time.time()
            a.daemon.process.terminate()
            assert a.daemon.process.wait(timeout=20) == 0
            assert time.time() - started < 10
        finally:
            idle.close()
            if a.daemon.process.poll() is None:
                a.daemon.process.kill()
            a.daemon.log.close()


def test_unlock_for_takes_seconds_minutes_and_hours_and_says_what_it_opened(agent):
    bad = cli(agent.daemon, "unlock", "--user", USER, "--password-file", agent.password_file, "--for", "ten")
    assert bad.returncode == 2 and "--for" in bad.stderr, bad.stderr
    for duration, seconds in (("45", 45), ("30s", 30), ("2m", 120), ("1h", 3600)):
        result = cli(agent.daemon, "unlock", "--user", USER, "--password-file", agent.password_file, "--for", duration)
        if seconds > 900:  # [ssh_agent] unlock_seconds = 900 (the default)
            assert result.returncode == 1 and "unlock_seconds" in result.stderr, result.stderr
        else:
            assert result.returncode == 0, result.stderr
            assert f"uid {os.getuid()}: {seconds} s, at most 100 signatures" in result.stderr, result.stderr
    locked = cli(agent.daemon, "lock")
    assert locked.returncode == 0 and "the SSH agent is locked" in locked.stderr
    again = cli(agent.daemon, "lock")
    assert again.returncode == 0 and "no window open" in again.stderr
