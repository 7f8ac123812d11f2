#!/usr/bin/env python3
"""tiny_gguf.py - write a tiny random-weight llama GGUF model with a byte-level vocabulary, for
scripts/real-llamacpp.sh (measuring regsweep against a real llama.cpp server; not used by CI).
No model is downloaded anywhere: the weights are seeded random numbers, the vocabulary is the 256
bytes (GPT-2's byte-to-unicode spelling, no merges beyond one) plus three control tokens, so every
byte is one token, as a byte-level model cuts a prompt. Pure standard library (no numpy).
  tiny_gguf.py OUT.gguf [--embd 64] [--layers 2] [--ff 128] [--ctx 65536] [--seed 1]"""
import argparse, random, struct
from array import array

GGUF_T = {"u32": 4, "i32": 5, "f32": 6, "bool": 7, "str": 8, "arr": 9}


def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, typ, val):
    out = s(key) + struct.pack("<I", GGUF_T[typ])
    if typ == "u32": out += struct.pack("<I", val)
    elif typ == "f32": out += struct.pack("<f", val)
    elif typ == "str": out += s(val)
    return out


def kv_arr(key, typ, vals):
    out = s(key) + struct.pack("<I", GGUF_T["arr"]) + struct.pack("<IQ", GGUF_T[typ], len(vals))
    for v in vals:
        out += s(v) if typ == "str" else struct.pack("<i", v)
    return out


def byte_tokens():
    """GPT-2's byte-to-unicode table: printable bytes stand for themselves, the rest are shifted."""
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    m = dict(zip(bs, cs))
    return [chr(m[b]) for b in range(256)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--embd", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--ff", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ctx", type=int, default=65536)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    toks = byte_tokens() + ["ĠĠ", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    types = [1] * 257 + [3, 3, 3]
    nv, E, F, H = len(toks), a.embd, a.ff, a.heads
    meta = [
        kv("general.architecture", "str", "llama"),
        kv("general.name", "str", "regsweep-tiny-random"),
        kv("llama.context_length", "u32", a.ctx),
        kv("llama.embedding_length", "u32", E),
        kv("llama.block_count", "u32", a.layers),
        kv("llama.feed_forward_length", "u32", F),
        kv("llama.rope.dimension_count", "u32", E // H),
        kv("llama.attention.head_count", "u32", H),
        kv("llama.attention.head_count_kv", "u32", H),
        kv("llama.attention.layer_norm_rms_epsilon", "f32", 1e-5),
        kv("llama.vocab_size", "u32", nv),
        kv("tokenizer.ggml.model", "str", "gpt2"),
        kv("tokenizer.ggml.pre", "str", "default"),
        kv_arr("tokenizer.ggml.tokens", "str", toks),
        kv_arr("tokenizer.ggml.token_type", "i32", types),
        kv_arr("tokenizer.ggml.merges", "str", ["Ġ Ġ"]),
        kv("tokenizer.ggml.bos_token_id", "u32", 257),
        kv("tokenizer.ggml.eos_token_id", "u32", 259),
    ]
    tensors = [("token_embd.weight", (E, nv)), ("output_norm.weight", (E,)), ("output.weight", (E, nv))]
    for i in range(a.layers):
        p = "blk.%d." % i
        tensors += [(p + "attn_norm.weight", (E,)), (p + "attn_q.weight", (E, E)), (p + "attn_k.weight", (E, E)),
                    (p + "attn_v.weight", (E, E)), (p + "attn_output.weight", (E, E)), (p + "ffn_norm.weight", (E,)),
                    (p + "ffn_gate.weight", (E, F)), (p + "ffn_down.weight", (F, E)), (p + "ffn_up.weight", (E, F))]
    ALIGN = 32
    infos, datas, off = b"", [], 0
    for name, dims in tensors:
        n = 1
        for d in dims: n *= d
        if name.endswith("norm.weight"): vals = array("f", [1.0] * n)
        else: vals = array("f", (rnd.gauss(0, 0.5) for _ in range(n)))
        data = vals.tobytes()
        infos += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", 0, off)  # type 0: F32
        pad = (-len(data)) % ALIGN
        datas.append(data + b"\0" * pad)
        off += len(data) + pad
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + b"".join(meta) + infos
    head += b"\0" * ((-len(head)) % ALIGN)
    with open(a.out, "wb") as f:
        f.write(head)
        for d in datas: f.write(d)
    print("wrote %s: llama, %d layers, embd %d, ff %d, vocab %d (bytes), ctx %d" % (a.out, a.layers, E, F, nv, a.ctx))


if __name__ == "__main__":
    main()
