"""A Debian root booted with `systemd-nspawn -b`: systemd as its PID 1, commands run inside with
`nsenter`, and a teardown that always stops it.

nspawn runs with `--register=no --keep-unit` (the host has no systemd to register with or to
ask for a scope) and the host's network (apt inside fetches the package's dependencies). The
container's PID 1 is nspawn's child; `nsenter -t PID1 -a` enters all of its namespaces, so
`systemctl`, `journalctl` and the stepsign CLIs run inside as they would on a real host."""
import os
import signal
import subprocess
import time

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class CommandFailed(AssertionError):
    pass


class BootedContainer:
    def __init__(self, root, name, log_path):
        self.root = root
        self.name = name
        self.log_path = log_path
        self.nspawn = None
        self.pid1 = None

    # --- life cycle -----------------------------------------------------------------------

    def boot(self, timeout=120):
        """Starts nspawn in the background and waits until systemd inside reports `running`
        (or `degraded`, which fails with the list of failed units)."""
        self.log = open(self.log_path, "wb")
        self.nspawn = subprocess.Popen(
            ["systemd-nspawn", "-q", "-b", "-D", self.root, f"--machine={self.name}",
             "--register=no", "--keep-unit", "--console=read-only"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while self.pid1 is None:
            self._check_nspawn_alive()
            self.pid1 = self._container_init()
            if self.pid1 is None:
                if time.monotonic() > deadline:
                    raise AssertionError(f"systemd-nspawn started no PID 1 in {timeout} s\n{self.console()}")
                time.sleep(0.1)
        state = ""
        while state not in ("running", "degraded"):
            self._check_nspawn_alive()
            if time.monotonic() > deadline:
                jobs = self.run(["systemctl", "list-jobs", "--no-pager"], check=False).stdout
                raise AssertionError(f"the container did not finish booting in {timeout} s (state {state!r}); "
                                     f"jobs:\n{jobs}\n{self.console()}")
            state = self.run(["systemctl", "is-system-running"], check=False).stdout.strip()
            time.sleep(0.2)
        if state == "degraded":
            failed = self.run(["systemctl", "--failed", "--no-pager"], check=False).stdout
            raise AssertionError(f"the container booted degraded:\n{failed}")

    def _check_nspawn_alive(self):
        if self.nspawn.poll() is not None:
            raise AssertionError(f"systemd-nspawn exited with {self.nspawn.returncode}:\n{self.console()}")

    def _container_init(self):
        """nspawn's child whose pid in its own namespace is 1."""
        children = []
        try:
            for task in os.listdir(f"/proc/{self.nspawn.pid}/task"):
                with open(f"/proc/{self.nspawn.pid}/task/{task}/children") as f:
                    children += f.read().split()
        except FileNotFoundError:
            return None
        for pid in children:
            try:
                with open(f"/proc/{pid}/status") as f:
                    nspid = next(line.split()[1:] for line in f if line.startswith("NSpid:"))
            except (FileNotFoundError, StopIteration):
                continue
            if len(nspid) > 1 and nspid[-1] == "1":
                return int(pid)
        return None

    def console(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-4000:]
        except FileNotFoundError:
            return ""

    def stop(self, timeout=60):
        """Powers the container off; if it does not go in `timeout` s, kills it. Always leaves
        no process of it behind."""
        if self.nspawn is None:
            return
        if self.nspawn.poll() is None and self.pid1 is not None:
            # SIGRTMIN+4 asks systemd for a clean poweroff, as `systemctl poweroff` does.
            try:
                os.kill(self.pid1, signal.SIGRTMIN + 4)
            except ProcessLookupError:
                pass
        try:
            self.nspawn.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # Killing the container's PID 1 ends its PID namespace and every process in it.
            for pid in (self.pid1, self.nspawn.pid):
                try:
                    if pid is not None:
                        os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.nspawn.wait(timeout=30)
        self.log.close()
        # nspawn leaves its propagation directory behind when the host's /run is no tmpfs.
        propagate = f"/run/systemd/nspawn/propagate/{self.name}"
        if os.path.isdir(propagate):
            subprocess.run(["rm", "-rf", "--one-file-system", propagate], check=False)

    # --- commands inside --------------------------------------------------------------------

    def command(self, argv, user=None, env=None):
        """The host argv that runs `argv` inside, as root or as `user` (its groups from the
        container's /etc/group), with a clean environment."""
        environment = {"PATH": PATH, "LANG": "C.UTF-8", "HOME": "/root" if user is None else f"/home/{user}"}
        environment.update(env or {})
        prefix = ["nsenter", "-t", str(self.pid1), "-a", "--"]
        if user is not None:
            prefix += ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups"]
        return prefix + ["env", "-i", *(f"{k}={v}" for k, v in environment.items()), *argv]

    def run(self, argv, user=None, input=None, check=True, timeout=300, env=None):
        """Runs `argv` inside and returns the CompletedProcess (text); with `check`, a non-zero
        exit fails with the command, its exit status and its output."""
        result = subprocess.run(self.command(argv, user, env), input=input, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise CommandFailed(f"{' '.join(argv)} (as {user or 'root'}) exited {result.returncode}\n"
                                f"stdout: {result.stdout[-3000:]}\nstderr: {result.stderr[-3000:]}")
        return result

    def sh(self, script, **kwargs):
        return self.run(["sh", "-ec", script], **kwargs)

    def spawn(self, argv, user=None, env=None):
        """Starts `argv` inside without waiting; stdin, stdout and stderr are pipes."""
        return subprocess.Popen(self.command(argv, user, env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def path(self, inside):
        """The host path of a file in the container's root (not for /run or /tmp, which are
        the container's own tmpfs)."""
        return os.path.join(self.root, inside.lstrip("/"))

    def write(self, inside, text, mode=0o644, owner=None):
        """Writes a file inside as root (or chowns it to `owner`, a user of the container)."""
        self.run(["mkdir", "-p", os.path.dirname(inside)])  # (install -d would reset an existing one's mode)
        self.run(["sh", "-c", 'umask 077; cat > "$1"', "sh", inside], input=text)
        self.run(["chmod", f"{mode:o}", inside])
        if owner is not None:
            self.run(["chown", f"{owner}:{owner}", inside])

    def read(self, inside):
        return self.run(["cat", inside]).stdout

    def show(self, unit, *properties):
        """`systemctl show -p …` as a dict."""
        output = self.run(["systemctl", "show", unit, *(f"--property={p}" for p in properties)]).stdout
        return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
