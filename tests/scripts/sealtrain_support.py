"""What the Python integration tests share: TOTP codes as a user's authenticator app makes them,
and running a command that must succeed."""
import base64
import hashlib
import hmac
import struct
import subprocess
import sys
import time

_last_step = {}


def totp(uri_file, user):
    """The next unused RFC 6238 code for a user (SHA-1, 6 digits, 30 s)."""
    with open(uri_file) as handle:
        uri = handle.read().strip()
    secret = uri.split("secret=")[1].split("&")[0]
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    step = max(int(time.time()) // 30, _last_step.get(user, 0) + 1)
    while step > int(time.time()) // 30 + 1:
        time.sleep(0.5)
    _last_step[user] = step
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    code = (struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000
    return f"{code:06d}"


def run(*args, **kwargs):
    """The command's standard output; the test fails, saying why, when it exits non-zero."""
    result = subprocess.run(args, capture_output=True, text=True, errors="replace", **kwargs)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result.stdout
