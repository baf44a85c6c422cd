#!/usr/bin/env python3
"""Verifies one signed head, one inclusion proof and the signed selection statement of a Sealtrain
audit bundle with nothing but python3's standard library and the openssl command, following
docs/formats/audit.md only.

Usage: verify_bundle_with_openssl.py SEALTRAINCTL
It asks sealtrainctl for a demonstration bundle (the only Sealtrain code it runs), then checks it
independently, and checks that a forged signature, an altered entry and deleted entries are
refused.
"""
import base64
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def parse_bundle(text):
    lines = text.split("\n")
    if lines[0] != "sealtrain-audit-bundle 2" or lines[-1] != "" or lines[-2] != "end":
        fail("not a version 2 bundle")
    bundle = {"keys": [], "heads": [], "entries": [], "statement": None}
    for line in lines[1:-2]:
        kind, _, rest = line.partition(" ")
        if kind in ("selection", "filter"):
            bundle[kind] = rest
        elif kind == "statement":
            bundle["statement"] = base64.b64decode(rest, validate=True).decode("utf-8")
        elif kind == "key":
            bundle["keys"].append(rest)
        elif kind == "head":
            bundle["heads"].append(base64.b64decode(rest, validate=True).decode("utf-8"))
        elif kind == "entry":
            words = rest.split(" ")
            bundle["entries"].append({
                "sequence": int(words[0]),
                "head_size": None if words[1] == "-" else int(words[1]),
                "bytes": base64.b64decode(words[2], validate=True),
                "proof": [base64.b64decode(w, validate=True) for w in words[3:]],
            })
    return bundle


def parse_vkey(vkey):
    name, key_id, typed = vkey.split("+", 2)
    typed = base64.b64decode(typed, validate=True)
    if len(typed) != 33 or typed[0] != 0x01:
        fail("the verifier key is not Ed25519")
    public_key = typed[1:]
    expected = hashlib.sha256(name.encode() + b"\n\x01" + public_key).digest()[:4]
    if expected.hex() != key_id:
        fail("the verifier key's id does not match its name and key")
    return name, bytes.fromhex(key_id), public_key


def write_public_pem(public_key, path):
    der = ED25519_SPKI_PREFIX + public_key
    body = base64.encodebytes(der).decode().replace("\n", "")
    with open(path, "w") as f:
        f.write("-----BEGIN PUBLIC KEY-----\n" + body + "\n-----END PUBLIC KEY-----\n")


def verify_note(note, name, key_id, pem, workdir):
    """Checks the signed note's Ed25519 signature with openssl; returns its text, or None."""
    separator = note.rindex("\n\n")
    text, signature_lines = note[:separator + 1], note[separator + 2:]
    line = signature_lines.split("\n")[0]
    dash, signer, blob = line.split(" ")
    if dash != "\u2014" or signer != name:
        return None
    blob = base64.b64decode(blob, validate=True)
    if blob[:4] != key_id:
        return None
    text_path = os.path.join(workdir, "note.txt")
    signature_path = os.path.join(workdir, "note.sig")
    with open(text_path, "wb") as f:
        f.write(text.encode("utf-8"))
    with open(signature_path, "wb") as f:
        f.write(blob[4:])
    result = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", pem, "-rawin",
                             "-in", text_path, "-sigfile", signature_path],
                            capture_output=True, text=True)
    if result.returncode != 0:
        return None
    return text


def verify_head(note, name, key_id, pem, workdir):
    """Checks the head's signature; returns (size, root) of the checkpoint, or None."""
    text = verify_note(note, name, key_id, pem, workdir)
    if text is None:
        return None
    origin, size, root, time_line = text.rstrip("\n").split("\n")
    if origin != name or not time_line.startswith("time "):
        return None
    return int(size), base64.b64decode(root, validate=True)


def check_statement(bundle, entries, size, root, name, key_id, pem, workdir):
    """The selection statement: signed, for the newest head, and listing exactly `entries`."""
    text = verify_note(bundle["statement"], name, key_id, pem, workdir)
    if text is None:
        return "its signature does not verify"
    lines = text.rstrip("\n").split("\n")
    if len(lines) != 6 or lines[0] != "sealtrain-audit-selection 1":
        return "it is not a selection statement"
    digest = hashlib.sha256(b"".join(struct.pack(">Q", e["sequence"]) for e in entries))
    expected = ["origin " + name,
                "head %d %s" % (size, base64.b64encode(root).decode()),
                "selection " + bundle["selection"],
                "filter " + bundle["filter"],
                "entries %d %s" % (len(entries), base64.b64encode(digest.digest()).decode())]
    for have, want in zip(lines[1:], expected):
        if have != want:
            return "'%s' where the bundle gives '%s'" % (have, want)
    return None


def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion_proof(index, size, leaf_hash, proof):
    """RFC 9162 section 2.1.3.2."""
    if index >= size:
        return None
    fn, sn, r = index, size - 1, leaf_hash
    for p in proof:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def main():
    if len(sys.argv) != 2:
        fail("usage: verify_bundle_with_openssl.py SEALTRAINCTL")
    with tempfile.TemporaryDirectory() as workdir:
        bundle_path = os.path.join(workdir, "bundle.txt")
        exported_pem = os.path.join(workdir, "exported.pem")
        subprocess.run([sys.argv[1], "audit", "export", "--demo", "37", "--out", bundle_path,
                        "--public-key-out", exported_pem], check=True, capture_output=True)
        with open(bundle_path) as f:
            bundle = parse_bundle(f.read())

        name, key_id, public_key = parse_vkey(bundle["keys"][0])
        pem = os.path.join(workdir, "key.pem")
        write_public_pem(public_key, pem)
        # The key the bundle names is the key the log exported.
        same = subprocess.run(["openssl", "pkey", "-pubin", "-in", exported_pem, "-outform", "DER"],
                              capture_output=True, check=True).stdout
        if same != ED25519_SPKI_PREFIX + public_key:
            fail("the bundle's key differs from the exported public key")

        # One signed head: the newest.
        head = verify_head(bundle["heads"][-1], name, key_id, pem, workdir)
        if head is None:
            fail("the newest signed head does not verify")
        size, root = head
        print("signed head verified: size %d, root %s" % (size, root.hex()))

        # A forged signature must be refused.
        note = bundle["heads"][-1]
        separator = note.rindex("\n\n")
        dash, signer, blob = note[separator + 2:].split("\n")[0].split(" ")
        raw = bytearray(base64.b64decode(blob))
        raw[10] ^= 1
        forged = note[:separator + 2] + " ".join([dash, signer, base64.b64encode(raw).decode()]) + "\n"
        if verify_head(forged, name, key_id, pem, workdir) is not None:
            fail("a forged signature verified")

        # One inclusion proof: an entry proved against the newest head.
        entry = next(e for e in bundle["entries"] if e["head_size"] == size)
        leaf = hashlib.sha256(b"\x00" + entry["bytes"]).digest()
        if entry["bytes"][0] != 1 or int.from_bytes(entry["bytes"][1:9], "big") != entry["sequence"]:
            fail("the entry's version or sequence number is wrong")
        if root_from_inclusion_proof(entry["sequence"], size, leaf, entry["proof"]) != root:
            fail("entry %d's inclusion proof does not lead to the signed root" % entry["sequence"])
        print("inclusion proof verified: entry %d in the tree of size %d" % (entry["sequence"], size))

        # An altered entry must be refused.
        altered = bytearray(entry["bytes"])
        altered[-1] ^= 1
        altered_leaf = hashlib.sha256(b"\x00" + bytes(altered)).digest()
        if root_from_inclusion_proof(entry["sequence"], size, altered_leaf, entry["proof"]) == root:
            fail("an altered entry verified")

        # The signed selection statement lists exactly the bundle's entries...
        problem = check_statement(bundle, bundle["entries"], size, root, name, key_id, pem, workdir)
        if problem is not None:
            fail("the selection statement does not match the bundle: " + problem)
        print("selection statement verified: %s, %d entries" % (bundle["selection"],
                                                                 len(bundle["entries"])))
        # ...so that ten deleted entries show, whatever the selection line then says.
        for selection in ("all", "filtered"):
            cut = dict(bundle, selection=selection)
            if check_statement(cut, bundle["entries"][:10] + bundle["entries"][20:], size, root,
                               name, key_id, pem, workdir) is None:
                fail("ten deleted entries went unnoticed with selection " + selection)
    print("PASS")


if __name__ == "__main__":
    main()
