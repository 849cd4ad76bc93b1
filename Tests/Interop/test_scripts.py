"""What the two set-up commands install (issue 27): the demo only what it needs to build and
run; the test command what its checks run too."""
import os
import subprocess
import tempfile

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
    # The build's headers (libcrypto, SQLite, the PKCS#11 header, libfido2 for the CLI), pkg-config
    # and python3; nothing a check runs (softhsm2, swtpm, git, lintian, …).
    assert demo == {"libssl-dev", "libsqlite3-dev", "pkg-config", "python3", "libp11-kit-dev", "libfido2-dev"}
    assert {"softhsm2", "swtpm", "git", "openssh-client"} <= packages("all") - demo
    full = packages("all")
    assert demo < full and {"lintian", "debootstrap", "systemd-container", "zsh", "nginx-light"} <= full
    with open(os.path.join(ROOT, "scripts", "demo")) as f:
        assert "source scripts/setup demo" in f.read()


def test_the_demo_builds_where_the_test_command_builds():
    """Issue 39: the demo built in .build and the test command in its cache directory, so a
    newcomer built debug twice. Both take their build directory from scripts/build-cache."""
    for name in ("demo", "test"):
        with open(os.path.join(ROOT, "scripts", name)) as f:
            assert "\nsource scripts/build-cache\n" in f.read(), name
    with open(os.path.join(ROOT, "scripts", "demo")) as f:
        demo = f.read()
    builds = [line.strip() for line in demo.splitlines() if line.strip().startswith(("swift build", 'bin="$(swift build'))]
    assert builds and all('--scratch-path "$STEPSIGN_DEBUG_SCRATCH"' in line for line in builds), builds
    # In a cache root of its own: sourcing it keeps only the two newest build directories.
    with tempfile.TemporaryDirectory() as cache:
        script = 'source scripts/build-cache >/dev/null; echo "$STEPSIGN_DEBUG_SCRATCH $STEPSIGN_RELEASE_SCRATCH"'
        result = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                                env={**os.environ, "STEPSIGN_BUILD_CACHE": cache})
        assert result.returncode == 0, result.stderr
        debug, release = result.stdout.split()
        assert os.path.dirname(debug) == os.path.dirname(release) and debug.startswith(cache + "/build-"), result.stdout
