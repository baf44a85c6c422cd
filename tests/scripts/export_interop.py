#!/usr/bin/env python3
"""An exported model folder (docs/formats/model-export.md) checked with the outside tools alone
(issue #30):

- OpenSSF model-signing: `model_signing verify certificate --signature FOLDER/model.sig
  --certificate_chain ROOT FOLDER` succeeds with only the artefact root's certificate (issue #48),
  fails with the identity CA's (which issues sessions' and workers' TLS certificates), and fails
  for a copy with one byte of model.safetensors changed, and for a copy with a file added;
- a forgery: a copy with 64 bytes of model.safetensors flipped, signed again with `model_signing
  sign certificate` by a session's key and certificate (what a client profile holds), and by a
  worker's, each verifies against the identity CA (the attack of issue #48) and FAILS against the
  artefact root;
- transformers: GPT2LMHeadModel loads the folder, and its loss on the batch given is printed
  (the caller compares it with Sealtrain's own); GPT2Tokenizer loads the tokenizer files and
  encodes text as Sealtrain's byte tokenizer does (each byte its own value).

Usage: export_interop.py FOLDER ROOT_PEM IDENTITY_CA_PEM SESSION_KEY:CERT WORKER_KEY:CERT
                         TOKENS_JSON TARGETS_JSON
Prints "loss <value>" and exits 0 when every check holds; 1 with the failed check on stderr;
77 when model_signing or transformers is not installed in this interpreter's environment.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn.functional as F
    from transformers import GPT2LMHeadModel, GPT2Tokenizer
except ModuleNotFoundError as missing:
    print(f"SKIP: {missing.name} is not installed (scripts/setup makes the environment)")
    sys.exit(77)

MODEL_SIGNING = os.path.join(os.path.dirname(sys.executable), "model_signing")
if not os.path.exists(MODEL_SIGNING):
    print("SKIP: model_signing is not installed (scripts/setup makes the environment)")
    sys.exit(77)


def fail(message):
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def verify(folder, ca):
    run = subprocess.run([MODEL_SIGNING, "verify", "certificate", "--signature",
                          os.path.join(folder, "model.sig"), "--certificate_chain", ca, folder],
                         capture_output=True, text=True, check=False)
    return run.returncode == 0, run.stdout + run.stderr


def sign(folder, key, certificate, chain):
    run = subprocess.run([MODEL_SIGNING, "sign", "certificate", "--signature",
                          os.path.join(folder, "model.sig"), "--private_key", key,
                          "--signing_certificate", certificate, "--certificate_chain", chain,
                          folder], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"model_signing could not sign the forgery: {(run.stdout + run.stderr).strip()}")


def check_forgeries(folder, root, identity_ca, signers, scratch):
    """Each signer (a name and KEY:CERT) re-signs a tampered copy: valid under the identity CA,
    refused under the artefact root."""
    for name, pair in signers:
        key, certificate = pair.split(":", 1)
        forged = os.path.join(scratch, f"forged-by-{name}")
        shutil.copytree(folder, forged)
        os.remove(os.path.join(forged, "model.sig"))
        path = os.path.join(forged, "model.safetensors")
        with open(path, "r+b") as handle:
            handle.seek(os.path.getsize(path) // 2)
            block = handle.read(64)
            handle.seek(-len(block), os.SEEK_CUR)
            handle.write(bytes(b ^ 0xFF for b in block))
        sign(forged, key, certificate, identity_ca)
        ok, output = verify(forged, identity_ca)
        if not ok:
            fail(f"the {name}'s forgery does not even verify under the identity CA, so this "
                 f"check proves nothing: {output.strip()}")
        ok, _ = verify(forged, root)
        if ok:
            fail(f"model_signing verifies a folder the {name}'s key signed against the artefact "
                 "root")


def main():
    folder, root, identity_ca, session, worker, tokens_json, targets_json = sys.argv[1:8]
    ok, output = verify(folder, root)
    if not ok:
        fail(f"model_signing does not verify the export against the artefact root: "
             f"{output.strip()}")
    ok, _ = verify(folder, identity_ca)
    if ok:
        fail("model_signing verifies the export against the identity CA: the roots are not apart")
    ca = root
    with tempfile.TemporaryDirectory() as scratch:
        check_forgeries(folder, root, identity_ca, [("session", session), ("worker", worker)],
                        scratch)
        edited = os.path.join(scratch, "edited")
        shutil.copytree(folder, edited)
        path = os.path.join(edited, "model.safetensors")
        with open(path, "r+b") as handle:
            handle.seek(os.path.getsize(path) // 2)
            byte = handle.read(1)
            handle.seek(-1, os.SEEK_CUR)
            handle.write(bytes([byte[0] ^ 1]))
        ok, _ = verify(edited, ca)
        if ok:
            fail("model_signing verifies an export with one byte of model.safetensors changed")
        added = os.path.join(scratch, "added")
        shutil.copytree(folder, added)
        with open(os.path.join(added, "extra.txt"), "w", encoding="utf-8") as handle:
            handle.write("not signed\n")
        ok, _ = verify(added, ca)
        if ok:
            fail("model_signing verifies an export with a file added")

    model = GPT2LMHeadModel.from_pretrained(folder)
    model.eval()
    tokens = torch.tensor(json.loads(tokens_json), dtype=torch.long)
    targets = torch.tensor(json.loads(targets_json), dtype=torch.long)
    with torch.no_grad():
        logits = model(input_ids=tokens).logits
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).double(), targets.reshape(-1),
                           ignore_index=-1).item()
    tokenizer = GPT2Tokenizer.from_pretrained(folder)
    text = "Hi, \u00e9t\u00e9\n"
    encoded = tokenizer.encode(text)
    if encoded != list(text.encode("utf-8")):
        fail(f"GPT2Tokenizer encodes {text!r} as {encoded}, not its bytes")
    print(f"loss {loss!r}")


if __name__ == "__main__":
    main()
