"""gpuraid-export-harness as a serving process for the suite: started on mem
drives with an NBD export on a Unix socket, its state file read, operator
commands sent through its control FIFO, stopped with SIGTERM (only the
process started here)."""
import os
import signal
import subprocess
import time


class Harness:
    def __init__(self, exe, workdir, args):
        self.exe, self.dir, self.args = exe, workdir, args
        self.state_path = os.path.join(workdir, "state")
        self.ctl = os.path.join(workdir, "ctl")
        self.err_path = os.path.join(workdir, "harness.err")
        self.proc = None

    def __enter__(self):
        os.mkfifo(self.ctl)
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen([self.exe, "--state", self.state_path, "--control", self.ctl, *self.args],
                                     stdout=subprocess.DEVNULL, stderr=self.err)
        for _ in range(600):
            if os.path.exists(self.state_path):
                with open(self.state_path) as f:
                    self.state = dict(line.strip().split("=", 1) for line in f if "=" in line)
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"export harness exited {self.proc.returncode}: {self.log()[-1000:]}")
            time.sleep(0.05)
        raise RuntimeError("export harness did not come up in 30 s")

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        return False

    @property
    def pid(self):
        return self.proc.pid

    def log(self):
        with open(self.err_path) as f:
            return f.read()

    def command(self, line):
        with open(self.ctl, "w") as f:
            f.write(line + "\n")

    def wait_log(self, text, timeout):
        """Waits until the harness logged text; raises after timeout seconds."""
        end = time.time() + timeout
        while time.time() < end:
            if text in self.log():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"export harness exited {self.proc.returncode}: {self.log()[-1000:]}")
            time.sleep(0.05)
        raise RuntimeError(f"no '{text}' in the harness log within {timeout} s: {self.log()[-1000:]}")
