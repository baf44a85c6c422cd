#!/usr/bin/python3
"""PyTorch's CPU training speed for the GPT that bench_trainer times, for the comparison issue #7
asks for: the same shape (GPT-2 architecture: pre-LayerNorm blocks, causal self-attention, tanh
GELU MLP, tied LM head), the same batch and the same full step (forward, cross-entropy,
backward, global-norm clipping to 1.0, AdamW with decay on the 2-D tensors), written the way
nanoGPT writes it, with torch.set_num_threads(THREADS).

Usage: torch_cpu_bench.py --vocab V --padded-vocab P --context T --layers L --heads H
                          --width C --batch B --seq S --steps N --threads K
Prints one JSON line: {"torch": version, "threads": K, "seconds_per_step": ...,
"cpu_seconds_per_step": ... (process CPU time, all threads), "tokens_per_second": ..., "loss": ...}.
Exits 77 when torch is not importable (Debian's python3-torch is installed for /usr/bin/python3).
"""
import argparse
import json
import math
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print(json.dumps({"error": "python3-torch is not installed for /usr/bin/python3"}))
    sys.exit(77)


class Block(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(width)
        self.c_attn = torch.nn.Linear(width, 3 * width)
        self.c_proj = torch.nn.Linear(width, width)
        self.ln_2 = torch.nn.LayerNorm(width)
        self.c_fc = torch.nn.Linear(width, 4 * width)
        self.mlp_proj = torch.nn.Linear(4 * width, width)

    def forward(self, x, mask):
        batch, seq, width = x.shape
        head_size = width // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(width, dim=-1)
        q, k, v = (t.view(batch, seq, self.heads, head_size).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_size))
        scores = scores.masked_fill(mask[:seq, :seq], float("-inf"))
        y = (scores.softmax(dim=-1) @ v).transpose(1, 2).contiguous().view(batch, seq, width)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(torch.nn.Module):
    def __init__(self, args):
        super().__init__()
        self.wte = torch.nn.Embedding(args.padded_vocab, args.width)
        self.wpe = torch.nn.Embedding(args.context, args.width)
        self.blocks = torch.nn.ModuleList(Block(args.width, args.heads) for _ in range(args.layers))
        self.ln_f = torch.nn.LayerNorm(args.width)
        self.vocab = args.vocab
        mask = ~torch.tril(torch.ones(args.context, args.context, dtype=torch.bool))
        self.register_buffer("mask", mask, persistent=False)
        for name, parameter in self.named_parameters():
            if name.endswith("bias"):
                torch.nn.init.zeros_(parameter)
            elif parameter.dim() == 2:
                std = 0.02 / math.sqrt(2 * args.layers) if name.endswith("proj.weight") else 0.02
                torch.nn.init.normal_(parameter, 0.0, std)

    def forward(self, tokens, targets):
        seq = tokens.shape[1]
        x = self.wte(tokens) + self.wpe.weight[:seq]
        for block in self.blocks:
            x = block(x, self.mask)
        logits = self.ln_f(x) @ self.wte.weight.t()  # tied LM head
        logits = logits[..., : self.vocab]
        return F.cross_entropy(logits.reshape(-1, self.vocab), targets.reshape(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("vocab", "padded-vocab", "context", "layers", "heads", "width", "batch", "seq",
                 "steps", "threads"):
        parser.add_argument("--" + name, type=int, required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    model = Gpt(args)
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() != 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=3e-4, betas=(0.9, 0.95), eps=1e-8)
    generator = torch.Generator().manual_seed(2)
    data = torch.randint(0, args.vocab, (args.batch, args.seq + 1), generator=generator)
    tokens, targets = data[:, :-1].contiguous(), data[:, 1:].contiguous()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = model(tokens, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    step()  # warm-up, as bench_trainer does
    start = time.perf_counter()
    cpu_start = time.process_time()
    for _ in range(args.steps):
        loss = step()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                      "seconds_per_step": elapsed / args.steps,
                      "cpu_seconds_per_step": cpu / args.steps,
                      "tokens_per_second": args.steps * args.batch * args.seq / elapsed,
                      "loss": loss}))


if __name__ == "__main__":
    main()
