#!/usr/bin/python3
"""A test's stand-in for the trainer an operator configures: it keeps a copy of the keys the
control plane hands over (in $SEALTRAIN_TEST_KEYS_CAPTURE, mode 0600, in the test's private
temporary folder), then runs the real sealtrain-train ($SEALTRAIN_TEST_REAL_TRAINER) with the same
keys on a new pipe and the same arguments (and standard input), so the test can check exactly
what was released. Its argv goes next to the keys (".argv", one argument a line), so the test can
check what the process list showed."""
import os
import sys

arguments = sys.argv[1:]
at = arguments.index("--keys-fd") + 1
keys_fd = int(arguments[at])
keys = b""
while True:
    chunk = os.read(keys_fd, 65536)
    if not chunk:
        break
    keys += chunk
os.close(keys_fd)
capture = os.open(os.environ["SEALTRAIN_TEST_KEYS_CAPTURE"],
                  os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(capture, keys)
os.close(capture)
with open(os.environ["SEALTRAIN_TEST_KEYS_CAPTURE"] + ".argv", "w", encoding="utf-8") as out:
    out.write("\n".join(sys.argv) + "\n")
read_end, write_end = os.pipe()
os.write(write_end, keys)  # far below a pipe's capacity for a test's dataset
os.close(write_end)
os.set_inheritable(read_end, True)
arguments[at] = str(read_end)
real = os.environ["SEALTRAIN_TEST_REAL_TRAINER"]
os.execv(real, [real] + arguments)
