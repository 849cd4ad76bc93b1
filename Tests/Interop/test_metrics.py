"""Issue 27: the daemon's metrics in Prometheus's text format, checked by Prometheus's own tools.

`[metrics] listen` serves `GET /metrics` on a Unix socket (the default of the hardened unit) or
a loopback port. The counts follow what the daemon did; `promtool check metrics` (Debian's
`prometheus` package) finds nothing to say about the output; a real Prometheus server scrapes
the daemon on loopback and answers a query with the daemon's count."""
import http.client
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from conftest import PASSWORD, USER, Daemon, sign


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=10)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(self.path)


def get(path, method="GET", url="/metrics", body=None):
    connection = UnixHTTPConnection(path)
    connection.request(method, url, body=body)
    response = connection.getresponse()
    result = response.status, response.getheader("Content-Type"), response.read().decode()
    connection.close()
    return result


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition."""
    found = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)', line)
        assert match, line
        labels = frozenset(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
        found[(match.group(1), labels)] = float(match.group(3))
    return found


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def unix_metrics():
    with tempfile.TemporaryDirectory(prefix="stepsign-metrics-") as directory:
        path = os.path.join(directory, "metrics.sock")
        daemon = Daemon(directory, extra=f'[metrics]\nlisten = "unix:{path}"\n')
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        yield daemon, client, path
        client.close()
        daemon.stop()


def test_the_counts_follow_what_the_daemon_did(unix_metrics):
    daemon, client, path = unix_metrics
    before = samples(get(path)[2])
    for i in range(3):
        sign(client, f"level 0 number {i}", level=0)
    sign(client, "level 1", level=1)
    reply = client.call("authenticateUserAndSignData", user=USER, payload="wrong", reason="metrics",
                        authLevel=1, authenticatorType=0)
    assert reply["events"][0]["event"] == "getPassword"
    wrong = client.call("setPassword", password="Not-The-Password-9", challengeMode=12)
    assert wrong["events"][0]["event"] == "getPassword", wrong
    assert client.call("setPassword", password=PASSWORD, challengeMode=12)["events"][-1]["status"]["code"] == 100
    assert client.call("no.such.operation")["error"]["code"] == 4
    status, content_type, text = get(path)
    assert status == 200 and content_type == "text/plain; version=0.0.4; charset=utf-8"
    after = samples(text)

    def grew(name, **labels):
        key = (name, frozenset(labels.items()))
        return after.get(key, 0) - before.get(key, 0)

    assert grew("stepsign_signatures_total", level="0", authenticator="none") == 3
    assert grew("stepsign_signatures_total", level="1", authenticator="password") == 2
    assert grew("stepsign_stepup_answers_total", authenticator="password", outcome="success") == 2
    assert grew("stepsign_stepup_answers_total", authenticator="password", outcome="wrong") == 1
    assert grew("stepsign_refusals_total", code="4") == 1
    assert grew("stepsign_ledger_batch_entries_count") >= 5
    assert grew("stepsign_ledger_commit_duration_seconds_count") == grew("stepsign_ledger_batch_entries_count")
    # This connection is open and waiting; the scrape's is not a client connection.
    assert after[("stepsign_connections", frozenset({("state", "idle")}))] == 1
    assert after[("stepsign_connections", frozenset({("state", "working")}))] == 0
    checkpoint = after[("stepsign_log_checkpoint_timestamp_seconds", frozenset())]
    assert abs(time.time() - checkpoint) < 600
    # No user name, payload or key in any label or value.
    assert USER not in text and "level 0 number" not in text


def test_the_socket_is_0660_and_serves_nothing_but_get_metrics(unix_metrics):
    _, _, path = unix_metrics
    assert stat.S_ISSOCK(os.stat(path).st_mode) and os.stat(path).st_mode & 0o777 == 0o660
    assert get(path, url="/")[0] == 404
    assert get(path, url="/metrics/../admin")[0] == 404
    assert get(path, method="POST")[0] in (405, 413)
    assert get(path, method="PUT", body=b"x" * 100)[0] == 413
    assert get(path, method="DELETE")[0] == 405


def test_at_most_16_connections_are_served_and_holding_them_costs_the_daemon_nothing(unix_metrics):
    daemon, client, path = unix_metrics
    held = []
    for _ in range(16):
        holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        holder.connect(path)
        held.append(holder)
    try:
        time.sleep(0.5)  # accepted and counted by the server
        with pytest.raises((http.client.HTTPException, ConnectionError, socket.timeout)):
            get(path)
        # Signing does not wait on the metrics endpoint.
        sign(client, "while the metrics endpoint is full", level=0)
    finally:
        for holder in held:
            holder.close()
    deadline = time.monotonic() + 10
    while True:
        try:
            assert get(path)[0] == 200
            break
        except (http.client.HTTPException, ConnectionError):
            assert time.monotonic() < deadline, "the endpoint did not serve again once the connections closed"
            time.sleep(0.1)


def test_promtool_finds_nothing_to_say_about_the_exposition(unix_metrics, tmp_path):
    assert shutil.which("promtool"), "promtool is missing (scripts/setup installs Debian's prometheus)"
    _, client, path = unix_metrics
    sign(client, "for promtool", level=1)
    text = get(path)[2]
    checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0 and checked.stdout.strip() == "" and checked.stderr.strip() == "", checked
    # The control: promtool does complain about what it should.
    broken = subprocess.run(["promtool", "check", "metrics"], input="# TYPE stepsign_x counter\nstepsign_x 1\n",
                            capture_output=True, text=True)
    assert broken.returncode == 3 and 'counter metrics should have "_total" suffix' in broken.stderr, broken


def test_a_real_prometheus_scrapes_the_daemon_on_loopback_and_answers_a_query():
    assert shutil.which("prometheus"), "prometheus is missing (scripts/setup installs Debian's prometheus)"
    with tempfile.TemporaryDirectory(prefix="stepsign-prometheus-") as directory:
        port, web = free_port(), free_port()
        daemon = Daemon(directory, extra=f'[metrics]\nlisten = "127.0.0.1:{port}"\n')
        prometheus = None
        try:
            client = daemon.client()
            assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
            for i in range(7):
                sign(client, f"scraped {i}", level=0)
            config = os.path.join(directory, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        f"scrape_configs:\n  - job_name: stepsignd\n    static_configs:\n"
                        f"      - targets: ['127.0.0.1:{port}']\n")
            assert subprocess.run(["promtool", "check", "config", config], capture_output=True).returncode == 0
            log = open(os.path.join(directory, "prometheus.log"), "wb")
            prometheus = subprocess.Popen(
                ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={directory}/tsdb",
                 f"--web.listen-address=127.0.0.1:{web}"], stdout=log, stderr=log)
            query = urllib.parse.urlencode({"query": 'sum(stepsign_signatures_total{level="0"})'})
            value = None
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                assert prometheus.poll() is None, open(log.name).read()[-2000:]
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{web}/api/v1/query?{query}", timeout=5) as response:
                        answer = json.load(response)
                    if answer["data"]["result"]:
                        value = float(answer["data"]["result"][0]["value"][1])
                        if value == 7:
                            break
                except OSError:
                    pass
                time.sleep(0.5)
            assert value == 7, f"Prometheus answered {value}"
            with urllib.request.urlopen(f"http://127.0.0.1:{web}/api/v1/targets", timeout=5) as response:
                targets = json.load(response)["data"]["activeTargets"]
            assert [target["health"] for target in targets] == ["up"], targets
            client.close()
        finally:
            if prometheus is not None:
                prometheus.terminate()
                prometheus.wait(timeout=30)
            daemon.stop()


@pytest.mark.parametrize("listen, problem", [
    ("0.0.0.0:9464", "loopback"),
    ("192.168.1.10:9464", "loopback"),
    ("127.0.0.1:0", "port"),
    ("unix:relative.sock", "absolute"),
])
def test_a_listen_address_that_is_not_loopback_or_a_unix_path_is_refused_at_start(listen, problem):
    with tempfile.TemporaryDirectory(prefix="stepsign-metrics-bad-") as directory:
        with pytest.raises(AssertionError):
            Daemon(directory, extra=f'[metrics]\nlisten = "{listen}"\n')
        with open(os.path.join(directory, "stepsignd.log")) as f:
            text = f.read()
        assert "metrics" in text and "listen" in text and problem in text, text
