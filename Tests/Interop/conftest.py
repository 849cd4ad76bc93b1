"""A real stepsignd for the interop checks, and a tiny client of its line protocol."""
import json
import os
import socket
import subprocess
import tempfile
import time

import pytest

BIN = os.environ.get("STEPSIGN_BIN", os.path.join(os.path.dirname(__file__), "..", "..", ".build", "debug"))
USER = "interop"
PASSWORD = "Quartz-Zebra-77"


class Client:
    """One connection (one session) speaking SPEC §3: a JSON line out, a JSON line back."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")
        self.next_id = 1

    def call(self, op, **params):
        request = {"id": self.next_id, "op": op, **params}
        self.next_id += 1
        self.file.write(json.dumps(request).encode() + b"\n")
        self.file.flush()
        reply = json.loads(self.file.readline())
        assert reply["id"] == request["id"]
        return reply

    def close(self):
        self.file.close()
        self.sock.close()


class Daemon:
    def __init__(self, directory, extra="", server="", prefix=(), client_uids=()):
        """stepsignd on `directory`; `prefix` is argv put before it (e.g. nsenter into a mount
        namespace), which must exec the daemon in the same process."""
        self.directory = directory
        self.socket = os.path.join(directory, "s.sock")
        config = os.path.join(directory, "stepsignd.toml")
        with open(config, "w") as f:
            f.write(f"""instance = "interop"
[access]
client_uids = {[os.getuid(), *client_uids]}
client_groups = []
admin_uids = [{os.getuid()}]
[server]
socket_group = ""
""" + server + """
[signing]
allow_level_0 = true
[password]
scrypt_n = 1024
""" + extra)
        self.log = open(os.path.join(directory, "stepsignd.log"), "wb")
        self.process = subprocess.Popen(
            [*prefix, os.path.join(BIN, "stepsignd"), "--config", config, "--socket", self.socket,
             "--state-dir", os.path.join(directory, "state")],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                # Any reply line will do: a daemon that refuses this uid is up too.
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    probe.connect(self.socket)
                    probe.sendall(b'{"id":1,"op":"status"}\n')
                    if probe.makefile("rb").readline():
                        return
            except OSError:
                assert self.process.poll() is None, "stepsignd exited early"
                time.sleep(0.05)
        raise RuntimeError("stepsignd did not start")

    def client(self):
        return Client(self.socket)

    def stop(self):
        self.process.terminate()
        assert self.process.wait(timeout=30) == 0
        self.log.close()


@pytest.fixture(scope="module")
def daemon():
    with tempfile.TemporaryDirectory() as directory:
        d = Daemon(directory)
        admin = d.client()
        reply = admin.call("admin.addUser", user=USER, password=PASSWORD)
        assert reply["error"]["code"] == 0, reply
        admin.close()
        yield d
        d.stop()


def sign(client, payload, level=1):
    """Signs `payload` at (level, 0), answering the password challenge; returns the details."""
    reply = client.call("authenticateUserAndSignData", user=USER, payload=payload, reason="interop",
                        authLevel=level, authenticatorType=0)
    assert reply["error"]["code"] == 0, reply
    if level == 1:
        assert reply["events"][0]["event"] == "getPassword"
        reply = client.call("setPassword", password=PASSWORD, challengeMode=12)
    event = reply["events"][-1]
    assert event["event"] == "onAuthenticateUserAndSignData"
    assert event["status"]["code"] == 100, event
    return event["details"]


CLI = os.path.join(BIN, "stepsign")


def secret_file(directory, name, value):
    """`value` and a newline in a 0600 file, as a --*-file option wants a secret."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(value + "\n")
    os.chmod(path, 0o600)
    return path


def cli(daemon, *args, **kwargs):
    """`stepsign --socket <daemon's> ARGS`, its output captured."""
    return subprocess.run([CLI, "--socket", daemon.socket, *args], capture_output=True, text=True, timeout=60,
                          **kwargs)


def sign_level_0(client, count, tag):
    """`count` level-0 signatures of USER (no step-up), payloads "TAG N"."""
    for n in range(count):
        reply = client.call("authenticateUserAndSignData", user=USER, payload=f"{tag} {n}", reason="interop",
                            authLevel=0, authenticatorType=0)
        assert reply["events"][-1]["status"]["code"] == 100, reply


def published_size(tiles):
    """The tree size of the checkpoint published in a tiles directory (-1: none yet)."""
    try:
        with open(os.path.join(tiles, "checkpoint")) as f:
            return int(f.read().split("\n")[1])
    except (OSError, IndexError, ValueError):
        return -1


def wait_for_tiles(tiles, size, timeout=60):
    """Waits until the daemon has published the tiles of a tree of `size` entries."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if published_size(tiles) == size:
            return
        time.sleep(0.05)
    raise AssertionError(f"the tiles were not published at size {size} (now {published_size(tiles)})")


def write_key_pair(directory, name):
    """A new P-256 key (cryptography): its key object, its PKCS#8 private PEM file (0600, as
    stepsign wants a private key) and its SPKI public PEM file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = os.path.join(directory, f"{name}.pem"), os.path.join(directory, f"{name}-public.pem")
    with open(private, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    os.chmod(private, 0o600)
    with open(public, "wb") as f:
        f.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                              serialization.PublicFormat.SubjectPublicKeyInfo))
    return key, private, public
