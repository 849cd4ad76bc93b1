"""The Debian package under a real systemd (issue #13, item 2).

A minimal Debian 12 root (debootstrap, cached outside the repository: debian_root.py) is
copied, booted with `systemd-nspawn -b` (booted_container.py), and the package from
$STEPSIGN_DEB is installed with `apt-get install ./…`, so its Depends: are proven against the
archive. Then, in order, as an operator and a user would: enable the socket, let the first
connection start the daemon, sign at level 0 and 1 as a member of group stepsign, reload a
changed policy under an open connection, keep the watchdog fed, run the forgot-password
notifier and rotate keys under the unit's seccomp filter and MemoryDenyWriteExecute, encrypt
keys with a LoadCredential= passphrase, check the unit's `systemd-analyze security`, the
journal, stop and restart with the ledger intact, reinstall over a running daemon, and
remove the package keeping the state.

The steps share one booted container and run in file order; conftest.py fails the steps after
a failed one. The container is powered off and its copy deleted at the end, also on failure.
This test never skips: without root, systemd-nspawn, debootstrap or $STEPSIGN_DEB it fails and
says what is missing. Alone (scripts/test runs it after building the package):

    STEPSIGN_DEB="$(bash scripts/package)" python3 -m pytest -q Tests/System
"""
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import tempfile
import time

import pytest

from booted_container import BootedContainer
from debian_root import cached_root, copy_host_apt_configuration, fresh_copy

ALICE_PASSWORD = "Umber-Falcon-58"
BOB_PASSWORD = "Violet-Marten-29"
BOB_NEW_PASSWORD = "Saffron-Otter-74"
KEY_PASSPHRASE = "teal-orbit-cascade-9041"
CONFIG = "/etc/stepsign/stepsignd.toml"
NOTIFIER = "/usr/local/libexec/stepsign-boot-notifier"
DROP_IN = "/etc/systemd/system/stepsignd.service.d"
MAX_EXPOSURE = 2.0
# The unit with packaging/examples/postgresql-tcp.conf (docs/scale-out.md): the shipped 0.5
# plus the three network checks TCP cannot avoid measured 1.3; 1.5 leaves room for a
# systemd that weighs them a little differently, while any further loosening fails the
# test's own check of which items changed.
MAX_EXPOSURE_TCP = 1.5
TCP_DROP_IN = f"{DROP_IN}/70-postgresql-tcp.conf"
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# What the steps learn and later steps check: every signature made (JWS, payload, level).
signatures = []
activation_codes = []


@pytest.fixture(scope="module")
def box():
    missing = [tool for tool in ("systemd-nspawn", "debootstrap", "nsenter") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the boot test cannot run here: {', '.join(missing)} missing "
                    "(scripts/setup installs systemd-container, debootstrap and util-linux)")
    if os.geteuid() != 0:
        pytest.fail("the boot test needs root (debootstrap, systemd-nspawn, nsenter)")
    deb = os.environ.get("STEPSIGN_DEB", "")
    if not deb or not os.path.isfile(deb):
        pytest.fail(f"STEPSIGN_DEB must name the package to test (scripts/package prints it); got {deb!r}")

    # A CI timeout's SIGTERM tears down like Ctrl-C: pytest then still runs this finalizer.
    previous_handler = signal.signal(signal.SIGTERM, interrupt)
    root = cached_root()
    workdir = tempfile.mkdtemp(prefix="stepsign-boot-", dir="/var/tmp")
    container = None
    try:
        copy = fresh_copy(root, workdir)
        copy_host_apt_configuration(copy)
        shutil.copy(deb, os.path.join(copy, "srv"))
        container = BootedContainer(copy, f"stepsign-boot-{os.getpid()}", os.path.join(workdir, "console.log"))
        container.deb = "/srv/" + os.path.basename(deb)
        container.boot()
        yield container
    finally:
        if container is not None:
            container.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous_handler)


# --- helpers ------------------------------------------------------------------------------------

def interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def jws_part(jws, index):
    part = jws.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def sign(box, user, level, payload, password_file=None):
    argv = ["stepsign", "sign", "--user", user, "--level", str(level), "--reason", "boot test", "--payload", payload]
    if password_file is not None:
        argv += ["--password-file", password_file]
    return box.run(argv, user=user, check=False)


def signed(box, user, level, payload, password_file=None):
    """Signs and records the signature; fails with the CLI's output if it was not made."""
    result = sign(box, user, level, payload, password_file)
    jws = result.stdout.strip()
    assert result.returncode == 0 and jws.count(".") == 2, \
        f"{user} could not sign at level {level}: {result.returncode}\n{result.stderr}\n{journal(box)[-3000:]}"
    signatures.append({"jws": jws, "payload": payload, "level": level, "user": user})
    return jws


def journal(box, *extra):
    return box.run(["journalctl", "--no-pager", "-u", "stepsignd.service", *extra]).stdout


def add_user(box, user, password):
    box.write(f"/root/{user}.pw", password + "\n", mode=0o600)
    box.run(["stepsign", "admin", "user", "add", "--user", user, "--password-file", f"/root/{user}.pw"])
    box.run(["rm", f"/root/{user}.pw"])


def main_pid(box):
    return int(box.show("stepsignd.service", "MainPID")["MainPID"])


def set_config(box, section, key, value):
    """Sets `key = value` in [section] of the installed configuration, as an operator edits it."""
    text = box.read(CONFIG)
    pattern = re.compile(rf"(^\[{re.escape(section)}\][^\[]*?^){re.escape(key)} = [^\n#]*?(\s*(#|$))", re.M | re.S)
    changed, count = pattern.subn(lambda m: f"{m.group(1)}{key} = {value}{m.group(2)}", text, count=1)
    assert count == 1, f"no {key} in [{section}] of {CONFIG}"
    box.write(CONFIG, changed, mode=0o640)
    box.run(["chgrp", "stepsign", CONFIG])


def wait_until_reading_stdin(process, name="stepsign", timeout=60):
    """Waits until a thread of a process `name` started by `process` (through nsenter and
    setpriv) blocks in read(0, …): the CLI has its challenge and waits for the answer on stdin.
    (Any thread: the CLI's work runs on a thread of Swift's concurrency pool.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the CLI ended early: {process.communicate()}"
        for pid in descendants(process.pid):
            try:
                with open(f"/proc/{pid}/comm") as f:
                    comm = f.read().strip()
                syscalls = []
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/syscall") as f:
                        syscalls.append(f.read().split())
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue
            if comm == name and any(syscall[:2] == ["0", "0x0"] for syscall in syscalls):
                return
        time.sleep(0.1)
    raise AssertionError(f"{name} did not wait for its answer on stdin within {timeout} s")


def descendants(pid):
    found, stack = [], [pid]
    while stack:
        parent = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    children = [int(child) for child in f.read().split()]
            except FileNotFoundError:
                continue
            found += children
            stack += children
    return found


# --- the steps ----------------------------------------------------------------------------------

def test_apt_installs_the_package_with_its_dependencies_and_starts_nothing(box):
    status = "${db:Status-Status}"
    assert box.run(["dpkg-query", "-W", f"-f={status}", "libsqlite3-0"], check=False).stdout != "installed", \
        "the root already has libsqlite3-0: the install would not prove Depends:"
    box.run(["apt-get", "update", "-q"])
    box.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", box.deb],
            env={"DEBIAN_FRONTEND": "noninteractive"})
    assert box.run(["dpkg-query", "-W", f"-f={status}", "stepsign"]).stdout == "installed"
    depends = box.run(["dpkg-query", "-W", "-f=${Depends}", "stepsign"]).stdout
    assert "libsqlite3-0" in depends and "libssl3" in depends, depends
    for group in depends.split(","):
        names = [alternative.split()[0].split(":")[0] for alternative in group.split("|")]
        states = [box.run(["dpkg-query", "-W", f"-f={status}", name], check=False).stdout for name in names]
        assert "installed" in states, f"Depends: {group.strip()} is not satisfied after apt-get install"
    for path in ("/usr/sbin/stepsignd", "/usr/bin/stepsign", "/usr/bin/stepsign-verify", "/usr/bin/stepsign-witness",
                 "/usr/sbin/stepsign-witnessd"):
        box.run(["test", "-x", path])
    # The static binary runs without /opt/swift (which the container does not have), is each
    # program under its name, and is the version the package says.
    version = box.run(["dpkg-query", "-W", "-f=${Version}", "stepsign"]).stdout
    for binary in ("stepsignd", "stepsign", "stepsign-verify", "stepsign-witness", "stepsign-witnessd"):
        assert box.run([binary, "--version"]).stdout.strip() == version.rsplit("-", 1)[0], binary
        assert f"USAGE: {binary} " in box.run([binary, "--help"]).stdout, binary
    # Issue 27: at most 100 MB installed (it was about 185 MB), as dpkg counts it and as the disk does.
    installed_kib = int(box.run(["dpkg-query", "-W", "-f=${Installed-Size}", "stepsign"]).stdout)
    files = [path for path in box.run(["dpkg", "-L", "stepsign"]).stdout.splitlines()
             if box.run(["test", "-f", path, "-a", "!", "-L", path], check=False).returncode == 0]
    on_disk_kib = sum(int(line.split()[0]) for line in
                      box.run(["du", "-k", "--apparent-size", *files]).stdout.splitlines())
    print(f"installed: dpkg says {installed_kib} KiB, the files take {on_disk_kib} KiB")
    assert on_disk_kib <= 100 * 1024 and installed_kib <= 100 * 1024
    # The package makes the user and the directories but enables and starts nothing.
    assert box.run(["getent", "passwd", "stepsign"]).stdout.split(":")[6].strip() == "/usr/sbin/nologin"
    assert box.run(["stat", "-c", "%a %U %G", "/var/lib/stepsign"]).stdout.split() == ["700", "stepsign", "stepsign"]
    assert box.run(["stat", "-c", "%a %U %G", "/etc/stepsign"]).stdout.split() == ["750", "root", "stepsign"]
    assert box.run(["id", "-nG", "stepsign-witnessd"]).stdout.split() == ["stepsign-witnessd", "stepsign"]
    for unit in ("stepsignd.socket", "stepsignd.service", "stepsign-witnessd.service", "stepsign-witness.service",
                 "stepsign-monitor.service"):
        state = box.show(unit, "UnitFileState", "ActiveState")
        assert state == {"UnitFileState": "disabled", "ActiveState": "inactive"}, f"{unit}: {state}"


def test_operator_sets_up_clients_a_notifier_and_a_short_watchdog(box):
    for user in ("alice", "bob"):
        box.run(["useradd", "--create-home", "--groups", "stepsign", user])
    box.write("/home/alice/password", ALICE_PASSWORD + "\n", mode=0o600, owner="alice")
    # The forgot-password notifier: keeps the message, and the sandbox it ran in, for the test.
    box.write(NOTIFIER, "#!/bin/sh\n"
                        "# stepsign boot test: keeps the activation message where the test reads it.\n"
                        "set -e\n"
                        "umask 077\n"
                        "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status > /run/stepsign/notifier-status\n"
                        "cat > /run/stepsign/notified.tmp\n"
                        "mv /run/stepsign/notified.tmp /run/stepsign/notified.json\n", mode=0o755)
    set_config(box, "forgot_password", "notifier", f'["{NOTIFIER}"]')
    box.write(f"{DROP_IN}/50-boot-test-watchdog.conf", "[Service]\nWatchdogSec=4s\n")
    box.run(["systemctl", "daemon-reload"])
    # (WatchdogUSec shows the setting once the service has started: the watchdog step checks it.)
    drop_ins = box.show("stepsignd.service", "DropInPaths")["DropInPaths"]
    assert f"{DROP_IN}/50-boot-test-watchdog.conf" in drop_ins, drop_ins


def test_enabled_socket_listens_and_the_first_connection_starts_the_daemon(box):
    box.run(["systemctl", "enable", "--now", "stepsignd.socket"])
    socket_state = box.show("stepsignd.socket", "ActiveState", "SubState", "UnitFileState")
    assert socket_state == {"ActiveState": "active", "SubState": "listening", "UnitFileState": "enabled"}, socket_state
    assert box.run(["stat", "-c", "%a %U %G", "/run/stepsign/stepsignd.sock"]).stdout.split() == \
        ["660", "root", "stepsign"]
    assert box.show("stepsignd.service", "ActiveState")["ActiveState"] == "inactive", \
        "the daemon runs before any connection"
    # A member of stepsign connects: systemd starts the daemon and hands it the socket.
    status = box.run(["stepsign", "status"], user="alice", check=False)
    assert status.returncode == 0, f"{status.stderr}\n{journal(box)}"
    # What the operator reads: plain lines (it once printed `stepsignd string("0.1.0")`).
    assert re.match(r"stepsignd \d+\.\d+\.\d+\S*, up [0-9dhms ]+\nactive key [A-Za-z0-9_-]{43}\n\d+ signatures?\n",
                    status.stdout), status.stdout
    service = box.show("stepsignd.service", "ActiveState", "SubState", "StatusText", "MainPID", "NRestarts")
    assert service["ActiveState"] == "active" and service["SubState"] == "running", service
    assert service["StatusText"] == "listening on the socket systemd passed (fd 3)", service
    with open(f"/proc/{box.pid1}/root/etc/passwd") as f:
        stepsign_uid = next(line.split(":")[2] for line in f if line.startswith("stepsign:"))
    process = box.read(f"/proc/{service['MainPID']}/status")
    assert re.search(rf"^Uid:\s+{stepsign_uid}\s", process, re.M), "the daemon does not run as stepsign"
    # Once the service runs, systemd has given its RuntimeDirectory (and the socket in it) to
    # the service's user, as the README says.
    assert box.run(["stat", "-c", "%a %U %G", "/run/stepsign/stepsignd.sock"]).stdout.split() == \
        ["660", "stepsign", "stepsign"]


def test_a_member_of_stepsign_signs_at_level_1_and_level_0_is_off_by_default(box):
    add_user(box, "alice", ALICE_PASSWORD)
    jws = signed(box, "alice", 1, "release 1.0 approved", "/home/alice/password")
    claims = jws_part(jws, 1)
    alice_uid = int(box.run(["id", "-u", "alice"]).stdout)
    assert (claims["sub"], claims["authLevel"], claims["peer"]["uid"], claims["peer"]["comm"]) == \
        ("alice", 1, alice_uid, "stepsign"), claims
    refused = sign(box, "alice", 0, "no authentication")
    assert refused.returncode == 1 and "170" in refused.stderr, refused.stderr
    box.run(["sh", "-c", "umask 077; echo Wrong-Guess-11 > /home/alice/wrong"], user="alice")  # a secret file, 0600
    bad = sign(box, "alice", 1, "with a wrong password", "/home/alice/wrong")
    assert bad.returncode == 1 and bad.stdout.strip() == "" and "attempts left" in bad.stderr, bad


def readme_line(prefix):
    """The README's command line that begins with `prefix`, without its comment."""
    with open(os.path.join(REPOSITORY, "README.md")) as f:
        for line in f:
            if line.startswith(prefix):
                return line.split("   #", 1)[0].strip()
    raise AssertionError(f"the README has no line beginning with {prefix!r}")


def test_the_readmes_first_signature_as_written(box):
    """Issue 39: the README's `su - alice -c 'stepsign sign …'` failed with "no terminal to ask
    for the password on": `su -c` starts the command in a session with no controlling terminal.
    Run here as the README writes it, on a pseudo-terminal, typing the password when asked."""
    import pexpect
    import shlex
    line = readme_line("su - alice -c ")
    argv = shlex.split(line)
    assert argv[:3] == ["su", "-", "alice"], line
    payload = shlex.split(argv[4])[shlex.split(argv[4]).index("--payload") + 1]
    child = pexpect.spawn(box.command(argv)[0], box.command(argv)[1:], timeout=60, encoding="utf-8")
    try:
        child.expect(r"Password for alice \(\d+ attempts? left\): ")
        child.sendline(ALICE_PASSWORD)
        child.expect(pexpect.EOF)
    finally:
        output = child.before if isinstance(child.before, str) else ""
        child.close()
    assert child.exitstatus == 0, f"{line}\n{output}"
    assert ALICE_PASSWORD not in output, "the password was echoed"
    jws = output.strip().split("\n")[-1].strip()
    assert jws.count(".") == 2, output
    assert jws_part(jws, 1)["sub"] == "alice"
    signatures.append({"jws": jws, "payload": payload, "level": 1, "user": "alice"})


def test_reload_applies_a_changed_policy_and_keeps_an_open_connection(box):
    pid = main_pid(box)
    held = box.spawn(["stepsign", "sign", "--user", "alice", "--level", "1", "--reason", "boot test",
                      "--payload", "answered after the reload", "--password-fd", "0"], user="alice")
    try:
        wait_until_reading_stdin(held)
        set_config(box, "signing", "allow_level_0", "true")
        box.run(["systemctl", "reload", "stepsignd.service"])
        # On systemd 252 the reload command (a kill) may return before the daemon has sent
        # RELOADING=1 (docs/decisions.md), so wait for its READY=1 status.
        deadline = time.monotonic() + 30
        while True:
            service = box.show("stepsignd.service", "ActiveState", "StatusText", "MainPID")
            if service["StatusText"] == "configuration reloaded" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert service == {"ActiveState": "active", "StatusText": "configuration reloaded", "MainPID": str(pid)}, \
            f"{service}\n{journal(box)[-2000:]}"
        # The connection opened before the reload answers its challenge after it.
        out, err = held.communicate(ALICE_PASSWORD + "\n", timeout=60)
    finally:
        if held.poll() is None:
            held.kill()
            held.communicate()
    assert held.returncode == 0 and out.strip().count(".") == 2, f"{held.returncode}\n{err}"
    signatures.append({"jws": out.strip(), "payload": "answered after the reload", "level": 1, "user": "alice"})
    # The new policy is in force: level 0 is allowed now.
    jws = signed(box, "alice", 0, "no authentication, allowed after the reload")
    assert jws_part(jws, 1)["authLevel"] == 0
    assert "configuration reloaded" in journal(box)


def test_a_bad_file_fails_the_reload_through_the_check_and_never_reaches_the_daemon(box):
    """SPEC 8 (issue 42): ExecReload= runs `stepsignd --check` first. A value out of range fails
    `systemctl reload` with the file, line and key in the journal; the daemon never got the
    SIGHUP (same PID, no new reload line, still signing); the fixed file reloads again."""
    pid = main_pid(box)
    good = box.read(CONFIG)
    reloads_before = journal(box).count("configuration reloaded")
    set_config(box, "password", "max_attempts", "0")
    try:
        line = next(number for number, text in enumerate(box.read(CONFIG).splitlines(), 1)
                    if text.startswith("max_attempts = 0"))
        check = box.run(["stepsignd", "--check", "--config", CONFIG], user="stepsign", check=False)
        assert check.returncode == 78, check
        assert f"{CONFIG}:{line}: password.max_attempts: expected an integer from 1 to 100" in check.stderr, check.stderr
        result = box.run(["systemctl", "reload", "stepsignd.service"], check=False)
        assert result.returncode != 0, result
        assert f"{CONFIG}:{line}: password.max_attempts" in journal(box), journal(box)[-3000:]
        assert main_pid(box) == pid
        assert journal(box).count("configuration reloaded") == reloads_before
        assert box.show("stepsignd.service", "ActiveState")["ActiveState"] == "active"
    finally:
        box.write(CONFIG, good, mode=0o640)
        box.run(["chgrp", "stepsign", CONFIG])
    check = box.run(["stepsignd", "--check", "--config", CONFIG], user="stepsign", check=False)
    assert check.returncode == 0 and "configuration ok" in check.stdout, check
    box.run(["systemctl", "reload", "stepsignd.service"])
    deadline = time.monotonic() + 30
    while journal(box).count("configuration reloaded") == reloads_before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert journal(box).count("configuration reloaded") > reloads_before
    signed(box, "alice", 0, "signed after a refused and a good reload")


def test_git_signs_a_commit_through_the_installed_agent_socket(box):
    """SPEC 3.5 (issue 42): the package's agent socket unit and drop-in, as docs/packaging.md
    says to turn them on; then the README's git lines as alice: a commit signed after
    `stepsign unlock` verifies with `git verify-commit`, and after `stepsign lock` git cannot
    sign. Stock git and OpenSSH from Debian, installed in the booted root."""
    box.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "git", "openssh-client"],
            env={"DEBIAN_FRONTEND": "noninteractive"})
    set_config(box, "ssh_agent", "socket", '"/run/stepsign/agent.sock"')
    box.run(["install", "-D", "-m", "0644", "/usr/share/doc/stepsign/examples/ssh-agent.conf",
             f"{DROP_IN}/ssh-agent.conf"])
    box.run(["systemctl", "daemon-reload"])
    # Not `enable --now` while the daemon runs: systemd refuses to start a socket whose service
    # is active (the first run of this test found the documented line failing so).
    box.run(["systemctl", "enable", "stepsignd-agent.socket"])
    box.run(["systemctl", "restart", "stepsignd.service"])
    assert box.show("stepsignd-agent.socket", "ActiveState")["ActiveState"] == "active"
    socket = box.run(["stat", "-c", "%a %G", "/run/stepsign/agent.sock"]).stdout.split()
    assert socket == ["660", "stepsign"], socket
    setup = ("set -e; cd; stepsign keys export --ssh > stepsign.pub; "
             "stepsign keys export --ssh-allowed-signers alice@example.org > allowed_signers; "
             "git init -q repo; cd repo; git config user.name alice; git config user.email alice@example.org; "
             "git config gpg.format ssh; git config user.signingkey ~/stepsign.pub; "
             "git config gpg.ssh.allowedSignersFile ~/allowed_signers")
    box.run(["sh", "-c", setup], user="alice")
    listed = box.run(["ssh-add", "-L"], user="alice", env={"SSH_AUTH_SOCK": "/run/stepsign/agent.sock"})
    assert listed.stdout.startswith("ecdsa-sha2-nistp256 "), listed
    assert listed.stdout.split()[1] == box.read("/home/alice/stepsign.pub").split()[1], listed.stdout
    commit = ["sh", "-c", 'cd ~/repo && git commit -q --allow-empty -S -m "$0"']
    agent = {"SSH_AUTH_SOCK": "/run/stepsign/agent.sock"}
    refused = box.run(commit + ["before unlock"], user="alice", env=agent, check=False)
    assert refused.returncode != 0, refused
    box.run(["stepsign", "unlock", "--user", "alice", "--for", "15m", "--password-file", "/home/alice/password"], user="alice")
    box.run(commit + ["signed through stepsign"], user="alice", env=agent)
    verified = box.run(["sh", "-c", "cd ~/repo && git verify-commit HEAD"], user="alice", check=False)
    assert verified.returncode == 0 and 'Good "git" signature for alice@example.org' in verified.stderr, verified
    box.run(["stepsign", "lock"], user="alice")
    after = box.run(commit + ["after lock"], user="alice", env=agent, check=False)
    assert after.returncode != 0, after
    assert "ssh-agent refused" in journal(box), journal(box)[-3000:]


def test_the_watchdog_is_fed(box):
    service = box.show("stepsignd.service", "WatchdogUSec", "MainPID", "WatchdogTimestampMonotonic")
    assert service["WatchdogUSec"] == "4s", service
    first_ping = int(service["WatchdogTimestampMonotonic"])
    time.sleep(10)  # two and a half watchdog periods
    after = box.show("stepsignd.service", "ActiveState", "MainPID", "NRestarts", "WatchdogTimestampMonotonic")
    assert after["ActiveState"] == "active" and after["MainPID"] == service["MainPID"] and after["NRestarts"] == "0", \
        f"{after}\n{journal(box)[-2000:]}"
    assert int(after["WatchdogTimestampMonotonic"]) > first_ping, "no WATCHDOG=1 reached systemd in 10 s"
    assert "watchdog timeout" not in journal(box).lower()


def test_the_forgot_password_notifier_runs_under_the_units_sandbox(box):
    add_user(box, "bob", BOB_PASSWORD)
    box.write("/home/bob/new-password", BOB_NEW_PASSWORD + "\n", mode=0o600, owner="bob")
    reset = box.spawn(["stepsign", "forgot-password", "--user", "bob", "--code-fd", "0",
                       "--new-password-file", "/home/bob/new-password"], user="bob")
    try:
        deadline = time.monotonic() + 60
        message = None
        while message is None:
            assert reset.poll() is None, f"forgot-password ended early: {reset.communicate()}\n{journal(box)[-2000:]}"
            assert time.monotonic() < deadline, f"the notifier wrote nothing in 60 s\n{journal(box)[-2000:]}"
            found = box.run(["cat", "/run/stepsign/notified.json"], check=False)
            if found.returncode == 0:
                message = json.loads(found.stdout)
            else:
                time.sleep(0.2)
        assert message["user"] == "bob", message
        activation_codes.append(message["activationCode"])
        out, err = reset.communicate(message["activationCode"] + "\n", timeout=120)
    finally:
        if reset.poll() is None:
            reset.kill()
            reset.communicate()
    assert reset.returncode == 0, f"{out}\n{err}"
    sandbox = box.read("/run/stepsign/notifier-status")
    assert re.search(r"^NoNewPrivs:\s+1$", sandbox, re.M) and re.search(r"^Seccomp:\s+2$", sandbox, re.M), sandbox
    box.run(["stepsign", "login", "--user", "bob", "--password-file", "/home/bob/new-password"], user="bob")


def test_key_rotation_under_seccomp_and_memory_deny_write_execute(box):
    pid = main_pid(box)
    process = box.read(f"/proc/{pid}/status")
    assert re.search(r"^Seccomp:\s+2$", process, re.M) and re.search(r"^NoNewPrivs:\s+1$", process, re.M), process
    before = jws_part(signatures[-1]["jws"], 0)["kid"]
    rotated = json.loads(box.run(["stepsign", "admin", "key", "rotate", "--json"]).stdout)["activeKid"]
    assert rotated and rotated != before
    jws = signed(box, "alice", 1, "signed with the rotated key", "/home/alice/password")
    assert jws_part(jws, 0)["kid"] == rotated
    maps = box.read(f"/proc/{pid}/maps")
    assert [line for line in maps.splitlines() if line.split()[1].startswith("rwx")] == []
    assert main_pid(box) == pid


def test_a_load_credential_passphrase_encrypts_new_keys_across_restarts(box):
    box.write("/etc/stepsign/key-passphrase", KEY_PASSPHRASE + "\n", mode=0o600)
    box.write(f"{DROP_IN}/60-boot-test-passphrase.conf",
              "[Service]\nLoadCredential=stepsign-key-passphrase:/etc/stepsign/key-passphrase\n")
    box.run(["systemctl", "daemon-reload"])
    box.run(["systemctl", "restart", "stepsignd.service"])
    encrypted = json.loads(box.run(["stepsign", "admin", "key", "rotate", "--json"]).stdout)["activeKid"]
    key_files = box.run(["sh", "-c", "grep -l 'BEGIN ENCRYPTED PRIVATE KEY' /var/lib/stepsign/keys/*"],
                        check=False).stdout.split()
    # The new signing key alone among the signing keys; the log key stays (SPEC 2: it is the
    # log's identity towards witnesses), so it is still the one written before the passphrase.
    signing = [path for path in key_files if path.endswith(".pem")]
    assert signing == [f"/var/lib/stepsign/keys/{encrypted}.pem"], f"expected the new key alone encrypted: {key_files}"
    assert "/var/lib/stepsign/keys/log-ed25519.key" not in key_files, key_files
    # Its own rotation writes the new log key encrypted, and keeps the old one beside it.
    rotated = json.loads(box.run(["stepsign", "admin", "log-key", "rotate", "--json"]).stdout)
    assert len(rotated["logKeys"]) >= 2 and rotated["overlapUntilSize"] > 0, rotated
    key_files = box.run(["sh", "-c", "grep -l 'BEGIN ENCRYPTED PRIVATE KEY' /var/lib/stepsign/keys/*"],
                        check=False).stdout.split()
    assert "/var/lib/stepsign/keys/log-ed25519.key" in key_files, key_files
    box.run(["systemctl", "restart", "stepsignd.service"])
    assert "keysEncrypted=true" in journal(box, "-n", "50")
    jws = signed(box, "alice", 1, "signed with an encrypted key", "/home/alice/password")
    assert jws_part(jws, 0)["kid"] == encrypted


def test_every_signature_verifies_offline_with_the_exported_keys(box):
    keys = box.run(["stepsign", "keys", "export"], user="alice").stdout
    box.write("/home/alice/keys.jwks", keys, owner="alice")
    for signature in signatures:
        argv = ["stepsign-verify", "verify", "--keys", "/home/alice/keys.jwks", "--user", signature["user"],
                "--payload", signature["payload"], "--min-level", str(signature["level"])]
        result = box.run(argv, user="alice", input=signature["jws"], check=False)
        assert result.returncode == 0, f"{signature['payload']}: {result.stdout}{result.stderr}"
    forged = box.run(["stepsign-verify", "verify", "--keys", "/home/alice/keys.jwks", "--payload", "something else"],
                     user="alice", input=signatures[0]["jws"], check=False)
    assert forged.returncode == 1, forged


def test_systemd_analyze_security_of_the_installed_unit_is_at_most_2(box):
    report = box.run(["systemd-analyze", "security", "--no-pager", "stepsignd.service"], check=False)
    match = re.search(r"Overall exposure level for stepsignd\.service: (\d+\.\d+)", report.stdout + report.stderr)
    assert match, report.stdout + report.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, report.stdout


def exposure(box):
    """`systemd-analyze security` of stepsignd.service: the overall figure and the names of
    the checks it fails (✗)."""
    report = box.run(["systemd-analyze", "security", "--no-pager", "stepsignd.service"], check=False)
    text = report.stdout + report.stderr
    match = re.search(r"Overall exposure level for stepsignd\.service: (\d+\.\d+)", text)
    assert match, text
    failed = {line.split()[1] for line in text.splitlines() if line.startswith("✗")}
    return float(match.group(1)), failed, text


def test_the_postgresql_tcp_drop_in_opens_only_the_network_and_stays_at_most_1_5(box):
    """The example drop-in of docs/scale-out.md for a database over TCP, installed from the
    package's examples as the guide says. It may cost exactly the three network checks (Internet sockets, the host's
    network, an allow list with a non-local address), nothing else: the shipped unit's 0.5 plus
    those stays at most MAX_EXPOSURE_TCP. The daemon still starts and signs under it."""
    shipped, shipped_failed, _ = exposure(box)
    # The package ships the example; installed with the guide's command.
    box.run(["install", "-D", "-m", "0644", "/usr/share/doc/stepsign/examples/postgresql-tcp.conf", TCP_DROP_IN])
    with open(os.path.join(REPOSITORY, "packaging", "examples", "postgresql-tcp.conf")) as f:
        assert box.read(TCP_DROP_IN) == f.read()
    try:
        box.run(["systemctl", "daemon-reload"])
        properties = box.show("stepsignd.service", "RestrictAddressFamilies", "PrivateNetwork", "IPAddressAllow",
                              "IPAddressDeny", "DropInPaths")
        assert TCP_DROP_IN in properties["DropInPaths"], properties
        assert set(properties["RestrictAddressFamilies"].split()) == {"AF_UNIX", "AF_INET", "AF_INET6"}, properties
        assert properties["PrivateNetwork"] == "no", properties
        assert "192.0.2.10" in properties["IPAddressAllow"], properties
        assert properties["IPAddressDeny"].strip() != "", properties  # the unit's IPAddressDeny=any stays
        figure, failed, report = exposure(box)
        assert failed - shipped_failed == {"RestrictAddressFamilies=~AF_(INET|INET6)", "PrivateNetwork=",
                                           "IPAddressDeny="}, report
        assert shipped < figure <= MAX_EXPOSURE_TCP, report
        print(f"systemd-analyze security: shipped unit {shipped}, with postgresql-tcp.conf {figure}")
        box.run(["systemctl", "restart", "stepsignd.service"])
        signed(box, "alice", 1, "signed under the TCP drop-in", "/home/alice/password")
    finally:
        box.run(["rm", "-f", TCP_DROP_IN])
        box.run(["systemctl", "daemon-reload"])
    box.run(["systemctl", "restart", "stepsignd.service"])
    assert exposure(box)[0] == shipped


def metrics_over(connect):
    """`GET /metrics` over a socket `connect()` returns: (status line, body)."""
    with connect() as conn:
        conn.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0].decode(), body.decode()


def test_metrics_on_the_units_unix_socket_and_on_loopback_with_the_drop_in(box):
    """Issue 27: `[metrics] listen` on a Unix socket works under the shipped, hardened unit
    (PrivateNetwork=yes), at no cost in `systemd-analyze security`; a loopback port works with
    the shipped drop-in, which opens only the network checks. Read from the host: the socket
    through the container's root, the port on the loopback the container shares."""
    import socket as sockets
    shipped, shipped_failed, _ = exposure(box)
    drop_in = f"{DROP_IN}/70-metrics-tcp.conf"
    try:
        set_config(box, "metrics", "listen", '"unix:/run/stepsign/metrics.sock"')
        box.run(["systemctl", "restart", "stepsignd.service"])
        signed(box, "alice", 1, "counted by the metrics", "/home/alice/password")
        assert box.run(["stat", "-c", "%a %U %G", "/run/stepsign/metrics.sock"]).stdout.split() == \
            ["660", "stepsign", "stepsign"]

        def unix():
            conn = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
            conn.connect(f"/proc/{box.pid1}/root/run/stepsign/metrics.sock")
            return conn
        status, body = metrics_over(unix)
        assert status == "HTTP/1.1 200 OK" and 'stepsign_signatures_total{level="1",authenticator="password"} ' in body, \
            (status, body[:2000])
        assert exposure(box)[0] == shipped

        port = 19464
        box.run(["install", "-D", "-m", "0644", "/usr/share/doc/stepsign/examples/metrics-tcp.conf", drop_in])
        set_config(box, "metrics", "listen", f'"127.0.0.1:{port}"')
        box.run(["systemctl", "daemon-reload"])
        box.run(["systemctl", "restart", "stepsignd.service"])
        figure, failed, report = exposure(box)
        assert failed - shipped_failed <= {"RestrictAddressFamilies=~AF_(INET|INET6)", "PrivateNetwork=",
                                           "IPAddressDeny="}, report
        assert figure <= MAX_EXPOSURE_TCP, report
        signed(box, "alice", 1, "counted on the loopback port", "/home/alice/password")
        status, body = metrics_over(lambda: sockets.create_connection(("127.0.0.1", port), timeout=10))
        assert status == "HTTP/1.1 200 OK" and "stepsign_ledger_commit_duration_seconds_count" in body, (status, body[:2000])
        print(f"systemd-analyze security: shipped unit {shipped}, with metrics-tcp.conf {figure}")
    finally:
        box.run(["rm", "-f", drop_in])
        set_config(box, "metrics", "listen", '""')
        box.run(["systemctl", "daemon-reload"])
        box.run(["systemctl", "restart", "stepsignd.service"])
    assert exposure(box)[0] == shipped


def test_the_journal_holds_the_audit_lines_and_no_secret(box):
    text = journal(box, "-o", "verbose")
    # A signature behind a step-up has a line of its own; level 0 is counted in the info line
    # of its minute (written at the latest when the daemon stops; it has restarted since).
    for signature in signatures:
        if signature["level"] == 0:
            continue
        jti = jws_part(signature["jws"], 1)["jti"]
        assert re.search(rf'msg="?signed"?.*signatureID={jti}', text), f"no audit line for {jti}"
    level_zero = sum(1 for signature in signatures if signature["level"] == 0)
    counted = sum(int(n) for n in re.findall(r'msg="signed at level 0".*?signatures=(\d+)', text))
    assert level_zero > 0 and counted >= level_zero, f"{level_zero} level-0 signatures, {counted} in summary lines"
    # Everything the daemon wrote is its own logfmt: no runtime noise, no stray output. (Issue 27:
    # libdispatch's "Failed to set thread priority for worker thread" once per thread, until the
    # unit answered its setpriority with success; docs/decisions.md, "System calls".)
    # The reload's `stepsignd --check` (ExecReload=, issue 42) is another process of the unit,
    # whose report to the operator is plain text: its lines are told apart by their process. Not
    # by `_CMDLINE`: journald reads it from /proc when the stream connects, which systemd does
    # before the exec, so a check's line may carry the pre-exec command line (seen in CI). The
    # daemon's processes are those that wrote its logfmt (a daemon process that also wrote
    # anything else is caught below); any other process of the unit is a check, whose report is
    # plain text.
    entries = [json.loads(line) for line in box.run(["journalctl", "--no-pager", "-o", "json", "_SYSTEMD_UNIT=stepsignd.service",
                                                     "SYSLOG_IDENTIFIER=stepsignd"]).stdout.splitlines() if line.strip()]
    daemons = {entry.get("_PID") for entry in entries if str(entry.get("MESSAGE", "")).startswith("ts=")}
    checks = [entry for entry in entries if entry.get("_PID") not in daemons]
    assert daemons, "no daemon line in the journal"
    assert any("configuration ok" in str(entry.get("MESSAGE", "")) for entry in checks), "no reload ran the check"
    own = [str(entry.get("MESSAGE", "")) for entry in entries if entry not in checks]
    stray = [line for line in own if not line.startswith("ts=")]
    assert own and stray == [], stray[:10]


def test_no_thread_of_the_daemon_changed_its_priority(box):
    """The unit answers libdispatch's setpriority with success without making the call: every
    thread keeps the service's nice value (0), and none of them could have raised it."""
    pid = main_pid(box)
    # /proc/PID/task/TID/stat: after the ") " that ends the thread's name, nice is the 17th field.
    script = f'for t in /proc/{pid}/task/*; do sed "s/.*) //" "$t/stat" | cut -d" " -f17; done'
    nice = box.run(["sh", "-c", script]).stdout.split()
    assert len(nice) > 2 and set(nice) == {"0"}, nice
    status = box.run(["cat", f"/proc/{pid}/status"]).stdout
    assert re.search(r"^Seccomp:\s+2$", status, re.M), "the unit's seccomp filter is not in force"
    everything = box.run(["journalctl", "--no-pager", "-o", "verbose"]).stdout
    for secret in (ALICE_PASSWORD, BOB_PASSWORD, BOB_NEW_PASSWORD, KEY_PASSPHRASE, *activation_codes):
        assert secret not in everything, "a secret is in the journal"


def test_journalctl_finds_every_signature_by_its_fields(box):
    """Issue 27: under systemd the daemon logs through the journal's native protocol, so
    `journalctl -o json MESSAGE_ID=… STEPSIGN_SIGNATURE_ID=…` finds a signature's line."""
    signed_id = hashlib.sha256(b"stepsign/signed").hexdigest()[:32]
    found = 0
    for signature in signatures:
        if signature["level"] == 0:
            continue
        jti = jws_part(signature["jws"], 1)["jti"]
        out = box.run(["journalctl", "--no-pager", "-o", "json", f"MESSAGE_ID={signed_id}",
                       f"STEPSIGN_SIGNATURE_ID={jti}"]).stdout.splitlines()
        assert len(out) == 1, f"{jti}: {out}"
        entry = json.loads(out[0])
        assert entry["PRIORITY"] == "5" and entry["SYSLOG_IDENTIFIER"] == "stepsignd"
        assert entry["STEPSIGN_USER"] == signature["user"] and entry["MESSAGE"].startswith("ts=")
        found += 1
    assert found > 0


def test_admin_backup_under_the_hardened_unit(box):
    """Issue 27: `stepsign admin backup --to FILE` as the operator runs it, the daemon under the
    shipped unit (a read-only system but for its state directory): the copy is made, copied out
    0600, holds the ledger, and the daemon's own copy is gone."""
    before = box.run(["stepsign", "admin", "audit", "verify", "--json"])
    entries = json.loads(before.stdout)["entries"]
    made = box.run(["stepsign", "admin", "backup", "--to", "/root/stepsign-backup.sqlite", "--json"])
    result = json.loads(made.stdout)
    assert result["ledgerSize"] >= entries and "keys/seal.key" in result["keys"], result
    assert box.run(["stat", "-c", "%a %U %s", "/root/stepsign-backup.sqlite"]).stdout.split() == \
        ["600", "root", str(result["bytes"])]
    assert box.run(["ls", "-A", "/var/lib/stepsign/backups"]).stdout.strip() == ""
    box.run(["rm", "/root/stepsign-backup.sqlite"])


def test_the_signing_key_moves_into_softhsm2_with_the_pin_as_a_credential(box):
    """SPEC 5.7 (issue 41): the README's move to a token under the installed, hardened unit:
    SoftHSM2 from Debian, its token made by the stepsign user, the PIN a LoadCredential= of a
    drop-in, then `stepsign admin key rotate`. The new key lives in the token (sensitive, never
    extractable, as pkcs11-tool shows), keys/ holds no private half of it, signatures verify,
    and the PIN is in no log line."""
    pin = "boot-token-pin-4242"
    box.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "softhsm2", "opensc"],
            env={"DEBIAN_FRONTEND": "noninteractive"})
    box.run(["usermod", "-a", "-G", "softhsm", "stepsign"])
    box.write("/root/so-pin", "boot-token-so-pin-1\n", mode=0o600)
    box.write("/etc/stepsign/pkcs11-pin", pin + "\n", mode=0o600)
    box.run(["sh", "-c", "softhsm2-util --init-token --free --label stepsign-boot "
                         "--so-pin \"$(cat /root/so-pin)\" --pin \"$(cat /etc/stepsign/pkcs11-pin)\" >/dev/null"])
    box.run(["sh", "-c", "chown -R stepsign:softhsm /var/lib/softhsm/tokens/*"])
    box.write(f"{DROP_IN}/60-boot-test-pkcs11.conf",
              "[Service]\nLoadCredential=stepsign-pkcs11-pin:/etc/stepsign/pkcs11-pin\n"
              "SupplementaryGroups=softhsm\nReadWritePaths=/var/lib/softhsm/tokens\n")
    set_config(box, "signing", "key_store", '"pkcs11"')
    set_config(box, "signing.pkcs11", "module", '"/usr/lib/softhsm/libsofthsm2.so"')
    set_config(box, "signing.pkcs11", "token_label", '"stepsign-boot"')
    box.run(["systemctl", "daemon-reload"])
    box.run(["systemctl", "restart", "stepsignd.service"])
    # A reload's check (--for-reload: the token is not logged in to again) passes on this file.
    box.run(["systemctl", "reload", "stepsignd.service"])
    rotated = box.run(["stepsign", "admin", "key", "rotate", "--json"])
    kid = json.loads(rotated.stdout)["activeKid"]
    listed = box.run(["stepsign", "admin", "key", "list", "--json"]).stdout
    assert any(key.get("kid") == kid and key.get("keyStore") == "pkcs11" for key in json.loads(listed)), listed
    keys = box.run(["ls", "/var/lib/stepsign/keys"]).stdout.split()
    assert f"{kid}.pkcs11" in keys and not any(name.startswith(kid) and name.endswith(".pem") for name in keys), keys
    jws = signed(box, "alice", 1, "signed with a key in the token", "/home/alice/password")
    assert jws_part(jws, 0)["kid"] == kid
    objects = box.run(["sh", "-c", "pkcs11-tool --module /usr/lib/softhsm/libsofthsm2.so --token-label stepsign-boot "
                                   "--login --pin \"$(cat /etc/stepsign/pkcs11-pin)\" -O --type privkey"]).stdout
    assert "sensitive" in objects and "never extractable" in objects, objects
    assert pin not in journal(box), "the PIN is in the journal"


def test_stop_exits_0_and_a_restart_keeps_the_ledger(box):
    box.run(["systemctl", "stop", "stepsignd.service"])
    stopped = box.show("stepsignd.service", "ActiveState", "Result", "ExecMainStatus")
    assert stopped == {"ActiveState": "inactive", "Result": "success", "ExecMainStatus": "0"}, stopped
    assert box.show("stepsignd.socket", "SubState")["SubState"] == "listening"
    # The next connection starts the daemon again, on the same state.
    audit = box.run(["stepsign", "admin", "audit", "verify", "--json"], check=False)
    assert audit.returncode == 0, f"{audit.stdout}{audit.stderr}"
    result = json.loads(audit.stdout)
    assert result["ok"] is True and result["entries"] >= len(signatures), result
    export = box.run(["stepsign", "admin", "audit", "export"]).stdout
    for signature in signatures:
        assert jws_part(signature["jws"], 1)["jti"] in export
    assert box.show("stepsignd.service", "ActiveState")["ActiveState"] == "active"


def test_a_typo_then_a_client_then_the_fix_and_starting_the_socket_recovers(box):
    """Issue 39: a start that fails (exit 78) while a client's connection waits is retried by
    the socket until systemd's start limit, and the socket fails. Fixing the file and starting
    the socket must then be enough, without `systemctl reset-failed` (the unit's short
    StartLimitIntervalSec)."""
    good = box.read(CONFIG)
    box.run(["systemctl", "stop", "stepsignd.service"])
    try:
        box.write(CONFIG, good + "\ntypo_key = 1\n", mode=0o640)
        box.run(["chgrp", "stepsign", CONFIG])
        refused = box.run(["stepsign", "status"], user="alice", check=False)
        assert refused.returncode == 1 and refused.stdout == "", refused
        deadline = time.monotonic() + 30
        while box.show("stepsignd.socket", "Result")["Result"] != "service-start-limit-hit":
            assert time.monotonic() < deadline, f"{box.show('stepsignd.socket', 'ActiveState', 'Result')}\n{journal(box)[-2000:]}"
            time.sleep(0.2)
        assert "typo_key" in journal(box, "-n", "40")
    finally:
        box.write(CONFIG, good, mode=0o640)
        box.run(["chgrp", "stepsign", CONFIG])
    # As an operator would once the fix is made: the journal read and the file edited take a
    # few seconds, stood for by 6 s here (systemd's clock cannot be injected). The unit's 5 s
    # window is over by then; systemd's default of 10 s refused this start.
    time.sleep(6)
    box.run(["systemctl", "start", "stepsignd.socket"])
    status = box.run(["stepsign", "status"], user="alice", check=False)
    assert status.returncode == 0, f"{status.stderr}\n{journal(box)[-2000:]}"
    assert box.show("stepsignd.service", "ActiveState")["ActiveState"] == "active"


def test_reinstalling_over_a_running_daemon_restarts_it_cleanly(box):
    pid = main_pid(box)
    assert pid > 0
    clean_stops = journal(box).count("Deactivated successfully")
    box.run(["apt-get", "install", "-y", "-q", "--reinstall", box.deb], env={"DEBIAN_FRONTEND": "noninteractive"})
    service = box.show("stepsignd.service", "ActiveState", "MainPID", "NRestarts")
    assert service["ActiveState"] == "active" and service["NRestarts"] == "0", service
    assert int(service["MainPID"]) != pid, "the daemon was not restarted on the new binary"
    assert journal(box).count("Deactivated successfully") == clean_stops + 1, journal(box)[-2000:]
    signed(box, "alice", 1, "after the reinstall", "/home/alice/password")


def test_apt_remove_keeps_the_ledger_and_the_keys(box):
    box.run(["apt-get", "remove", "-y", "-q", "stepsign"], env={"DEBIAN_FRONTEND": "noninteractive"})
    assert box.run(["dpkg-query", "-W", "-f=${db:Status-Status}", "stepsign"]).stdout == "config-files"
    for unit in ("stepsignd.socket", "stepsignd.service"):
        assert box.show(unit, "ActiveState")["ActiveState"] == "inactive", unit
    box.run(["test", "!", "-e", "/usr/sbin/stepsignd"])
    box.run(["test", "-f", CONFIG])  # a conffile stays until purge
    box.run(["test", "-s", "/var/lib/stepsign/stepsign.sqlite"])
    keys = box.run(["sh", "-c", "ls /var/lib/stepsign/keys/*.pem"]).stdout.split()
    assert len(keys) == 3, keys
