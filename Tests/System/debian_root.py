"""A minimal Debian root to boot under systemd-nspawn, made once with debootstrap and cached
outside the repository, keyed by the release, the variant and the package list.

The mirror is the host's: whatever URI its apt configuration uses for the release (no mirror
host name is written in this repository). The cache is built in a temporary directory next to
it and renamed into place at the end, so a half-made root is never reused; a lock serialises
two runs that would build it at once. Nobody boots the cached root itself: each run copies it
(`fresh_copy`), so it stays pristine."""
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time

CACHE = os.environ.get("STEPSIGN_ROOT_CACHE", "/var/cache/stepsign-tests")
RELEASE = "bookworm"
VARIANT = "minbase"
# systemd as PID 1 and its bus; nothing stepsign needs: the package's Depends: must bring that.
INCLUDE = ("systemd", "systemd-sysv", "dbus", "ca-certificates")


def host_mirror(release=RELEASE):
    """The URI the host's apt fetches `release` (main) from, from its own configuration."""
    result = subprocess.run(["apt-get", "indextargets", "--format", "$(REPO_URI) $(RELEASE) $(COMPONENT)"],
                            capture_output=True, text=True, check=True)
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == release and fields[2] == "main":
            return fields[0]
    raise AssertionError(f"the host's apt configuration has no source for Debian {release} main "
                         f"(apt-get indextargets):\n{result.stdout}")


def cache_key(release=RELEASE):
    digest = hashlib.sha256(f"{release}\n{VARIANT}\n{','.join(INCLUDE)}\n".encode()).hexdigest()[:12]
    return f"{release}-{digest}"


def cached_root(release=RELEASE, log=print):
    """The path of the cached root for `release`, made with debootstrap if it is not there."""
    os.makedirs(CACHE, mode=0o755, exist_ok=True)
    root = os.path.join(CACHE, cache_key(release))
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(root):
            return root
        mirror = host_mirror(release)
        started = time.monotonic()
        log(f"debian root: debootstrap {release} ({VARIANT}, {','.join(INCLUDE)}) from {mirror} into {root}")
        scratch = tempfile.mkdtemp(prefix=f".{os.path.basename(root)}.", dir=CACHE)
        try:
            # It becomes the container's /: mkdtemp's 0700 would lock every user but root out.
            os.chmod(scratch, 0o755)
            result = subprocess.run(["debootstrap", f"--variant={VARIANT}", f"--include={','.join(INCLUDE)}",
                                     release, scratch, mirror], capture_output=True, text=True)
            if result.returncode != 0:
                debootstrap_log = os.path.join(scratch, "debootstrap", "debootstrap.log")
                details = open(debootstrap_log).read()[-4000:] if os.path.exists(debootstrap_log) else ""
                raise AssertionError(f"debootstrap failed ({result.returncode}):\n{result.stderr[-4000:]}\n{details}")
            # The packages debootstrap downloaded are not part of the root.
            subprocess.run(["chroot", scratch, "apt-get", "clean"], check=True, capture_output=True)
            os.rename(scratch, root)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        log(f"debian root: made in {time.monotonic() - started:.0f} s")
        return root


def fresh_copy(root, directory):
    """A copy of `root` at `directory`/root to boot and change (reflinked where the file
    system can)."""
    copy = os.path.join(directory, "root")
    subprocess.run(["cp", "-a", "--reflink=auto", root, copy], check=True)
    return copy


def copy_host_apt_configuration(copy):
    """The host's apt sources, settings (proxy, …) and keyrings in place of the root's, so that
    apt inside reaches the same archive the host does."""
    for directory in ("sources.list.d", "apt.conf.d", "auth.conf.d", "preferences.d", "trusted.gpg.d", "keyrings"):
        source = os.path.join("/etc/apt", directory)
        if not os.path.isdir(source):
            continue
        target = os.path.join(copy, "etc/apt", directory)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=True)
    for name in ("sources.list", "auth.conf"):
        source, target = os.path.join("/etc/apt", name), os.path.join(copy, "etc/apt", name)
        if os.path.exists(source):
            shutil.copy2(source, target)
        elif os.path.exists(target):
            os.remove(target)
