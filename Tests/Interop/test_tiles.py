"""SPEC 5.6, published tiles: a real stepsignd with `ledger.tiles_dir` writes its log as C2SP
tlog-tiles after each checkpoint. Read here by the specification's text alone (level-0 tiles
are the leaf hashes, entry bundles are big-endian uint16-prefixed entries, higher tiles hold
the hashes of full tiles below, partial tiles are named .p/W) with pymerkle as an independent
source of the root; `stepsign-verify log` checks the directory and the same files served by a
real nginx over HTTP; a tile or an entry edited on disk is caught; and a reader that reads while
the daemon publishes never sees a checkpoint whose tiles are not all there and whole."""
import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest
from pymerkle import InmemoryTree

from conftest import BIN, CLI, Daemon, PASSWORD, USER, published_size, sign_level_0, wait_for_tiles

VERIFY = os.path.join(BIN, "stepsign-verify")


def run(*args, **kwargs):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, **kwargs)








@pytest.fixture(scope="module")
def log():
    with tempfile.TemporaryDirectory() as directory:
        # nginx's workers (user nobody) must reach the tiles, as a web server's user must in production.
        os.chmod(directory, 0o755)
        tiles = os.path.join(directory, "tiles")
        daemon = Daemon(directory, extra=f'[ledger]\ntiles_dir = "{tiles}"\n')
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        sign_level_0(client, 300, "artifact")
        size = int(client.call("getCheckpoint")["result"]["checkpoint"].split("\n")[1])
        wait_for_tiles(tiles, size)
        log_keys = run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout.split()
        try:
            yield {"directory": directory, "tiles": tiles, "daemon": daemon, "client": client, "size": size,
                   "log_keys": log_keys}
        finally:
            client.close()
            daemon.stop()


def path(level, index, width=256):
    """The C2SP path of a tile, by the specification's text."""
    groups = []
    while True:
        groups.insert(0, f"{index % 1000:03d}")
        index //= 1000
        if index == 0:
            break
    name = "/".join(["x" + g for g in groups[:-1]] + [groups[-1]])
    return f"tile/{level}/{name}" + ("" if width == 256 else f".p/{width}")


def read(tiles, name):
    with open(os.path.join(tiles, name), "rb") as f:
        return f.read()


def entries_of(bundle):
    entries, offset = [], 0
    while offset < len(bundle):
        length = int.from_bytes(bundle[offset:offset + 2], "big")
        entries.append(bundle[offset + 2:offset + 2 + length])
        offset += 2 + length
    return entries


def verify_log(log, location, *extra):
    keys = [a for k in log["log_keys"] for a in ("--log-key", k)]
    return run(VERIFY, "log", location, *keys, "--json", *extra)


def test_the_tiles_follow_the_specification_and_pymerkle_agrees(log):
    tiles, size = log["tiles"], log["size"]
    assert size > 300
    note = read(tiles, "checkpoint").decode()
    lines = note.split("\n")
    root = base64.b64decode(lines[2])
    # Entries: one full bundle and a partial one of size % 256; level-0 tiles likewise.
    entries = entries_of(read(tiles, path("entries", 0)))
    assert len(entries) == 256
    partial = size % 256
    entries += entries_of(read(tiles, path("entries", 1, partial)))
    assert len(entries) == size
    leaf_hashes = [hashlib.sha256(b"\x00" + e).digest() for e in entries]
    assert read(tiles, path(0, 0)) == b"".join(leaf_hashes[:256])
    assert read(tiles, path(0, 1, partial)) == b"".join(leaf_hashes[256:])
    # Level 1: one partial tile of width 1, the hash of the full level-0 tile (RFC 6962 MTH).
    tree = InmemoryTree(algorithm="sha256")
    for entry in entries[:256]:
        tree.append_entry(entry)
    assert read(tiles, path(1, 0, 1)) == tree.get_state()
    for entry in entries[256:]:
        tree.append_entry(entry)
    assert tree.get_state() == root
    # Every entry is a JWS the daemon signed (its compact form).
    assert all(e.count(b".") == 2 for e in entries)
    # The checkpoint is world-readable, and so are the directories on the way.
    assert os.stat(os.path.join(tiles, "checkpoint")).st_mode & 0o004
    assert os.stat(os.path.join(tiles, "tile", "0")).st_mode & 0o005 == 0o005


def test_stepsign_verify_log_checks_the_directory_and_an_inclusion_from_tiles(log, tmp_path):
    result = verify_log(log, log["tiles"])
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and report["treeSize"] == log["size"] and report["entries"] == log["size"]
    entry = entries_of(read(log["tiles"], path("entries", 1, log["size"] % 256)))[3]
    jws = tmp_path / "entry.jws"
    jws.write_bytes(entry)
    assert verify_log(log, log["tiles"], "--jws", str(jws), "--index", str(256 + 3)).returncode == 0
    bad = verify_log(log, log["tiles"], "--jws", str(jws), "--index", str(256 + 4))
    assert bad.returncode == 1 and "not entry" in json.loads(bad.stdout)["problem"]
    # Another key of the log's name (a well-formed vkey, C2SP signed-note: the key ID is the
    # hash of the name, type 0x01 and the Ed25519 key): the checkpoint does not verify.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    name = log["log_keys"][0].split("+")[0]
    raw = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    key_id = hashlib.sha256(name.encode() + b"\n\x01" + raw).digest()[:4].hex()
    stranger = f"{name}+{key_id}+{base64.b64encode(bytes([1]) + raw).decode()}"
    other = run(VERIFY, "log", log["tiles"], "--json", "--log-key", stranger)
    assert other.returncode == 1, other.stdout + other.stderr
    report = json.loads(other.stdout)
    assert not report["ok"] and report["problem"] == "not verified: no signature of a trusted key", other.stdout


@pytest.mark.parametrize("target", ["level-0 tile", "level-1 tile", "entry bundle", "checkpoint"])
def test_an_edit_on_disk_is_caught(log, tmp_path, target):
    copy = str(tmp_path / "tiles")
    shutil.copytree(log["tiles"], copy)
    size = log["size"]
    name = {"level-0 tile": path(0, 0), "level-1 tile": path(1, 0, 1), "entry bundle": path("entries", 0),
            "checkpoint": "checkpoint"}[target]
    data = bytearray(read(copy, name))
    if target == "checkpoint":
        data = bytearray(bytes(data).replace(f"\n{size}\n".encode(), f"\n{size - 1}\n".encode()))
    elif target == "entry bundle":
        data[100] ^= 1
    else:
        data[5] ^= 1
    with open(os.path.join(copy, name), "wb") as f:
        f.write(data)
    result = verify_log(log, copy)
    assert result.returncode == 1, result.stdout
    assert json.loads(result.stdout)["problem"], result.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nginx_serves_the_tiles_and_stepsign_verify_checks_the_url(log, tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        pytest.skip("nginx is not installed (scripts/setup installs nginx-light)")
    port = free_port()
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"""
daemon off;
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {tmp_path}/body;
    proxy_temp_path {tmp_path}/proxy;
    fastcgi_temp_path {tmp_path}/fastcgi;
    uwsgi_temp_path {tmp_path}/uwsgi;
    scgi_temp_path {tmp_path}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {log["tiles"]};
        default_type application/octet-stream;
        location = /log/checkpoint {{
            alias {log["tiles"]}/checkpoint;
            default_type "text/plain; charset=utf-8";
            add_header Cache-Control "no-store";
        }}
        location /log/ {{ alias {log["tiles"]}/; add_header Cache-Control "max-age=31536000, immutable"; }}
    }}
}}
""")
    server = subprocess.Popen([nginx, "-c", str(conf), "-p", str(tmp_path)], stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/log"
        result = verify_log(log, url)
        assert result.returncode == 0, result.stdout + result.stderr
        assert json.loads(result.stdout)["entries"] == log["size"]
        assert verify_log(log, url + "/").returncode == 0
        missing = verify_log(log, f"http://127.0.0.1:{port}/nothing-here")
        assert missing.returncode == 1 and "no checkpoint" in json.loads(missing.stdout)["problem"]
        # The monitor follows the same URL (SPEC 5.6): one line per entry, from index 0.
        keys = tmp_path / "keys.json"
        keys.write_text(run(CLI, "--socket", log["daemon"].socket, "keys", "export").stdout)
        log_keys = tmp_path / "log-keys"
        log_keys.write_text("\n".join(log["log_keys"]) + "\n")
        monitored = run(CLI, "monitor", "--url", url, "--state", str(tmp_path / "monitor.state"), "--keys", str(keys),
                        "--log-key", str(log_keys), "--once")
        assert monitored.returncode == 0, monitored.stderr
        lines = [json.loads(line) for line in monitored.stdout.splitlines()]
        assert [line["index"] for line in lines] == list(range(published_size(log["tiles"])))
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_reader_never_sees_a_checkpoint_without_its_tiles(log, tmp_path):
    client = log["client"]
    stop = threading.Event()
    failures, checks = [], [0]

    def reader():
        while not stop.is_set():
            result = verify_log(log, log["tiles"])
            checks[0] += 1
            if result.returncode != 0:
                failures.append(result.stdout + result.stderr)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for round_ in range(15):
            sign_level_0(client, 20, f"while reading {round_}")
            client.call("getCheckpoint")
    finally:
        stop.set()
        thread.join()
    assert not failures, failures[:2]
    assert checks[0] >= 2
