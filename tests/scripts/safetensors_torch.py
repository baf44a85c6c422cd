"""What the Python checks against PyTorch share (torch_reference.py, transformers_interop.py):
safetensors read from the format's specification alone, and a list of checks that prints each
outcome and remembers the failures."""
import json
import struct

import torch

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32}


def read_safetensors(path):
    """Parses the format from its specification: u64 LE header size, JSON header, data.
    Returns (tensors by name, __metadata__)."""
    with open(path, "rb") as handle:
        data = handle.read()
    (header_size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_size])
    metadata = header.pop("__metadata__", {})
    body = data[8 + header_size:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = bytearray(body[begin:end])
        tensor = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]) if raw else torch.empty(0)
        tensors[name] = tensor.reshape(info["shape"]).clone()
    return tensors, metadata


class Checks:
    """Each check prints ok or FAIL with its message; failures keeps the failed ones."""

    def __init__(self):
        self.failures = []

    def __call__(self, condition, message):
        print(("ok   " if condition else "FAIL ") + message)
        if not condition:
            self.failures.append(message)
