"""stepsign sign on a real pseudo-terminal: the password prompt does not echo."""
import os

import pexpect

from conftest import BIN, PASSWORD, USER


def test_sign_prompts_for_the_password_without_echo(daemon):
    child = pexpect.spawn(os.path.join(BIN, "stepsign"),
                          ["--socket", daemon.socket, "sign", "--user", USER, "--level", "1",
                           "--reason", "tty", "--payload", "typed at a terminal"],
                          timeout=30, encoding="utf-8")
    child.expect("Password for interop \\(3 attempts left\\): ")
    child.sendline("not-the-password")
    child.expect("Authentication failed, 2 attempts left")
    child.expect("Password for interop \\(2 attempts left\\): ")
    child.sendline(PASSWORD)
    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    assert child.exitstatus == 0, output
    assert output.strip().split("\n")[-1].count(".") == 2  # a compact JWS
    assert PASSWORD not in output
    assert "not-the-password" not in output
