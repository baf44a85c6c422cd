#!/usr/bin/env python3
"""An exported model folder (docs/formats/model-export.md) checked with the outside tools alone
(issue #30):

- OpenSSF model-signing: `model_signing verify certificate --signature FOLDER/model.sig
  --certificate_chain CA FOLDER` succeeds with only the platform CA's certificate, and fails for
  a copy with one byte of model.safetensors changed, and for a copy with a file added;
- transformers: GPT2LMHeadModel loads the folder, and its loss on the batch given is printed
  (the caller compares it with Sealtrain's own); GPT2Tokenizer loads the tokenizer files and
  encodes text as Sealtrain's byte tokenizer does (each byte its own value).

Usage: export_interop.py FOLDER CA_PEM TOKENS_JSON TARGETS_JSON
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


def main():
    folder, ca, tokens_json, targets_json = sys.argv[1:5]
    ok, output = verify(folder, ca)
    if not ok:
        fail(f"model_signing does not verify the export: {output.strip()}")
    with tempfile.TemporaryDirectory() as scratch:
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
