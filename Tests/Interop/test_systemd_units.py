"""The systemd side of the daemon (SPEC §1, §7), checked with systemd's own tools and the real
stepsignd: the units pass `systemd-analyze verify`, the service's `systemd-analyze security`
exposure stays at most 2.0, the sysusers/tmpfiles snippets make what they promise, socket
activation through `systemd-socket-activate` works, and the daemon runs under the seccomp rule
of `MemoryDenyWriteExecute=yes`.

No systemd runs as PID 1 here, so nothing is started through systemctl."""
import ctypes
import os
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, Client

UNITS = os.path.join(os.path.dirname(__file__), "..", "..", "systemd")
SERVICE = os.path.join(UNITS, "stepsignd.service")
SOCKET_UNIT = os.path.join(UNITS, "stepsignd.socket")
MAX_EXPOSURE = 2.0
PASSWORD = "Quartz-Zebra-77"

needs_systemd_tools = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                         reason="systemd-analyze is not installed")


def unit_settings(path):
    """`Key=value` lines of a unit file (comments skipped), in order, as (section, key, value)."""
    settings, section = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            key, _, value = line.partition("=")
            settings.append((section, key.strip(), value.strip()))
    return settings


def setting(path, key):
    values = [value for _, k, value in unit_settings(path) if k == key]
    assert values, f"{key}= missing from {path}"
    return values[-1]


def units_with_built_binary(directory):
    """Copies of the units whose ExecStart names the built stepsignd (verify checks that the
    binary exists; /usr/sbin/stepsignd is not installed here)."""
    binary = os.path.abspath(os.path.join(BIN, "stepsignd"))
    for name in ("stepsignd.service", "stepsignd.socket"):
        with open(os.path.join(UNITS, name)) as f:
            text = f.read()
        with open(os.path.join(directory, name), "w") as f:
            f.write(text.replace("/usr/sbin/stepsignd", binary))
    return [os.path.join(directory, "stepsignd.service"), os.path.join(directory, "stepsignd.socket")]


def write_config(directory, client_uids=()):
    path = os.path.join(directory, "stepsignd.toml")
    uids = ", ".join(str(uid) for uid in (os.getuid(), *client_uids))
    with open(path, "w") as f:
        f.write(f"""instance = "systemd-test"
[access]
client_uids = [{uids}]
client_groups = []
admin_uids = [{os.getuid()}]
[server]
socket_group = ""
socket_mode = "0600"
[signing]
allow_level_0 = true
[password]
scrypt_n = 1024
""")
    return path


def wait_for_socket(path, process, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert process.poll() is None, f"stepsignd exited early with {process.returncode}"
        try:
            client = Client(path)
            reply = client.call("status")
            client.close()
            return reply
        except OSError:
            time.sleep(0.05)
    raise AssertionError("stepsignd did not answer on its socket")


# --- the unit files ---------------------------------------------------------------------------

@needs_systemd_tools
def test_units_pass_systemd_analyze_verify():
    with tempfile.TemporaryDirectory() as directory:
        units = units_with_built_binary(directory)
        # --man=no: the man pages of Documentation= are installed by the Debian package, not here
        # (test_package.py checks that it ships and renders them).
        result = subprocess.run(["systemd-analyze", "verify", "--man=no", *units], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert result.stderr.strip() == "", result.stderr


@needs_systemd_tools
def test_service_exposure_is_at_most_2():
    result = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", SERVICE],
                            capture_output=True, text=True)
    output = result.stdout + result.stderr
    match = re.search(r"Overall exposure level for stepsignd\.service: (\d+\.\d+)", output)
    assert match, output
    assert float(match.group(1)) <= MAX_EXPOSURE, output


@needs_systemd_tools
def test_only_the_documented_hardening_is_left_out():
    """Every ✗ in the security report is one the unit or docs/decisions.md explains: peer lookup
    needs /proc of other users and their real uids (ProtectProc, PrivateUsers); PrivateDevices'
    own device list includes the RTC (DeviceAllow); the daemon runs from the host's /usr (the
    package's /usr/sbin/stepsignd) (RootDirectory); it serves a Unix socket (AF_UNIX)."""
    result = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", SERVICE],
                            capture_output=True, text=True)
    missing = sorted(line.split()[1] for line in result.stdout.splitlines() if line.startswith("✗"))
    assert missing == ["DeviceAllow=", "PrivateUsers=", "ProtectProc=",
                       "RestrictAddressFamilies=~AF_UNIX", "RootDirectory=/RootImage="], result.stdout


def test_service_is_a_notify_service_with_the_contracted_settings():
    expected = {
        "Type": "notify", "User": "stepsign", "Group": "stepsign", "StateDirectory": "stepsign",
        "StateDirectoryMode": "0700", "RuntimeDirectory": "stepsign", "ConfigurationDirectory": "stepsign",
        "ExecStart": "/usr/sbin/stepsignd --config /etc/stepsign/stepsignd.toml",
        "ExecReload": "/bin/sh -c 'kill -HUP \"$$MAINPID\"'", "LimitCORE": "0", "UMask": "0077", "NoNewPrivileges": "yes",
        "ProtectSystem": "strict", "PrivateTmp": "yes", "PrivateDevices": "yes",
        "RestrictAddressFamilies": "AF_UNIX", "CapabilityBoundingSet": "", "MemoryDenyWriteExecute": "yes",
        "Restart": "on-failure",
    }
    for key, value in expected.items():
        assert setting(SERVICE, key) == value, key
    assert setting(SERVICE, "WatchdogSec")


def test_a_start_that_meets_a_fault_that_may_pass_is_restarted_and_one_refused_for_a_setting_is_not():
    """stepsignd's start exits 74 (EX_IOERR) on an I/O fault that may pass (EIO, a full disk,
    EMFILE: Tests/Interop/test_start_faults.py) and 69 (EX_UNAVAILABLE) when PostgreSQL cannot be
    reached: both restarted, every 2 s for as long as it lasts (five restarts 2 s apart never
    fit in the start limit's window). 78 (EX_CONFIG: a setting, a mode, a wrong passphrase) is
    left to the operator."""
    assert setting(SERVICE, "Restart") == "on-failure"
    assert setting(SERVICE, "RestartPreventExitStatus").split() == ["78"]
    assert "SuccessExitStatus" not in {k for _, k, _ in unit_settings(SERVICE)}
    restart_seconds = int(setting(SERVICE, "RestartSec").removesuffix("s"))
    window = int(setting(SERVICE, "StartLimitIntervalSec").removesuffix("s"))
    burst = int(setting(SERVICE, "StartLimitBurst"))
    assert (burst - 1) * restart_seconds > window


def test_reload_runs_the_check_first_on_the_file_the_daemon_was_started_with():
    """SPEC 8 (issue 42): `ExecReload=` runs `stepsignd --check` on the ExecStart's --config
    before the SIGHUP, so a file with a problem fails the reload and never reaches the daemon."""
    reloads = [value for section, key, value in unit_settings(SERVICE) if key == "ExecReload"]
    start = setting(SERVICE, "ExecStart")
    config = start.split("--config", 1)[1].split()[0]
    assert reloads == [f"/usr/sbin/stepsignd --check --for-reload --config {config}", "/bin/sh -c 'kill -HUP \"$$MAINPID\"'"], reloads


def test_socket_unit_serves_every_connection_from_one_daemon():
    assert setting(SOCKET_UNIT, "ListenStream") == "/run/stepsign/stepsignd.sock"
    assert setting(SOCKET_UNIT, "Accept") == "no"
    assert setting(SOCKET_UNIT, "SocketMode") == "0660"
    assert setting(SOCKET_UNIT, "SocketGroup") == "stepsign"


@needs_systemd_tools
def test_sysusers_and_tmpfiles_make_the_user_and_private_directories():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "etc"))
        with open(os.path.join(UNITS, "sysusers.d", "stepsign.conf")) as f:
            subprocess.run(["systemd-sysusers", f"--root={root}", "-"], stdin=f, check=True, capture_output=True)
        with open(os.path.join(root, "etc", "passwd")) as f:
            user = next(line.split(":") for line in f if line.startswith("stepsign:"))
        with open(os.path.join(root, "etc", "group")) as f:
            group = next(line.split(":") for line in f if line.startswith("stepsign:"))
        uid, gid = int(user[2]), int(group[2])
        assert int(user[3]) == gid
        assert user[6].strip() == "/usr/sbin/nologin"
        with open(os.path.join(UNITS, "tmpfiles.d", "stepsign.conf")) as f:
            subprocess.run(["systemd-tmpfiles", f"--root={root}", "--create", "-"], stdin=f, check=True,
                           capture_output=True)
        state = os.stat(os.path.join(root, "var", "lib", "stepsign"))
        assert (stat.S_IMODE(state.st_mode), state.st_uid, state.st_gid) == (0o700, uid, gid)
        config = os.stat(os.path.join(root, "etc", "stepsign"))
        assert (stat.S_IMODE(config.st_mode), config.st_uid, config.st_gid) == (0o750, 0, gid)


@needs_systemd_tools
def test_sysusers_put_the_witness_pusher_in_group_stepsign():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "etc"))
        for name in ("stepsign.conf", "stepsign-witnessd.conf"):
            with open(os.path.join(UNITS, "sysusers.d", name)) as f:
                subprocess.run(["systemd-sysusers", f"--root={root}", "-"], stdin=f, check=True, capture_output=True)
        with open(os.path.join(root, "etc", "group")) as f:
            groups = {line.split(":")[0]: line.strip().split(":") for line in f}
        assert "stepsign-witnessd" in groups
        assert "stepsign-witnessd" in groups["stepsign"][3].split(","), groups["stepsign"]


# --- the witness units (SPEC 5.6) -------------------------------------------------------------

WITNESS_UNITS = {
    # unit: (binary, installed path)
    "stepsign-witnessd.service": ("stepsign-witnessd", "/usr/sbin/stepsign-witnessd"),
    "stepsign-witness.service": ("stepsign-witness", "/usr/bin/stepsign-witness"),
    "stepsign-monitor.service": ("stepsign", "/usr/bin/stepsign"),
}


def witness_units_with_built_binaries(directory):
    paths = []
    for name, (binary, installed) in WITNESS_UNITS.items():
        with open(os.path.join(UNITS, name)) as f:
            text = f.read()
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(text.replace(installed, os.path.abspath(os.path.join(BIN, binary))))
        paths.append(path)
    return paths


@needs_systemd_tools
def test_witness_units_pass_verify_and_keep_exposure_at_most_2(tmp_path):
    units = witness_units_with_built_binaries(str(tmp_path))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *units], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr
    for unit in units:
        report = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", unit],
                                capture_output=True, text=True)
        match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", report.stdout + report.stderr)
        assert match and float(match.group(1)) <= MAX_EXPOSURE, report.stdout


def test_only_the_pusher_has_the_network_and_it_is_no_daemon_admin_by_default():
    pusher = os.path.join(UNITS, "stepsign-witnessd.service")
    assert setting(SERVICE, "PrivateNetwork") == "yes"
    assert setting(SERVICE, "RestrictAddressFamilies") == "AF_UNIX"
    assert "PrivateNetwork" not in {k for _, k, _ in unit_settings(pusher)}
    assert setting(pusher, "RestrictAddressFamilies") == "AF_UNIX AF_INET AF_INET6"
    assert setting(pusher, "User") == "stepsign-witnessd"
    assert setting(pusher, "SupplementaryGroups") == "stepsign"
    monitor = os.path.join(UNITS, "stepsign-monitor.service")
    assert setting(monitor, "RestartPreventExitStatus") == "1 2"
    assert "--state /var/lib/stepsign-monitor/state" in setting(monitor, "ExecStart")
    witness = os.path.join(UNITS, "stepsign-witness.service")
    assert setting(witness, "DynamicUser") == "yes" and setting(witness, "StateDirectoryMode") == "0700"
    assert setting(witness, "RestrictAddressFamilies") == "AF_INET AF_INET6"


# --- socket activation ------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None, reason="systemd-socket-activate missing")
def test_socket_activation_serves_on_the_passed_socket_and_leaves_it_alone():
    with tempfile.TemporaryDirectory() as directory:
        config = write_config(directory)
        path = os.path.join(directory, "activated.sock")
        own_path = os.path.join(directory, "never-created.sock")
        log = open(os.path.join(directory, "stepsignd.log"), "wb")
        # No --accept: systemd-socket-activate binds, then execs one stepsignd for every connection.
        process = subprocess.Popen(
            ["systemd-socket-activate", "-l", path,
             os.path.join(BIN, "stepsignd"), "--config", config, "--socket", own_path,
             "--state-dir", os.path.join(directory, "state")],
            stdout=log, stderr=log)
        try:
            while not os.path.exists(path):
                assert process.poll() is None, open(log.name).read()
                time.sleep(0.01)
            mode_before = stat.S_IMODE(os.stat(path).st_mode)
            reply = wait_for_socket(path, process)
            assert reply["error"]["code"] == 0 and reply["result"]["activeKid"]
            # Several connections at once, one daemon: the launcher exec'd into stepsignd.
            clients = [Client(path) for _ in range(3)]
            assert all(c.call("status")["error"]["code"] == 0 for c in clients)
            for c in clients:
                c.close()
            with open(f"/proc/{process.pid}/comm") as f:
                assert f.read().strip() == "stepsignd"
            # It neither chmod'ed the socket to its own socket_mode (0600) nor made its own.
            assert stat.S_IMODE(os.stat(path).st_mode) == mode_before != 0o600
            assert not os.path.exists(own_path)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0, open(log.name).read()
            # Nor removed it: the socket belongs to whoever passed it.
            assert stat.S_ISSOCK(os.stat(path).st_mode)
        finally:
            if process.poll() is None:
                process.kill()
            log.close()


# --- MemoryDenyWriteExecute=yes ---------------------------------------------------------------

# The rule systemd's MemoryDenyWriteExecute=yes installs (src/shared/seccomp-util.c), as a
# classic BPF seccomp filter for x86-64: mmap with PROT_WRITE|PROT_EXEC, mprotect and
# pkey_mprotect adding PROT_EXEC, and shmat with SHM_EXEC fail with EPERM.
AUDIT_ARCH_X86_64 = 0xC000003E
NR_MMAP, NR_MPROTECT, NR_SHMAT, NR_PKEY_MPROTECT = 9, 10, 30, 329
PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000


def memory_deny_write_execute_filter():
    ld_w_abs, jeq_k, jset_k, ret_k, alu_and_k = 0x20, 0x15, 0x45, 0x06, 0x54
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    arch_offset, nr_offset, arg2_offset = 4, 0, 16 + 2 * 8
    program = [
        (ld_w_abs, 0, 0, arch_offset),             # 0
        (jeq_k, 1, 0, AUDIT_ARCH_X86_64),          # 1
        (ret_k, 0, 0, allow),                      # 2  another ABI: not ours to judge
        (ld_w_abs, 0, 0, nr_offset),               # 3
        (jeq_k, 0, 5, NR_MMAP),                    # 4  mmap: deny PROT_WRITE and PROT_EXEC together
        (ld_w_abs, 0, 0, arg2_offset),             # 5
        (alu_and_k, 0, 0, PROT_WRITE | PROT_EXEC), # 6
        (jeq_k, 0, 1, PROT_WRITE | PROT_EXEC),     # 7
        (ret_k, 0, 0, deny),                       # 8
        (ret_k, 0, 0, allow),                      # 9
        (jeq_k, 2, 0, NR_MPROTECT),                # 10 mprotect, pkey_mprotect: deny PROT_EXEC
        (jeq_k, 1, 0, NR_PKEY_MPROTECT),           # 11
        (jeq_k, 4, 3, NR_SHMAT),                   # 12
        (ld_w_abs, 0, 0, arg2_offset),             # 13
        (jset_k, 0, 1, PROT_EXEC),                 # 14
        (ret_k, 0, 0, deny),                       # 15
        (ret_k, 0, 0, allow),                      # 16
        (ld_w_abs, 0, 0, arg2_offset),             # 17 shmat: deny SHM_EXEC
        (jset_k, 0, 1, SHM_EXEC),                  # 18
        (ret_k, 0, 0, deny),                       # 19
        (ret_k, 0, 0, allow),                      # 20
    ]
    return program


def install_filter(program):
    libc = ctypes.CDLL(None, use_errno=True)
    raw = b"".join(struct.pack("HBBI", code, jt, jf, k) for code, jt, jf, k in program)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(program), ctypes.addressof(buffer))
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the filter is written for x86-64")
def test_filter_denies_what_memory_deny_write_execute_denies():
    """The filter itself: a W+X anonymous mapping fails under it, a plain one succeeds."""
    script = ("import mmap, sys\n"
              "mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE)\n"
              "try:\n    mmap.mmap(-1, 4096, prot=mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
              "except PermissionError:\n    sys.exit(0)\nsys.exit(1)\n")
    program = memory_deny_write_execute_filter()
    result = subprocess.run(["python3", "-c", script], preexec_fn=lambda: install_filter(program))
    assert result.returncode == 0


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the filter is written for x86-64")
def test_daemon_works_under_memory_deny_write_execute():
    """Start, create a key, add a user, sign at level 1, rotate the key, reload, stop with 0 —
    all with W+X mappings and PROT_EXEC changes refused, as MemoryDenyWriteExecute=yes does."""
    program = memory_deny_write_execute_filter()
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "s.sock")
        config = write_config(directory)
        log = open(os.path.join(directory, "stepsignd.log"), "wb")
        process = subprocess.Popen(
            [os.path.join(BIN, "stepsignd"), "--config", config, "--socket", path,
             "--state-dir", os.path.join(directory, "state")],
            stdout=log, stderr=log, preexec_fn=lambda: install_filter(program))
        try:
            wait_for_socket(path, process)
            with open(f"/proc/{process.pid}/status") as f:
                assert re.search(r"^Seccomp:\s+2$", f.read(), re.M), "the filter is not in force"
            client = Client(path)
            assert client.call("admin.addUser", user="mdwe", password=PASSWORD)["error"]["code"] == 0
            reply = client.call("authenticateUserAndSignData", user="mdwe", payload="under MDWE", reason="test",
                                authLevel=1, authenticatorType=0)
            assert reply["events"][0]["event"] == "getPassword", reply
            reply = client.call("setPassword", password=PASSWORD, challengeMode=12)
            assert reply["events"][-1]["status"]["code"] == 100, reply
            assert client.call("admin.rotateKey")["error"]["code"] == 0
            client.close()
            process.send_signal(signal.SIGHUP)
            assert wait_for_socket(path, process)["error"]["code"] == 0
            with open(f"/proc/{process.pid}/maps") as f:
                writable_and_executable = [line for line in f if line.split()[1].startswith("rwx")]
            assert writable_and_executable == []
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0, open(log.name).read()
        finally:
            if process.poll() is None:
                process.kill()
            log.close()


# --- non-dumpable -----------------------------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_daemon_is_non_dumpable_so_its_proc_entries_belong_to_root():
    """The kernel gives the entries of a non-dumpable process's /proc/PID (fd, environ, mem, …)
    to root, so other processes of the same user cannot read its memory, environment or file
    descriptors. Run as nobody, stepsignd's entries are root's, while an ordinary process of
    nobody owns its own."""
    nobody = 65534
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        state = os.path.join(directory, "state")
        os.mkdir(state, 0o700)
        os.chown(state, nobody, nobody)
        path = os.path.join(state, "s.sock")
        config = write_config(directory, client_uids=[nobody])
        os.chmod(config, 0o644)
        drop = ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups"]
        log = open(os.path.join(directory, "stepsignd.log"), "wb")
        process = subprocess.Popen(drop + [os.path.join(BIN, "stepsignd"), "--config", config, "--socket", path,
                                           "--state-dir", state], stdout=log, stderr=log)
        control = subprocess.Popen(drop + ["sleep", "60"])
        try:
            wait_for_socket(path, process)
            with open(f"/proc/{process.pid}/status") as f:
                assert re.search(rf"^Uid:\s+{nobody}\s", f.read(), re.M)
            for entry in ("fd", "environ", "mem"):
                assert os.stat(f"/proc/{process.pid}/{entry}").st_uid == 0, entry
                assert os.stat(f"/proc/{control.pid}/{entry}").st_uid == nobody, entry
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0, open(log.name).read()
        finally:
            for p in (process, control):
                if p.poll() is None:
                    p.kill()
                    p.wait()
            log.close()


# --- the SSH agent's socket (SPEC §3.5) ---------------------------------------------------------

AGENT_SOCKET_UNIT = os.path.join(UNITS, "stepsignd-agent.socket")


@needs_systemd_tools
def test_the_agent_socket_unit_passes_verify_and_matches_the_main_sockets_mode_and_group():
    with tempfile.TemporaryDirectory() as directory:
        units = units_with_built_binary(directory)
        shutil.copy(AGENT_SOCKET_UNIT, directory)
        result = subprocess.run(["systemd-analyze", "verify", "--man=no", *units,
                                 os.path.join(directory, "stepsignd-agent.socket")], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert result.stderr.strip() == "", result.stderr
    for key in ("SocketMode", "SocketGroup", "SocketUser", "DirectoryMode", "Accept"):
        assert setting(AGENT_SOCKET_UNIT, key) == setting(SOCKET_UNIT, key), key
    assert setting(AGENT_SOCKET_UNIT, "Service") == "stepsignd.service"
    assert setting(AGENT_SOCKET_UNIT, "FileDescriptorName") == "agent"
    assert setting(AGENT_SOCKET_UNIT, "ListenStream") == "/run/stepsign/agent.sock"


def agent_config(directory, agent_socket):
    path = write_config(directory)
    with open(path, "a") as f:
        f.write(f'[ssh_agent]\nsocket = "{agent_socket}"\n' if agent_socket else "")
    return path


@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None or shutil.which("ssh-add") is None,
                    reason="systemd-socket-activate or ssh-add missing")
def test_socket_activation_passes_the_agent_socket_by_name():
    with tempfile.TemporaryDirectory() as directory:
        main, agent = os.path.join(directory, "main.sock"), os.path.join(directory, "agent.sock")
        own_agent = os.path.join(directory, "never-created-agent.sock")
        config = agent_config(directory, own_agent)
        log = open(os.path.join(directory, "stepsignd.log"), "wb")
        process = subprocess.Popen(
            ["systemd-socket-activate", "-l", main, "-l", agent, "--fdname=stepsignd.socket:agent",
             os.path.join(BIN, "stepsignd"), "--config", config, "--state-dir", os.path.join(directory, "state")],
            stdout=log, stderr=log)
        try:
            while not os.path.exists(main):
                assert process.poll() is None, open(log.name).read()
                time.sleep(0.01)
            reply = wait_for_socket(main, process)
            listed = subprocess.run(["ssh-add", "-L"], capture_output=True, text=True, timeout=30,
                                    env={**os.environ, "SSH_AUTH_SOCK": agent})
            assert listed.returncode == 0, (listed.stderr, open(log.name).read())
            assert listed.stdout.startswith("ecdsa-sha2-nistp256 ")
            assert listed.stdout.split()[2] == reply["result"]["activeKid"]
            assert not os.path.exists(own_agent)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0, open(log.name).read()
        finally:
            if process.poll() is None:
                process.kill()
            log.close()


@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None, reason="systemd-socket-activate missing")
def test_a_passed_agent_socket_without_ssh_agent_socket_is_refused_with_78():
    with tempfile.TemporaryDirectory() as directory:
        main, agent = os.path.join(directory, "main.sock"), os.path.join(directory, "agent.sock")
        config = agent_config(directory, None)
        log = open(os.path.join(directory, "stepsignd.log"), "wb")
        process = subprocess.Popen(
            ["systemd-socket-activate", "-l", main, "-l", agent, "--fdname=stepsignd.socket:agent",
             os.path.join(BIN, "stepsignd"), "--config", config, "--state-dir", os.path.join(directory, "state")],
            stdout=log, stderr=log)
        try:
            while not os.path.exists(main):
                assert process.poll() is None, open(log.name).read()
                time.sleep(0.01)
            # The first connection starts the daemon (no --accept: the launcher execs it). The
            # path exists from the launcher's bind(), before its listen(): refused until then.
            deadline = time.monotonic() + 30
            while True:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    try:
                        probe.connect(main)
                        break
                    except ConnectionRefusedError:
                        assert process.poll() is None and time.monotonic() < deadline, open(log.name).read()
                        time.sleep(0.01)
            assert process.wait(timeout=60) == 78
            assert "[ssh_agent] socket is empty" in open(log.name).read()
        finally:
            if process.poll() is None:
                process.kill()
            log.close()
