#!/usr/bin/env python3
"""PyTorch's GPT-2 124M training throughput, for comparison with bench_cuda_gpt (issue #8).

The same shape (d 768, 12 layers, 12 heads, T 1024, vocabulary 50257 padded to 50304, tied LM
head), batch and step (forward, backward, clipping at 1.0, AdamW with decay on 2-D tensors) as
the Sealtrain benchmark, written the way a PyTorch user would write it: bf16 autocast,
torch.compile, fused AdamW, scaled_dot_product_attention (flash attention). As in nanoGPT, the
softmax runs over the padded vocabulary (the padding is never a target); the cost is the same.
MFU uses the same FLOPs per token (6·N + 6·L·C·T, N without wpe) and, when given, the same
measured GEMM ceiling as the Sealtrain benchmark. The last line is one JSON object.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.c_attn = nn.Linear(width, 3 * width)
        self.attn_proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.c_fc = nn.Linear(width, 4 * width)
        self.mlp_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab, context, layers, heads, width):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.lm_head.weight = self.wte.weight
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, tokens, targets):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), targets.view(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--ceiling-tflops", type=float, default=0.0,
                        help="the measured bf16 GEMM ceiling to state MFU against")
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("SKIP torch_gpt2: PyTorch sees no CUDA GPU.")
        raise SystemExit(77)

    torch.manual_seed(1)
    torch.backends.cuda.matmul.allow_tf32 = True
    device = "cuda"
    layers, heads, width, vocab, padded = 12, 12, 768, 50257, 50304
    model = Gpt(padded, 1024, layers, heads, width).to(device)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=6e-4, betas=(0.9, 0.95), eps=1e-8, fused=True)
    step_model = model if args.no_compile else torch.compile(model)
    generator = torch.Generator(device="cpu").manual_seed(7)
    data = torch.randint(0, vocab, (args.batch, args.seq + 1), generator=generator).to(device)
    tokens, targets = data[:, :-1].contiguous(), data[:, 1:].contiguous()

    torch.cuda.reset_peak_memory_stats()
    times = []
    losses = []
    for step in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = step_model(tokens, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        losses.append(loss.item())
        print(f"step {step:2d}: loss {losses[-1]:.4f}, {seconds * 1e3:.1f} ms", flush=True)
        if step >= args.warmup:
            times.append(seconds)

    step_time = statistics.median(times)
    tokens_per_s = args.batch * args.seq / step_time
    n = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    flops_per_token = 6 * n + 6 * layers * width * args.seq
    achieved = flops_per_token * tokens_per_s
    ceiling = args.ceiling_tflops * 1e12
    memory_gib = torch.cuda.max_memory_allocated() / 2**30
    print(f"PyTorch {torch.__version__} GPT-2 124M, bf16 autocast"
          f"{'' if args.no_compile else ' + torch.compile'}, batch {args.batch} x {args.seq}: "
          f"{tokens_per_s:.0f} tokens/s (median step {step_time * 1e3:.1f} ms), "
          f"{achieved / 1e12:.1f} TFLOP/s, peak memory {memory_gib:.2f} GiB")
    print(json.dumps({"impl": "pytorch", "precision": "bf16", "batch": args.batch,
                      "seq": args.seq, "tokens_per_s": round(tokens_per_s, 1),
                      "step_ms": round(step_time * 1e3, 3), "tflops": round(achieved / 1e12, 2),
                      "gemm_ceiling_tflops": args.ceiling_tflops,
                      "mfu": round(achieved / ceiling, 4) if ceiling > 0 else None,
                      "memory_gib": round(memory_gib, 3)}))


if __name__ == "__main__":
    main()
