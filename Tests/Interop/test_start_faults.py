"""A start that meets an I/O fault that may pass exits 74 (EX_IOERR); a start refused for
something an operator must change still exits 78 (EX_CONFIG).

systemd/stepsignd.service restarts the daemon on failure except on 78
(`RestartPreventExitStatus=78`): a full disk being cleaned or a flaky volume at start (EIO,
ENOSPC, EMFILE, ...) must end with another code, or the daemon stays down for good once the
fault has passed. Each check runs the real stepsignd on a state directory a first daemon made
(a user, signatures acknowledged, stopped), makes one start step fail, and asserts the exit
status, the critical log line naming the path and the errno's text, and that the next start on
a healthy disk serves with nothing lost (every acknowledged signature in the ledger, the audit
ok, a new signature made).

The faults: the state directory on a tmpfs filled to the last byte (full_disk.py), and
one `openat` of one file failed with `strace --inject` (as scripts/crash-matrix does), the same
call failed with EACCES (a permission: 78) beside each transient errno."""
import base64
import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from conftest import BIN, Daemon
from full_disk import Namespace, fill

USER, PASSWORD = "startfault", "Cobalt-Meadow-52"
SIGNED = 3

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(tool) for tool in ("unshare", "nsenter", "strace")),
                                reason="needs root, unshare, nsenter and strace")


def sign(client, payload):
    """One level-0 signature; its signature ID."""
    reply = client.call("authenticateUserAndSignData", user=USER, payload=payload, reason="start faults",
                        authLevel=0, authenticatorType=0)
    assert reply["error"]["code"] == 0, reply
    event = reply["events"][-1]
    assert event["event"] == "onAuthenticateUserAndSignData" and event["status"]["code"] == 100, reply
    claims = event["details"]["payloadSignature"].split(".")[1]
    return json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))["jti"]


def first_run(directory, prefix=()):
    """A daemon's first run on `directory`: the user added and SIGNED signatures acknowledged;
    stopped. Returns their signature IDs."""
    daemon = Daemon(directory, prefix=prefix)
    client = daemon.client()
    assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
    acknowledged = [sign(client, f"before the fault {n}") for n in range(SIGNED)]
    client.close()
    daemon.stop()
    return acknowledged


def refused_start(directory, prefix=()):
    """stepsignd started on `directory` (behind `prefix`), which must exit by itself; its exit
    status and what it wrote to stderr."""
    log = os.path.join(directory, "refused.log")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*prefix, os.path.join(BIN, "stepsignd"), "--config", os.path.join(directory, "stepsignd.toml"),
             "--socket", os.path.join(directory, "s.sock"), "--state-dir", os.path.join(directory, "state")],
            stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            status = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # The whole group: behind strace or nsenter, killing the first process would leave
            # the daemon running.
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            status = None
    with open(log, errors="replace") as f:
        text = f.read()
    assert status is not None, "the start was not refused: the fault was not met\n" + text
    return status, text


def faulted_start(directory, path, calls, fault, when="1"):
    """stepsignd started on `directory` with `calls` (strace's syscall names, comma-separated)
    on `path` failed with `fault` at the `when`th call (`strace --inject`, as scripts/crash-matrix
    does); the start must meet the fault. Its exit status and what it wrote."""
    trace = os.path.join(directory, "trace.txt")
    strace = ["strace", "-f", "-qq", "-o", trace, "-e", f"trace={calls}", "-P", path,
              "-e", f"inject={calls}:error={fault}:when={when}", "--"]
    status, text = refused_start(directory, prefix=strace)
    with open(trace, errors="replace") as f:
        assert "INJECTED" in f.read(), f"the start never made {calls} on {path}"
    return status, text


def critical_lines(text, *needles):
    return [line for line in text.splitlines() if "level=critical" in line and all(n in line for n in needles)]


def check_healthy_start(directory, acknowledged, prefix=()):
    """The next start serves: the ledger holds every acknowledged signature, the audit is ok,
    and a new signature is made."""
    daemon = Daemon(directory, prefix=prefix)
    try:
        client = daemon.client()
        audit = client.call("admin.auditVerify")
        assert audit["error"]["code"] == 0 and audit["result"]["ok"] is True, audit
        in_ledger = {entry.get("signatureID") for entry in client.call("admin.exportLedger", limit=10000)["result"]["entries"]}
        assert set(acknowledged) <= in_ledger, set(acknowledged) - in_ledger
        sign(client, "after the fault")
        client.close()
    finally:
        daemon.stop()


@contextlib.contextmanager
def state_on_a_tmpfs(size):
    """A directory whose `state` is a tmpfs of `size` in a mount namespace of its own; yields
    the directory, the state directory and the namespace."""
    with tempfile.TemporaryDirectory(prefix="stepsign-start-full-") as directory:
        state = os.path.join(directory, "state")
        os.mkdir(state, 0o700)
        namespace = Namespace(state, size)
        try:
            yield directory, state, namespace
        finally:
            namespace.close()


def full_start(directory, state, namespace):
    """The state's tmpfs filled to the last byte, then stepsignd started there: its exit status
    and what it wrote. The filler is removed afterwards, so the next start has room."""
    filler = namespace.inside(os.path.join(state, "filler"))
    assert fill(filler) > 0
    try:
        return refused_start(directory, prefix=namespace.prefix())
    finally:
        os.unlink(filler)


def test_a_start_on_a_full_disk_exits_74_naming_the_path_and_the_next_start_serves_once_space_is_freed():
    with state_on_a_tmpfs("6m") as (directory, state, namespace):
        acknowledged = first_run(directory, prefix=namespace.prefix())
        status, text = full_start(directory, state, namespace)
        assert status == 74, text
        assert critical_lines(text, state, "No space left on device") or \
            critical_lines(text, state, "database or disk is full"), text
        assert "Error: " not in text, text
        check_healthy_start(directory, acknowledged, prefix=namespace.prefix())


def test_a_first_start_on_a_full_disk_exits_74_naming_the_lock_file():
    # A new state directory: the daemon's first write there is its lock's pid.
    with state_on_a_tmpfs("1m") as (directory, state, namespace):
        # The configuration, from a daemon run elsewhere: the tmpfs stays empty.
        with tempfile.TemporaryDirectory(prefix="stepsign-start-config-") as other:
            Daemon(other).stop()
            shutil.copy(os.path.join(other, "stepsignd.toml"), directory)
        status, text = full_start(directory, state, namespace)
        assert status == 74, text
        assert critical_lines(text, os.path.join(state, "stepsignd.pid"), "No space left on device"), text
        check_healthy_start(directory, [], prefix=namespace.prefix())


@pytest.fixture(scope="module")
def template():
    """A state directory a first daemon left (a user, SIGNED signatures, stopped), copied per check."""
    with tempfile.TemporaryDirectory(prefix="stepsign-start-faults-") as directory:
        acknowledged = first_run(directory)
        yield directory, acknowledged


@contextlib.contextmanager
def copy_of(source):
    """A copy of the template's directory (its configuration and state), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="stepsign-start-fault-") as directory:
        os.rmdir(directory)
        shutil.copytree(source, directory, ignore=shutil.ignore_patterns("s.sock", "*.log"))
        yield directory


# (the file under the state directory, the errno injected into its openat, which openat (1: the
# first only, 1+: every one), the exit status, the words of that errno the log must say)
INJECTED = [
    ("stepsignd.pid", "EIO", "1", 74, "Input/output error"),          # the state directory's lock
    ("stepsignd.pid", "EACCES", "1", 78, "Permission denied"),
    ("keys/seal.key", "EIO", "1", 74, "Input/output error"),          # the credential records' seal key
    ("stepsign.sqlite", "EMFILE", "1", 74, "Too many open files"),    # the database
    ("stepsign.sqlite", "ENOSPC", "1", 74, "No space left on device"),
    ("stepsign.sqlite", "EACCES", "1", 78, "Permission denied"),
    # SQLite's own open of its WAL: it falls back to read-only and keeps no errno; the store
    # opens the file again to tell a fault that passed from a permission that stays.
    ("stepsign.sqlite-wal", "EIO", "1", 74, "readonly database"),
    ("stepsign.sqlite-wal", "EACCES", "1+", 78, "Permission denied"),
    ("keys", "EIO", "1", 74, "Input/output error"),                   # strict modes' check of keys/
    ("keys", "EIO", "2", 74, "Input/output error"),                   # the keyring's listing of keys/
    ("keys", "EACCES", "1", 78, "Permission denied"),
    ("keys/*.pem", "EIO", "1", 74, "Input/output error"),             # the signing key
    ("keys/log-ed25519.key", "ENOMEM", "1", 74, "Cannot allocate memory"),  # the log's key
]


@pytest.mark.parametrize("name,fault,when,expected,words", INJECTED,
                         ids=[f"{n}-{f}-{w}" for n, f, w, _, _ in INJECTED])
def test_a_failed_open_at_start_exits_74_when_it_may_pass_and_78_when_it_is_a_setting(template, name, fault, when,
                                                                                       expected, words):
    source, acknowledged = template
    with copy_of(source) as directory:
        state = os.path.join(directory, "state")
        path = os.path.join(state, name)
        if "*" in name:
            matches = glob.glob(path)
            assert len(matches) == 1, (name, os.listdir(os.path.join(state, "keys")))
            path = matches[0]
        status, text = faulted_start(directory, path, "openat", fault, when)
        assert status == expected, text
        if expected == 74:
            # The file SQLite could not open is not in its error: the database is named.
            named = os.path.join(state, "stepsign.sqlite") if name.startswith("stepsign.sqlite-") else path
            assert critical_lines(text, named, words), text
        else:
            assert path in text and words in text, text
        assert "Error: " not in text, text

        check_healthy_start(directory, acknowledged)


# The configuration file: its open or its read failed (the log is not set up yet, so the line
# is on standard error, which is the journal under systemd).
CONFIG_FAULTS = [
    ("read", "EIO", 74, "Input/output error"),
    ("openat", "EMFILE", 74, "Too many open files"),
    ("openat", "EACCES", 78, "permission denied"),
]


@pytest.mark.parametrize("call,fault,expected,words", CONFIG_FAULTS, ids=[f"{c}-{f}" for c, f, _, _ in CONFIG_FAULTS])
def test_a_failed_read_of_the_configuration_exits_74_when_it_may_pass_and_78_when_it_is_a_setting(template, call, fault,
                                                                                                   expected, words):
    source, acknowledged = template
    with copy_of(source) as directory:
        config = os.path.join(directory, "stepsignd.toml")
        status, text = faulted_start(directory, config, call, fault)
        assert status == expected, text
        assert config in text and words in text, text
        assert "Error: " not in text, text
        check_healthy_start(directory, acknowledged)


# The log's files kept outside the database (SPEC §5.5), read at start: the checkpoint this
# daemon signed last, the chain's head beside it, and a checkpoint a crash left pending (made
# here from the kept one: its transaction committed, so the next start keeps it). A read that
# failed for a fault that may pass was taken for a missing file (the head's check silently off,
# the pending checkpoint deleted) or refused the log; it is now exit 74 and a retry.
KEPT_READS = ["keys/log-checkpoint", "keys/log-checkpoint.head", "keys/log-checkpoint.pending"]


@pytest.mark.parametrize("name", KEPT_READS)
def test_a_failed_read_of_the_logs_kept_files_exits_74_and_the_next_start_serves(template, name):
    source, acknowledged = template
    with copy_of(source) as directory:
        keys = os.path.join(directory, "state", "keys")
        if name.endswith(".pending"):
            shutil.copy(os.path.join(keys, "log-checkpoint"), os.path.join(keys, "log-checkpoint.pending"))
        path = os.path.join(directory, "state", name)
        assert os.path.exists(path), os.listdir(keys)
        status, text = faulted_start(directory, path, "read", "EIO")
        assert status == 74, text
        assert critical_lines(text, path, "Input/output error"), text
        assert os.path.exists(path), "the file the start could not read is kept"
        check_healthy_start(directory, acknowledged)
        if name.endswith(".pending"):
            assert not os.path.exists(path), "the next start settled the pending checkpoint"


def test_a_failed_check_of_the_log_key_exits_74_and_keeps_the_key(template):
    """The log's long-lived key (SPEC §2) is made only when there is none: a check of its file
    that failed (EIO) made a new one over it, and the log's witnesses would have refused every
    checkpoint after."""
    source, acknowledged = template
    with copy_of(source) as directory:
        path = os.path.join(directory, "state", "keys", "log-ed25519.key")
        with open(path, "rb") as f:
            before = f.read()
        status, text = faulted_start(directory, path, "access,faccessat,faccessat2", "EIO")
        assert status == 74, text
        assert critical_lines(text, path, "Input/output error"), text
        with open(path, "rb") as f:
            assert f.read() == before, "the log key was replaced"
        check_healthy_start(directory, acknowledged)
        with open(path, "rb") as f:
            assert f.read() == before, "the log key was replaced"
