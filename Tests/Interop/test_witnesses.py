"""SPEC 5.6 with real processes on the loopback: two `stepsign-witness serve` (127.0.0.2 and
127.0.0.3), a real stepsignd, and `stepsign-witnessd` between them over real HTTP. The
witnesses cosign the daemon's checkpoints (checked here with `cryptography` following C2SP
tlog-cosignature by hand), the daemon stores the cosignatures, `status` says the head is
witnessed, and a proof file carries both for `stepsign-verify --witness … --quorum 2`. A
second daemon holding a copy of the first one's keys and database (a stolen key and a
rewritten history) is refused by both witnesses, and its pusher raises an alarm. The witness
answers every status of C2SP tlog-witness v1 over HTTP, and a body larger than any request
gets 413 before it is read."""
import base64
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from conftest import BIN, CLI, Daemon, PASSWORD, USER, secret_file

WITNESS = os.path.join(BIN, "stepsign-witness")
WITNESSD = os.path.join(BIN, "stepsign-witnessd")
VERIFY = os.path.join(BIN, "stepsign-verify")
HOSTS = ("127.0.0.2", "127.0.0.3")


def run(*args, **kwargs):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, **kwargs)


def free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Witness:
    """A real `stepsign-witness serve` on `host`."""

    def __init__(self, directory, name, host, port, log_keys):
        self.state = os.path.join(directory, name.replace("/", "_"))
        self.name, self.host, self.port = name, host, port
        self.vkey = run(WITNESS, "key", "--state-dir", self.state, "--name", name).stdout.strip()
        self.log_keys = log_keys
        self.process = None

    def start(self, log_keys):
        args = [WITNESS, "serve", "--listen", f"{self.host}:{self.port}", "--state-dir", self.state]
        for key in log_keys:
            args += ["--log", key]
        self.errors = open(self.state + ".log", "wb")
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.errors, text=True)
        line = self.process.stdout.readline()
        assert line == f"listening {self.host}:{self.port}\n", line

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            assert self.process.wait(timeout=30) == 0
        self.errors.close()

    def post(self, body, path="/add-checkpoint", method="POST"):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=body.encode() if isinstance(body, str) else body)
            response = connection.getresponse()
            return response.status, response.getheader("Content-Type"), response.read().decode()
        finally:
            connection.close()


def daemon_config(witnesses, quorum):
    text = f"[ledger]\nwitness_quorum = {quorum}\n"
    for w in witnesses:
        text += f'[[witness]]\nname = "{w.name}"\nurl = "http://{w.host}:{w.port}"\nkey = "{w.vkey}"\n'
    return text


def push(daemon, *extra):
    result = run(WITNESSD, "--config", os.path.join(daemon.directory, "stepsignd.toml"), "--socket", daemon.socket,
                 "--once", *extra)
    outcomes = [json.loads(line) for line in result.stdout.splitlines()]
    return result.returncode, {o["witness"]: o for o in outcomes}, result.stderr


def sign(directory, daemon, payload, proof_out=None):
    password = secret_file(directory, "pw", PASSWORD)
    args = [CLI, "--socket", daemon.socket, "sign", "--user", USER, "--reason", "witnessed", "--payload", payload,
            "--password-file", password]
    if proof_out:
        args += ["--proof-out", proof_out]
    result = run(*args)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def setup():
    with tempfile.TemporaryDirectory() as directory:
        witnesses = [Witness(directory, f"witness.test/w{n + 1}", host, free_port(host), []) for n, host in enumerate(HOSTS)]
        os.mkdir(os.path.join(directory, "a"))
        daemon = Daemon(os.path.join(directory, "a"), extra=daemon_config(witnesses, 2))
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        log_keys = run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout.split()
        for w in witnesses:
            w.start(log_keys)
        state = {"directory": directory, "daemon": daemon, "client": client, "witnesses": witnesses,
                 "log_keys": log_keys}
        try:
            yield state
        finally:
            state["client"].close()
            state["daemon"].stop()
            for w in witnesses:
                w.stop()


def cosignature_by_hand(note, witness):
    """Checks the witness's line on a cosigned checkpoint note by C2SP tlog-cosignature's text:
    key ID SHA-256(name ‖ 0x0A ‖ 0x04 ‖ key)[:4], then a big-endian u64 timestamp, then Ed25519
    over "cosignature/v1\\ntime T\\n" and the checkpoint's body. Returns the timestamp."""
    body, _, signatures = note.rpartition("\n\n")
    body += "\n"
    name, key_id_hex, key_b64 = witness.vkey.split("+", 2)
    raw = base64.b64decode(key_b64)
    assert raw[0] == 4
    key_id = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
    assert key_id.hex() == key_id_hex
    lines = [l for l in signatures.splitlines() if l.startswith(f"\u2014 {name} ")]
    assert len(lines) == 1, signatures
    blob = base64.b64decode(lines[0].split(" ")[2])
    assert blob[:4] == key_id and len(blob) == 4 + 8 + 64
    timestamp = int.from_bytes(blob[4:12], "big")
    Ed25519PublicKey.from_public_bytes(raw[1:]).verify(blob[12:], b"cosignature/v1\ntime %d\n" % timestamp + body.encode())
    return timestamp


def test_both_witnesses_cosign_and_the_daemon_carries_their_cosignatures(setup):
    directory, daemon, witnesses = setup["directory"], setup["daemon"], setup["witnesses"]
    for n in range(3):
        sign(directory, daemon, f"release {n}")
    assert setup["client"].call("status")["result"]["witnessed"] is False
    code, outcomes, errors = push(daemon)
    assert code == 0, (outcomes, errors)
    assert [outcomes[w.name]["outcome"] for w in witnesses] == ["cosigned", "cosigned"]
    size = outcomes[witnesses[0].name]["treeSize"]
    assert size >= 3
    note = setup["client"].call("getCheckpoint")["result"]["checkpoint"]
    assert note.split("\n")[1] == str(size)
    for w in witnesses:
        assert abs(cosignature_by_hand(note, w) - time.time()) < 300
    assert setup["client"].call("status")["result"]["witnessed"] is True
    # Nothing new: each witness's cosignature is already there.
    code, outcomes, _ = push(daemon)
    assert code == 0 and {o["outcome"] for o in outcomes.values()} == {"already-cosigned"}


def test_the_log_grows_by_consistency_proofs_and_proofs_carry_the_quorum(setup):
    directory, daemon, witnesses = setup["directory"], setup["daemon"], setup["witnesses"]
    push(daemon)
    jws = sign(directory, daemon, "release grown")
    code, outcomes, errors = push(daemon)
    assert code == 0, (outcomes, errors)
    assert all(o["outcome"] == "cosigned" and "from size 0" not in o["detail"] for o in outcomes.values()), outcomes
    jws_file = os.path.join(directory, "grown.jws")
    with open(jws_file, "w") as f:
        f.write(jws)
    jti = json.loads(base64.urlsafe_b64decode(jws.split(".")[1] + "==").decode())["jti"]
    proof = os.path.join(directory, "grown.tlog-proof")
    result = run(CLI, "--socket", daemon.socket, "proof", jti, "-o", proof)
    assert result.returncode == 0, result.stderr
    keys = os.path.join(directory, "keys.json")
    with open(keys, "w") as f:
        f.write(run(CLI, "--socket", daemon.socket, "keys", "export").stdout)
    log_key = [a for k in setup["log_keys"] for a in ("--log-key", k)]
    witness_args = [a for w in witnesses for a in ("--witness", w.vkey)]
    verified = run(VERIFY, "--keys", keys, "--json", "--proof", proof, *log_key, *witness_args, "--quorum", "2", jws_file)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert sorted(json.loads(verified.stdout)["cosignedBy"]) == sorted(w.name for w in witnesses)


def test_a_stolen_key_and_a_rewritten_history_are_refused_by_both_witnesses(setup):
    directory, daemon, witnesses = setup["directory"], setup["daemon"], setup["witnesses"]
    # The thief's copy: the same keys and database as of now, then another history.
    daemon.process.terminate()
    assert daemon.process.wait(timeout=30) == 0
    thief_dir = os.path.join(directory, "thief")
    os.mkdir(thief_dir)
    shutil.copytree(os.path.join(daemon.directory, "state"), os.path.join(thief_dir, "state"))
    honest = Daemon(daemon.directory, extra=daemon_config(witnesses, 2))
    setup["daemon"] = honest
    setup["client"].close()
    setup["client"] = honest.client()
    thief = Daemon(thief_dir, extra=daemon_config(witnesses, 2))
    try:
        sign(directory, honest, "honest 1")
        code, outcomes, errors = push(honest)
        assert code == 0, (outcomes, errors)
        honest_size = outcomes[witnesses[0].name]["treeSize"]
        for n in range(3):
            sign(directory, thief, f"forged {n}")
        code, outcomes, errors = push(thief)
        assert code == 1, (outcomes, errors)
        for w in witnesses:
            assert outcomes[w.name]["outcome"] == "alarm", outcomes
            assert "422" in outcomes[w.name]["detail"], outcomes
        assert "witness alarm" in errors and "critical" in errors
        # The witnesses still hold the honest tree, and cosign its next checkpoint.
        sign(directory, honest, "honest 2")
        code, outcomes, _ = push(honest)
        assert code == 0 and all(o["treeSize"] == honest_size + 1 for o in outcomes.values()), outcomes
    finally:
        thief.stop()


def test_every_status_of_the_protocol_over_http(setup):
    w = setup["witnesses"][0]
    client = setup["client"]
    note = client.call("getCheckpoint")["result"]["checkpoint"]
    size = int(note.split("\n")[1])
    status, _, _ = w.post(f"old {size}\n\n{note}")
    assert status in (200, 409)
    # 409 with the witness's size as text/x.tlog.size.
    status, content_type, body = w.post(f"old 1\n\n{note}")
    assert (status, content_type) == (409, "text/x.tlog.size") and int(body) >= 1 and body.endswith("\n")
    # 400: old size above the checkpoint's; a malformed body.
    assert w.post(f"old {size + 1}\n\n{note}")[0] == 400
    assert w.post("old 01\n\n" + note)[0] == 400
    assert w.post("hello")[0] == 400
    # 403: the checkpoint's text changed under its signatures.
    lines = note.split("\n")
    assert w.post("old 0\n\n" + "\n".join([lines[0], str(size + 5)] + lines[2:]))[0] == 403
    # 404: another origin, another path; 405: another method.
    assert w.post("old 0\n\n" + note.replace(lines[0], "other.example/log"))[0] == 404
    assert w.post(f"old 0\n\n{note}", path="/other")[0] == 404
    assert w.post(None, method="GET")[0] == 405
    # 413: a body larger than any request, refused before it is read.
    connection = http.client.HTTPConnection(w.host, w.port, timeout=30)
    connection.putrequest("POST", "/add-checkpoint")
    connection.putheader("Content-Length", str(10 * 1024 * 1024))
    connection.endheaders()
    connection.send(b"old 0\n" * 100)
    response = connection.getresponse()
    assert response.status == 413 and response.getheader("Connection") == "close"
    connection.close()
    # The witness is still serving.
    assert w.post(f"old 1\n\n{note}")[0] == 409


def test_the_witness_refuses_a_second_process_on_its_state_and_a_bad_log_key(setup, tmp_path):
    w = setup["witnesses"][0]
    second = run(WITNESS, "serve", "--listen", f"{w.host}:0", "--state-dir", w.state, "--log", setup["log_keys"][0])
    assert second.returncode == 78 and "lock" in second.stderr
    bad = run(WITNESS, "serve", "--listen", "127.0.0.1:0", "--state-dir", str(tmp_path / "w"), "--name", "x.test/w",
              "--log", w.vkey)
    assert bad.returncode == 78 and "cosignature key" in bad.stderr


def test_key_prints_the_verifier_key_while_the_witness_serves(setup):
    """Issue 39: reading the public key needs no lock; it exited 78 while a server held the directory."""
    w = setup["witnesses"][0]
    assert w.process.poll() is None
    printed = run(WITNESS, "key", "--state-dir", w.state)
    assert printed.returncode == 0 and printed.stdout.strip() == w.vkey, printed
    assert run(WITNESS, "key", "--state-dir", w.state, "--name", w.name).stdout.strip() == w.vkey
    renamed = run(WITNESS, "key", "--state-dir", w.state, "--name", "other.test/w")
    assert renamed.returncode == 78 and f"is named {w.name}" in renamed.stderr, renamed
    # The server still runs on its directory.
    assert w.process.poll() is None


class FakeWitness:
    """An HTTP server on the loopback that answers every add-checkpoint with (status, body)."""

    def __init__(self, status, body):
        import http.server
        import threading

        answer = (status, body)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                payload = answer[1].encode()
                self.send_response(answer[0])
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.4", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.mark.parametrize("case", ["unreachable", "server error", "forged cosignature", "unknown origin"])
def test_the_pusher_retries_what_may_pass_and_alarms_on_what_will_not(setup, tmp_path, case):
    real = setup["witnesses"][0]
    fake = None
    if case == "unreachable":
        url = f"http://127.0.0.4:{free_port('127.0.0.4')}"
    else:
        status, body = {"server error": (503, "busy\n"), "unknown origin": (404, "unknown origin\n"),
                        # A line of the witness's name and key ID whose signature is not its own.
                        "forged cosignature": (200, "\u2014 " + real.name + " " + base64.b64encode(
                            bytes.fromhex(real.vkey.split("+")[1]) + bytes(72)).decode() + "\n")}[case]
        fake = FakeWitness(status, body)
        url = f"http://127.0.0.4:{fake.port}"
    config = tmp_path / "pusher.toml"
    daemon_config_text = open(os.path.join(setup["daemon"].directory, "stepsignd.toml")).read()
    config.write_text(daemon_config_text.split("[ledger]")[0] + "[ledger]\nwitness_quorum = 1\n"
                      + f'[[witness]]\nname = "{real.name}"\nurl = "{url}"\nkey = "{real.vkey}"\n')
    try:
        sign(setup["directory"], setup["daemon"], f"pusher {case}")
        result = run(WITNESSD, "--config", str(config), "--socket", setup["daemon"].socket, "--once", "--timeout", "5")
        outcome = json.loads(result.stdout.splitlines()[0])
        if case in ("unreachable", "server error"):
            assert (result.returncode, outcome["outcome"]) == (75, "retry"), result.stdout + result.stderr
        else:
            assert (result.returncode, outcome["outcome"]) == (1, "alarm"), result.stdout + result.stderr
            assert "witness alarm" in result.stderr
        # Nothing unverified was stored: the daemon's checkpoint carries no line of the fake.
        note = setup["client"].call("getCheckpoint")["result"]["checkpoint"]
        assert base64.b64encode(bytes(72)).decode()[:20] not in note
    finally:
        if fake:
            fake.stop()
