#!/usr/bin/python3
"""A test's stand-in for the trainer an operator configures, for the sampler's calls: it reads the
keys the control plane hands over on --keys-fd (as the real trainer does, and drops them) and its
standard input, writes its arguments one a line to $SEALTRAIN_TEST_SAMPLER_ARGV, and prints a
fixed text, so a test can check which checkpoint the control plane chose to sample."""
import os
import sys

arguments = sys.argv[1:]
keys_fd = int(arguments[arguments.index("--keys-fd") + 1])
while os.read(keys_fd, 65536):
    pass
os.close(keys_fd)
sys.stdin.read()
with open(os.environ["SEALTRAIN_TEST_SAMPLER_ARGV"], "w", encoding="utf-8") as out:
    out.write("\n".join(arguments) + "\n")
sys.stdout.write("sampled text")
