#!/usr/bin/env python3
"""A small GPT-2 made by Hugging Face's transformers, for fine-tuning through the control plane
(issue #30; test_api_finetune):

- a byte-level BPE tokenizer (GPT-2's byte alphabet, a few merges, <|endoftext|>) written with
  GPT2Tokenizer.save_pretrained, and a GPT-2 of 2 layers whose vocabulary is that tokenizer's,
  written with GPT2LMHeadModel.save_pretrained(safe_serialization=True): the folder the test
  imports as a base model;
- records.jsonl, the records of the dataset the test imports with the same tokenizer files;
- expected.json: the context, how many training sequences that dataset has (the whole split is
  one batch, so the order the reader draws them in does not matter), and transformers' mean
  cross-entropy over all of them at the saved weights: what the job's first step must report,
  within 1e-5 relative.

Usage: finetune_interop.py OUT                      make the folder, the records, expected.json
       finetune_interop.py --check-export DIR OUT  an exported folder of a model fine-tuned from
                                                   OUT's (its weights unchanged): transformers'
                                                   GPT2Tokenizer encodes every record as OUT's
                                                   tokenizer does, GPT2LMHeadModel's logits on
                                                   them equal OUT's model's within 1e-5
Runs with the interpreter of the virtual environment scripts/setup makes. Exits 77 (skipped) when
transformers is not installed there.
"""
import json
import os
import sys

try:
    import torch
    import torch.nn.functional as F
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer
    from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode
except ModuleNotFoundError as missing:
    if missing.name not in ("torch", "transformers"):
        raise
    print(f"SKIP: {missing.name} is not installed (scripts/setup makes the environment)")
    sys.exit(77)

CONTEXT = 16
RECORDS = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a cat and a dog met on the mat",
    "the sun is hot and the sea is cold",
    "then the cat ran at the dog",
    "the dog ran on and on",
    "at noon the cat sat in the sun",
    "the mat is on the log",
    "no cat, no dog, no mat",
    "the end of the tale of the cat",
]
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("a", "t"), ("Ġ", "c"), ("Ġc", "at"),
          ("Ġ", "s"), ("Ġs", "at"), ("o", "n"), ("Ġ", "on"), ("Ġ", "d"), ("o", "g"),
          ("Ġd", "og"), ("Ġ", "m"), ("Ġm", "at"), ("a", "n"), ("Ġ", "a"), ("Ġa", "n")]


def main(out):
    folder = os.path.join(out, "model")
    os.makedirs(folder, exist_ok=True)
    alphabet = bytes_to_unicode()
    symbols = [alphabet[b] for b in range(256)]
    for first, second in MERGES:
        assert first in symbols and second in symbols, (first, second)
        symbols.append(first + second)
    symbols.append("<|endoftext|>")
    vocab_file = os.path.join(out, "vocab.json")
    merges_file = os.path.join(out, "merges.txt")
    with open(vocab_file, "w", encoding="utf-8") as handle:
        json.dump({symbol: i for i, symbol in enumerate(symbols)}, handle, ensure_ascii=False)
    with open(merges_file, "w", encoding="utf-8") as handle:
        handle.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES))
    tokenizer = GPT2Tokenizer(vocab_file, merges_file)
    tokenizer.save_pretrained(folder)
    end = tokenizer.convert_tokens_to_ids("<|endoftext|>")

    torch.manual_seed(7)
    config = GPT2Config(vocab_size=len(symbols), n_positions=CONTEXT, n_embd=32, n_layer=2,
                        n_head=4, bos_token_id=end, eos_token_id=end, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config).eval()
    model.save_pretrained(folder, safe_serialization=True)

    with open(os.path.join(out, "records.jsonl"), "w", encoding="utf-8") as handle:
        for record in RECORDS:
            handle.write(json.dumps({"text": record}) + "\n")
    # The training split's token stream: every record's tokens, each followed by end of text.
    stream = []
    for record in RECORDS:
        stream += tokenizer.encode(record) + [end]
    sequences = (len(stream) - 1) // CONTEXT
    tokens = torch.tensor(stream, dtype=torch.long)
    inputs = torch.stack([tokens[i * CONTEXT:(i + 1) * CONTEXT] for i in range(sequences)])
    targets = torch.stack([tokens[i * CONTEXT + 1:(i + 1) * CONTEXT + 1] for i in range(sequences)])
    with torch.no_grad():
        logits = model(inputs).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as handle:
        json.dump({"context": CONTEXT, "sequences": sequences, "loss": float(loss),
                   "layers": 2, "heads": 4, "width": 32, "vocab_size": len(symbols)}, handle)
    print(f"made {folder}: vocabulary {len(symbols)}, {sequences} sequences, loss {float(loss)}")
    return 0


def check_export(exported, out):
    original = os.path.join(out, "model")
    theirs = GPT2Tokenizer.from_pretrained(exported)
    ours = GPT2Tokenizer.from_pretrained(original)
    failures = 0
    for record in RECORDS:
        if theirs.encode(record) != ours.encode(record):
            print(f"FAIL: the exported tokenizer encodes {record!r} otherwise")
            failures += 1
    if theirs.eos_token_id != ours.eos_token_id:
        print(f"FAIL: end of text {theirs.eos_token_id}, not {ours.eos_token_id}")
        failures += 1
    tokens = torch.tensor([ours.encode(RECORDS[0])], dtype=torch.long)
    with torch.no_grad():
        a = GPT2LMHeadModel.from_pretrained(exported).eval()(tokens).logits
        b = GPT2LMHeadModel.from_pretrained(original).eval()(tokens).logits
    worst = float((a - b).abs().max() / b.abs().max())
    if worst > 1e-5:
        print(f"FAIL: the exported model's logits differ from the original's by {worst} relative")
        failures += 1
    print(f"checked the export: tokenizer and logits (largest relative difference {worst})")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "--check-export":
        sys.exit(check_export(sys.argv[2], sys.argv[3]))
    sys.exit(main(sys.argv[1]))
