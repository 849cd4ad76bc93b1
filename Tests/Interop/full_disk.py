"""A state directory on a size-limited tmpfs, and a filler that takes its last byte: for the
checks of a full disk (test_full_disk.py, and a start on one in test_start_faults.py).

The tmpfs is mounted in a mount namespace of its own, held by a `sleep` that only root can
make (`unshare -m`); a daemon is started in that namespace with `nsenter` (``Namespace.prefix``),
and a check reaches the files through /proc/HOLDER/root (``Namespace.inside``). Nothing is
mounted where any other process sees it, and the mount goes when the holder is killed."""
import errno
import subprocess


class Namespace:
    """A mount namespace whose `path` is a tmpfs of `size`, alive while its holder sleeps."""

    def __init__(self, path, size):
        self.path = path
        self.holder = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             'mount -t tmpfs -o "size=$1,mode=0700" stepsign-full-disk "$2" && echo mounted && exec sleep infinity',
             "sh", size, path], stdout=subprocess.PIPE, text=True)
        assert self.holder.stdout.readline().strip() == "mounted"

    def inside(self, path):
        """`path` as the namespace sees it, from outside."""
        return f"/proc/{self.holder.pid}/root{path}"

    def prefix(self):
        return ["nsenter", "-t", str(self.holder.pid), "-m", "--"]

    def close(self):
        self.holder.kill()
        self.holder.wait()


def fill(path):
    """Grows a file at `path` until the filesystem has no byte left; returns its size."""
    written = 0
    with open(path, "wb", buffering=0) as f:
        for chunk in (1 << 20, 1 << 12, 1):
            block = b"\0" * chunk
            while True:
                try:
                    written += f.write(block)
                except OSError as error:
                    assert error.errno == errno.ENOSPC, error
                    break
    return written
