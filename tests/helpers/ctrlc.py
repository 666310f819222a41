#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# ctrlc.py - test helper: a person's ^C on a pipeline.
#
#   ctrlc.py [--again] CMD READY N
#
# Runs "sh -c CMD" on a pseudo-terminal of its own, as a person's shell
# runs a pipeline: every process of it in the terminal's foreground
# process group (tests/cli/readers.t).  Once READY holds N lines that
# are not '#' lines, types ^C on the terminal: the line discipline sends
# SIGINT to that whole group, as a person's ^C does.  Exits with CMD's
# status (125 when READY never had N lines in 30 s).  With --again, ^C
# again every 50 ms until CMD ends: a ^C typed before its command started
# is the shell's alone, so this is for a command that must stop at its
# first, which only one that ignores ^C outlasts.  What the terminal
# showed goes to stdout.  The standard library only.
import os, pty, select, sys, time

again = sys.argv[1] == "--again"
if again:
    del sys.argv[1]
cmd, ready, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", cmd])

def lines():
    try:
        with open(ready) as f:
            return sum(1 for l in f if l.endswith("\n") and not l.startswith("#"))
    except OSError:
        return 0

shown = b""
def read_some(wait):
    global shown
    r, _, _ = select.select([fd], [], [], wait)
    if not r:
        return True
    try:
        data = os.read(fd, 4096)
    except OSError:
        return False
    shown += data
    return bool(data)

end = time.monotonic() + 30
while lines() < want:
    if time.monotonic() > end:
        sys.stderr.write("ctrlc.py: %s never had %d lines\n" % (ready, want))
        os.kill(pid, 9)
        sys.exit(125)
    read_some(0.01)
os.write(fd, b"\x03")
st = None
while read_some(0.05 if again else 1):
    if again:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        st = None
        os.write(fd, b"\x03")
    if time.monotonic() > end + 30:
        sys.stderr.write("ctrlc.py: the command did not end after ^C\n")
        os.kill(pid, 9)
        sys.exit(125)
if st is None:
    _, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(shown)
sys.exit(os.waitstatus_to_exitcode(st))
