#!/usr/bin/env python3
"""GPT-2 interoperability with Hugging Face's transformers (issue #30), both ways, with the
outside tool doing its own computation:

- export: the folder Sealtrain writes for a model (model.safetensors under GPT-2's names and the
  config.json of formats/hf_gpt2.h) loads in transformers' GPT2LMHeadModel, whose loss on our
  batch equals the loss our CPU trainer computed within 1e-4 relative;
- import: a small GPT-2 that transformers makes and saves with save_pretrained (safetensors) is
  read by Sealtrain's importer, and our loss at step 0 on a fixed batch equals transformers' within
  1e-5 relative; a folder whose config our model can not follow, or whose head is untied, is
  refused.

Usage: transformers_interop.py TRAINER_REFERENCE_DUMP HF_GPT2_LOSS
Runs with the interpreter of the virtual environment scripts/setup makes
(tests/python/requirements-interop.txt over Debian's python3-torch). Exits 77 (skipped) when
transformers is not installed there.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn.functional as F
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel
except ModuleNotFoundError as missing:
    if missing.name not in ("torch", "transformers"):
        raise
    print(f"SKIP: {missing.name} is not installed (scripts/setup makes the environment)")
    sys.exit(77)

from safetensors_torch import Checks, read_safetensors

check = Checks()
failures = check.failures


def write_batch(path, tokens, targets):
    """A safetensors file of two I32 tensors, written from the format's specification."""
    entries = []
    offset = 0
    header = {}
    for name, tensor in (("tokens", tokens), ("targets", targets)):
        raw = tensor.to(torch.int32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "I32", "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        entries.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(text)) + text + b"".join(entries))


def hf_loss(model, tokens, targets):
    """Mean cross-entropy over the targets that are not -1, from transformers' logits."""
    with torch.no_grad():
        logits = model(input_ids=tokens.long()).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).double(),
                           targets.long().reshape(-1), ignore_index=-1).item()


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def export_direction(dump_tool, folder):
    subprocess.run([dump_tool, folder], check=True)
    reference, _ = read_safetensors(os.path.join(folder, "reference.safetensors"))
    model = GPT2LMHeadModel.from_pretrained(folder)
    model.eval()
    ours = float(reference["loss"][0])
    theirs = hf_loss(model, reference["tokens0"], reference["targets0"])
    check(relative(theirs, ours) <= 1e-4,
          f"export: transformers' loss {theirs:.8f} equals ours {ours:.8f} within 1e-4 relative")


def import_direction(loss_tool, folder):
    torch.manual_seed(7)
    config = GPT2Config(vocab_size=83, n_positions=24, n_embd=48, n_layer=2, n_head=4,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config)
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    check(os.path.exists(os.path.join(folder, "model.safetensors")),
          "import: save_pretrained wrote model.safetensors")
    generator = torch.Generator().manual_seed(11)
    tokens = torch.randint(0, config.vocab_size, (3, 20), generator=generator)
    targets = torch.randint(0, config.vocab_size, (3, 20), generator=generator)
    targets[1, 4] = -1
    batch = os.path.join(folder, "batch.safetensors")
    write_batch(batch, tokens, targets)
    theirs = hf_loss(model, tokens, targets)
    ran = subprocess.run([loss_tool, folder, batch], capture_output=True, text=True)
    check(ran.returncode == 0, f"import: Sealtrain read the folder ({ran.stderr.strip()})")
    if ran.returncode == 0:
        ours = float(ran.stdout)
        check(relative(ours, theirs) <= 1e-5,
              f"import: our loss {ours:.8f} equals transformers' {theirs:.8f} within 1e-5 "
              "relative at step 0")

    # What our model does not compute is refused, with a sentence naming the key.
    with open(os.path.join(folder, "config.json")) as handle:
        original = json.load(handle)
    for key, value in (("activation_function", "relu"), ("layer_norm_epsilon", 1e-6),
                       ("tie_word_embeddings", False), ("n_inner", 100)):
        changed = dict(original, **{key: value})
        with open(os.path.join(folder, "config.json"), "w") as handle:
            json.dump(changed, handle)
        refused = subprocess.run([loss_tool, folder, batch], capture_output=True, text=True)
        check(refused.returncode != 0 and key in refused.stderr,
              f"import: a config with {key}={value!r} is refused ({refused.stderr.strip()})")
    with open(os.path.join(folder, "config.json"), "w") as handle:
        json.dump(original, handle)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    with tempfile.TemporaryDirectory() as exported, tempfile.TemporaryDirectory() as imported:
        export_direction(sys.argv[1], exported)
        import_direction(sys.argv[2], imported)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("transformers interop: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
