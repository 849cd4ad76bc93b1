"""What the two set-up commands install (issue 27): the demo only what it needs to build and
run; the test command what its checks run too."""
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def packages(mode):
    # The lists as scripts/setup decides them; every package is installed here already, so
    # sourcing it installs nothing.
    script = f'source scripts/setup {mode} >/dev/null; echo "${{apt_packages[*]}}"'
    result = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


def test_the_demo_installs_only_what_the_demo_needs():
    demo = packages("demo")
    assert demo == {"libssl-dev", "libsqlite3-dev", "pkg-config", "python3"}
    full = packages("all")
    assert demo < full and {"lintian", "debootstrap", "systemd-container", "zsh", "nginx-light"} <= full
    with open(os.path.join(ROOT, "scripts", "demo")) as f:
        assert "source scripts/setup demo" in f.read()
