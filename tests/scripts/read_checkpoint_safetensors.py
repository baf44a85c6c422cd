#!/usr/bin/env python3
"""An independent reader of a checkpoint's plaintext, written from the safetensors format
(huggingface.co/docs/safetensors, and docs/formats/checkpoint.md) with the standard library only,
sharing no code with Sealtrain's decoder.

Usage: read_checkpoint_safetensors.py PLAINTEXT EXPECTED.json EXPECTED.bin

EXPECTED.json: {"tensors": {name: {"shape": [...], "offset": bytes, "bytes": n}, ...},
                "metadata": {key: value, ...}}
EXPECTED.bin:  the raw little-endian bytes every tensor must hold, at its offset.

Checks the file's structure (an 8-byte little-endian header length, a JSON header of tensors and
string metadata, every tensor's byte range inside the buffer, matching its dtype and shape, the
ranges covering the buffer exactly without overlap), then that it holds exactly the expected
tensors with the expected shapes and bytes, and the expected metadata. Exits 0 when all hold,
1 with one line per failure otherwise.
"""
import json
import math
import struct
import sys

DTYPE_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
               "U8": 1, "BOOL": 1}


def read_safetensors(blob, failures):
    if len(blob) < 8:
        failures.append("the file is shorter than its 8-byte header length")
        return {}, {}, b""
    (header_size,) = struct.unpack("<Q", blob[:8])
    if header_size > len(blob) - 8:
        failures.append(f"the header length {header_size} runs past the end of the file")
        return {}, {}, b""
    header = json.loads(blob[8:8 + header_size].decode("utf-8"))
    buffer = blob[8 + header_size:]
    metadata = header.pop("__metadata__", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        failures.append("__metadata__ is not a map of strings to strings")
    ranges = []
    for name, info in header.items():
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in DTYPE_SIZES:
            failures.append(f"{name}: unknown dtype {dtype}")
            continue
        if not 0 <= begin <= end <= len(buffer):
            failures.append(f"{name}: its byte range [{begin}, {end}) is outside the buffer")
            continue
        if end - begin != math.prod(shape) * DTYPE_SIZES[dtype]:
            failures.append(f"{name}: {end - begin} bytes for shape {shape} of {dtype}")
        ranges.append((begin, end, name))
    position = 0
    for begin, end, name in sorted(ranges):
        if begin != position:
            failures.append(f"{name}: starts at {begin}, not where the previous tensor ended "
                            f"({position}): a hole or an overlap")
        position = max(position, end)
    if position != len(buffer):
        failures.append(f"the tensors cover {position} of the buffer's {len(buffer)} bytes")
    return header, metadata, buffer


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        blob = f.read()
    with open(sys.argv[2]) as f:
        expected = json.load(f)
    with open(sys.argv[3], "rb") as f:
        expected_bytes = f.read()
    failures = []
    header, metadata, buffer = read_safetensors(blob, failures)
    wanted = expected["tensors"]
    if set(header) != set(wanted):
        failures.append(f"tensors missing: {sorted(set(wanted) - set(header))}, "
                        f"unexpected: {sorted(set(header) - set(wanted))}")
    for name in sorted(set(header) & set(wanted)):
        info, want = header[name], wanted[name]
        if info["shape"] != want["shape"]:
            failures.append(f"{name}: shape {info['shape']}, expected {want['shape']}")
        begin, end = info["data_offsets"]
        if buffer[begin:end] != expected_bytes[want["offset"]:want["offset"] + want["bytes"]]:
            failures.append(f"{name}: its values differ from the tensor that was written")
    for key, value in expected["metadata"].items():
        if metadata.get(key) != value:
            failures.append(f"metadata {key}: {metadata.get(key)!r}, expected {value!r}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(header)} tensors, {len(buffer)} bytes of data, {len(metadata)} metadata keys, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
