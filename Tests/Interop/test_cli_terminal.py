"""stepsign on a real pseudo-terminal: the password prompt does not echo; without a controlling
terminal (`su - alice -c …`, `setsid`) it asks on standard input when that is a terminal; an
admin command that would prompt checks the caller's permission first."""
import os
import signal
import tempfile
import time

import pexpect

from conftest import BIN, CLI, PASSWORD, USER, Daemon


def answer_and_read_the_jws(child):
    """Types the right password at `child`'s prompt, waits for it to end, checks that it ended
    well with a compact JWS as its last line, and returns what it wrote."""
    child.sendline(PASSWORD)
    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    assert child.exitstatus == 0, output
    assert output.strip().split("\n")[-1].count(".") == 2  # a compact JWS
    return output


def test_sign_prompts_for_the_password_without_echo(daemon):
    child = pexpect.spawn(os.path.join(BIN, "stepsign"),
                          ["--socket", daemon.socket, "sign", "--user", USER, "--level", "1",
                           "--reason", "tty", "--payload", "typed at a terminal"],
                          timeout=30, encoding="utf-8")
    child.expect("Password for interop \\(3 attempts left\\): ")
    child.sendline("not-the-password")
    child.expect("Authentication failed, 2 attempts left")
    child.expect("Password for interop \\(2 attempts left\\): ")
    output = answer_and_read_the_jws(child)
    assert PASSWORD not in output
    assert "not-the-password" not in output


def test_without_a_controlling_terminal_sign_asks_on_standard_input_without_echo(daemon):
    """Issue 39: `su - alice -c 'stepsign sign …'` runs the command in a new session, with no
    controlling terminal (/dev/tty cannot be opened) but the terminal still on standard input.
    `setsid -w` does the same here: the CLI's stdin, stdout and stderr are the pseudo-terminal,
    which is no process's controlling terminal."""
    child = pexpect.spawn("setsid", ["-w", CLI, "--socket", daemon.socket, "sign", "--user", USER, "--level", "1",
                                     "--reason", "su -c", "--payload", "typed without a controlling terminal"],
                          timeout=30, encoding="utf-8")
    index = child.expect(["Password for interop \\(3 attempts left\\): ", "no terminal", pexpect.EOF])
    assert index == 0, child.before + (child.after if isinstance(child.after, str) else "")
    output = answer_and_read_the_jws(child)
    assert PASSWORD not in output  # echo was off on standard input


def test_admin_user_add_by_a_non_admin_is_refused_before_any_prompt():
    """Issue 39: a non-admin was asked for the new password twice, then refused with 13."""
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        try:
            # The caller stays a client but is an admin no longer.
            config = os.path.join(directory, "stepsignd.toml")
            with open(config) as f:
                text = f.read()
            with open(config, "w") as f:
                f.write(text.replace(f"admin_uids = [{os.getuid()}]", "admin_uids = []"))
            os.kill(daemon.process.pid, signal.SIGHUP)
            log = os.path.join(directory, "stepsignd.log")
            deadline = time.time() + 30
            while "configuration reloaded" not in open(log).read():
                assert time.time() < deadline, open(log).read()
                time.sleep(0.05)
            child = pexpect.spawn(CLI, ["--socket", daemon.socket, "admin", "user", "add", "--user", "newcomer"],
                                  timeout=30, encoding="utf-8")
            index = child.expect(["New password", pexpect.EOF])
            output = child.before
            child.close()
            assert index == 1, "asked for the new password before checking the permission"
            assert child.exitstatus == 1, output
            assert "error 13" in output and "admin" in output, output
        finally:
            daemon.stop()
