#!/usr/bin/python3
"""strip_tokenizer.py IN OUT -- copy a GGUF without its tokenizer.* keys.

Fixture generator for tests/models/no-tokenizer.gguf (a model q42run must
refuse: a missing tokenizer is a load failure). Uses gguf-py from the
llama.cpp oracle ($PEER_DIR/llama.cpp/gguf-py); never run by the tests.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("PEER_DIR", "/work/peer"), "llama.cpp", "gguf-py"))
import numpy as np  # noqa: E402
import gguf  # noqa: E402
from gguf import GGUFValueType as VT  # noqa: E402

src, out = sys.argv[1], sys.argv[2]
r = gguf.GGUFReader(src)
arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
w = gguf.GGUFWriter(out, arch)
for name, f in r.fields.items():
    if name.startswith("GGUF.") or name.startswith("tokenizer.") or name == "general.architecture":
        continue
    t0 = f.types[0]
    if t0 == VT.ARRAY:
        sub = f.types[-1]
        if sub == VT.STRING:
            val = [bytes(f.parts[i].tobytes()) for i in f.data]
        else:
            val = [f.parts[i].tolist()[0] for i in f.data]
        w.add_key_value(name, val, VT.ARRAY, sub_type=sub)
    elif t0 == VT.STRING:
        w.add_key_value(name, bytes(f.parts[-1].tobytes()), VT.STRING)
    else:
        w.add_key_value(name, f.parts[-1].tolist()[0], t0)
for t in r.tensors:
    w.add_tensor(t.name, np.asarray(t.data), raw_shape=None, raw_dtype=t.tensor_type)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
