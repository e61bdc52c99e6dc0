# SPDX-License-Identifier: GPL-2.0
"""Running commands.

Every command goes through run(): argv as strings, stdout and stderr
captured as text, in a network namespace by `ip netns exec` when ns is
given (ip and tc enter one themselves: see net.ip_batch() and tc.batch()),
and no exception for a command that fails, times out or does not exist:
its CompletedProcess says so. must() is run() that raises Failed, the one
exception of the library: the benchmark notes it and goes on with the
next configuration, a test lets it end the script.
"""

import json
import os
import signal
import subprocess


class Failed(RuntimeError):
    """Something could not be set up or measured; the message says what,
    for the notes."""


def run(*cmd, ns=None, input=None, timeout=None):
    """Runs a command (in namespace ns if given); a CompletedProcess with
    stdout and stderr as text, returncode 124 on a timeout."""
    argv = [str(c) for c in cmd]
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    try:
        return subprocess.run(argv, input=input, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(argv, 124, e.stdout or "",
                                           e.stderr or "")
    except OSError as e:
        return subprocess.CompletedProcess(argv, 127, "", str(e))


def ok(*cmd, **kw):
    """The command succeeded."""
    return run(*cmd, **kw).returncode == 0


def must(*cmd, what=None, **kw):
    """Runs the command; Failed with its error output when it fails."""
    p = run(*cmd, **kw)
    if p.returncode != 0:
        raise Failed("%s failed: %s" % (
            what or " ".join(str(c) for c in cmd),
            one_line(p.stderr or p.stdout)))
    return p.stdout


def one_line(text, limit=300):
    return " ".join(str(text).split())[:limit]


def run_json(*cmd, **kw):
    """The command's JSON output, None when it fails or is no JSON."""
    p = run(*cmd, **kw)
    if p.returncode != 0:
        return None
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def stop_process(proc, sig=signal.SIGTERM, timeout=10):
    """Signals a Popen and reaps it; killed after timeout."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pid_alive(pid):
    """A process of that pid exists (kill -0)."""
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def pid_kill(pid, sig):
    """Sends the signal; a process already gone is no error."""
    try:
        os.kill(pid, sig)
    except OSError:
        pass
