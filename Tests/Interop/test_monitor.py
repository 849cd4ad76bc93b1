"""SPEC 5.6, the monitor: `stepsign monitor` follows a real stepsignd through its socket and
through its published tiles, prints every signature and event as a JSON line (the same lines
either way), remembers where it stopped, and raises an alarm (exit 1, a critical line, --exec
with the alarm as JSON on stdin) when the log it follows shows another history than the one it
saw (a copy of the daemon's keys and database signing something else), when a checkpoint is
not signed by a trusted log key, or when an entry of the published log was edited."""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conftest import CLI, Daemon, PASSWORD, USER, sign_level_0, wait_for_tiles


def run(*args, **kwargs):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300, **kwargs)




def head(client):
    return int(client.call("getCheckpoint")["result"]["checkpoint"].split("\n")[1])




def monitor(socket_path, state, *extra):
    result = run(CLI, "--socket", socket_path, "monitor", "--state", state, "--once", *extra)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return result, lines


@pytest.fixture(scope="module")
def log():
    with tempfile.TemporaryDirectory() as directory:
        tiles = os.path.join(directory, "tiles")
        daemon = Daemon(directory, extra=f'[ledger]\ntiles_dir = "{tiles}"\n')
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        sign_level_0(client, 5, "first")
        keys = os.path.join(directory, "keys.json")
        with open(keys, "w") as f:
            f.write(run(CLI, "--socket", daemon.socket, "keys", "export").stdout)
        log_keys = os.path.join(directory, "log-keys")
        with open(log_keys, "w") as f:
            f.write(run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout)
        state = {"directory": directory, "tiles": tiles, "daemon": daemon, "client": client, "keys": keys,
                 "log_keys": log_keys}
        try:
            yield state
        finally:
            state["client"].close()
            state["daemon"].stop()


def test_the_monitor_reports_every_entry_once_and_goes_on_where_it_stopped(log, tmp_path):
    client, state = log["client"], str(tmp_path / "monitor.state")
    size = head(client)
    result, lines = monitor(log["daemon"].socket, state)
    assert result.returncode == 0, result.stderr
    assert [line["index"] for line in lines] == list(range(size))
    events = [line["event"] for line in lines if line["type"] == "event"]
    assert "signingKeyCreated" in events and "userAdded" in events
    signatures = [line for line in lines if line["type"] == "signature"]
    assert len(signatures) == 5 and {s["user"] for s in signatures} == {USER}
    assert all(s["peer"]["uid"] == os.getuid() for s in signatures)
    assert os.stat(state).st_mode & 0o777 == 0o600
    # Nothing new: nothing printed.
    result, again = monitor(log["daemon"].socket, state)
    assert result.returncode == 0 and again == []
    sign_level_0(client, 3, "second")
    result, more = monitor(log["daemon"].socket, state)
    assert result.returncode == 0, result.stderr
    assert [line["index"] for line in more] == list(range(size, head(client)))


def test_the_tiles_give_the_same_lines_as_the_socket(log, tmp_path):
    client = log["client"]
    size = head(client)
    wait_for_tiles(log["tiles"], size)
    _, by_socket = monitor(log["daemon"].socket, str(tmp_path / "a.state"))
    result, by_tiles = monitor(log["daemon"].socket, str(tmp_path / "b.state"), "--tiles", log["tiles"],
                               "--keys", log["keys"], "--log-key", log["log_keys"])
    assert result.returncode == 0, result.stderr
    assert by_tiles == by_socket[:len(by_tiles)] and len(by_tiles) == size


def test_a_published_entry_edited_on_disk_is_an_alarm(log, tmp_path):
    copy = str(tmp_path / "tiles")
    size = head(log["client"])
    assert size < 256
    wait_for_tiles(log["tiles"], size)
    shutil.copytree(log["tiles"], copy)
    # The bundle of the published checkpoint (older partial bundles stay beside it).
    name = os.path.join(copy, "tile", "entries", "000.p", str(size))
    data = bytearray(open(name, "rb").read())
    data[-3] ^= 1
    open(name, "wb").write(data)
    result, _ = monitor(log["daemon"].socket, str(tmp_path / "c.state"), "--tiles", copy, "--keys", log["keys"],
                        "--log-key", log["log_keys"])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ALARM" in result.stderr
    alarm = json.loads(result.stderr.split("ALARM ", 1)[1].splitlines()[0])
    assert alarm["alarm"] in ("inconsistent-checkpoint", "bad-entry"), alarm


def other_log_key(origin):
    """A log key of the same origin that is not the daemon's (C2SP signed-note, type 0x01)."""
    raw = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    key_id = hashlib.sha256(origin.encode() + b"\n\x01" + raw).digest()[:4]
    return f"{origin}+{key_id.hex()}+{base64.b64encode(bytes([1]) + raw).decode()}"


def test_a_checkpoint_of_an_untrusted_log_key_is_an_alarm(log, tmp_path):
    origin = log["client"].call("getCheckpoint")["result"]["checkpoint"].split("\n")[0]
    other = other_log_key(origin)
    result, _ = monitor(log["daemon"].socket, str(tmp_path / "d.state"), "--tiles", log["tiles"],
                        "--keys", log["keys"], "--log-key", other)
    assert result.returncode == 1
    assert json.loads(result.stderr.split("ALARM ", 1)[1].splitlines()[0])["alarm"] == "untrusted-checkpoint"


def test_another_history_under_the_same_keys_is_an_alarm_with_exec(log, tmp_path):
    state, alarm_file = str(tmp_path / "split.state"), str(tmp_path / "alarm.json")
    daemon = log["daemon"]
    result, _ = monitor(daemon.socket, state)
    assert result.returncode == 0, result.stderr
    # The thief's copy of keys and database, then another history on it.
    daemon.process.terminate()
    assert daemon.process.wait(timeout=30) == 0
    thief_dir = os.path.join(log["directory"], "thief")
    os.mkdir(thief_dir)
    shutil.copytree(os.path.join(daemon.directory, "state"), os.path.join(thief_dir, "state"))
    honest = Daemon(daemon.directory, extra=f'[ledger]\ntiles_dir = "{log["tiles"]}"\n')
    log["daemon"], log["client"] = honest, honest.client()
    daemon.log.close()
    thief = Daemon(thief_dir)
    try:
        sign_level_0(log["client"], 2, "honest")
        assert monitor(honest.socket, state)[0].returncode == 0
        thief_client = thief.client()
        sign_level_0(thief_client, 4, "forged")
        thief_client.close()
        result, _ = monitor(thief.socket, state, "--exec", f"cat > {alarm_file}")
        assert result.returncode == 1, result.stdout + result.stderr
        with open(alarm_file) as f:
            alarm = json.load(f)
        assert alarm["alarm"] == "inconsistent-checkpoint", alarm
        assert "another history" in alarm["detail"] or "another root" in alarm["detail"], alarm
        # The state still holds the honest log: following it goes on without an alarm.
        sign_level_0(log["client"], 1, "honest again")
        assert monitor(honest.socket, state)[0].returncode == 0
    finally:
        thief.stop()
