#!/usr/bin/env python3
"""rfc6962.py -- an independent reader of Q42 volumes and verifier of
RFC 6962 proofs, for the q42wal tests. Shares no code with libq42: the
volume layout is read from q42-volume(5), CRC-32C is computed bit by bit
from its definition (reflected polynomial 0x82F63B78), the tree hash
from RFC 6962 section 2.1, and the proof checks follow the verification
algorithms of RFC 9162 sections 2.1.3.2 and 2.1.4.2.

  rfc6962.py root VOLUME [SIZE]   print "SIZE ROOTHEX" of the volume's tree
  rfc6962.py roots VOLUME         print "SIZE ROOTHEX" for every size 0..n
  rfc6962.py leaves VOLUME        print one leaf hash per line
  rfc6962.py index VOLUME         check VOLUME.idx (q42-volume(5), INDEX)
                                  record by record against the volume
  rfc6962.py review VOLUME        check VOLUME.rev (q42-volume(5), REVIEW
                                  STATE): the review state after the frame
                                  it names, computed from the frames
  rfc6962.py inclusion PROOF.json...    verify `q42wal prove` outputs
  rfc6962.py consistency PROOF.json...  verify `q42wal consistency` outputs
Exit status 0 when all are valid, 1 when one is not.
"""
import hashlib
import json
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def sha(b):
    return hashlib.sha256(b).digest()


def read_volume(path, frames=None):
    """Leaf payloads of every ENTRY frame, after checking every frame;
    frames (a list) receives (offset, seq, frame hash) of each ENTRY."""
    data = open(path, "rb").read()
    if len(data) < 64 or data[:4] != b"Q42\0":
        raise ValueError("bad header")
    if struct.unpack_from("<I", data, 60)[0] != crc32c(data[:60]):
        raise ValueError("header CRC")
    prev = sha(data[:64])
    off, seq, leaves = 64, 0, []
    while off < len(data):
        length, ftype, flags, fseq = struct.unpack_from("<IHHQ", data, off)
        end = off + 48 + length + 4
        if end > len(data):
            raise ValueError("frame %d truncated" % seq)
        frame = data[off:end]
        if struct.unpack_from("<I", frame, 48 + length)[0] != crc32c(frame[:48 + length]):
            raise ValueError("frame %d CRC" % seq)
        if fseq != seq or flags != 0 or frame[16:48] != prev:
            raise ValueError("frame %d sequence, flags or link" % seq)
        if ftype == 2:
            leaves.append(frame[48:48 + length])
            if frames is not None:
                frames.append((off, seq, sha(frame)))
        prev = sha(frame)
        off, seq = end, seq + 1
    return leaves


def leaf_hash(d):
    return sha(b"\x00" + d)


def node_hash(l, r):
    return sha(b"\x01" + l + r)


def mth(hashes):
    n = len(hashes)
    if n == 0:
        return sha(b"")
    if n == 1:
        return hashes[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def shift_to_set_bit(fn, sn):
    """RFC 9162's inner loop: shift fn and sn right until fn's low bit is set or fn is 0."""
    while True:
        fn >>= 1
        sn >>= 1
        if fn & 1 or fn == 0:
            return fn, sn


def verify_inclusion(index, size, leaf, path, root):
    """RFC 9162, 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                fn, sn = shift_to_set_bit(fn, sn)
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first, second, first_root, second_root, proof):
    """RFC 9162, 2.1.4.2."""
    if first == second:
        return not proof and first_root == second_root
    if first == 0 or first > second or not proof:
        return False
    if first & (first - 1) == 0:
        proof = [first_root] + proof
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                fn, sn = shift_to_set_bit(fn, sn)
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


def check_index(path):
    """The index as q42-volume(5) specifies it, computed here from the
    volume alone and compared byte for byte."""
    frames = []
    payloads = read_volume(path, frames)
    hashes = [leaf_hash(d) for d in payloads]
    idx = open(path + ".idx", "rb").read()
    head = b"Q42I" + struct.pack("<III", 1, 64, 0) + sha(open(path, "rb").read(64)) + bytes(12)
    head += struct.pack("<I", crc32c(head))
    if idx[:64] != head:
        print("index header differs")
        return 1
    off, binding = 64, 0xFFFFFFFFFFFFFFFF
    for i, (foff, seq, fh) in enumerate(frames):
        kind = payloads[i][0]
        if kind == 3:
            binding = i
        rec = struct.pack("<QQ", foff, seq) + fh + hashes[i] + bytes([kind]) + bytes(7)
        rec += struct.pack("<Q", binding)
        t = 0
        while (i >> t) & 1:
            t += 1
        for h in range(1, t + 1):
            rec += mth(hashes[i + 1 - 2 ** h:i + 1])
        rec += struct.pack("<I", crc32c(rec))
        want_off = 64 + 100 * i + 32 * (i - bin(i).count("1"))
        if off != want_off or idx[off:off + len(rec)] != rec:
            print("index record %d at offset %d differs" % (i, off))
            return 1
        off += len(rec)
    if off != len(idx):
        print("index has %d bytes after its last record" % (len(idx) - off))
        return 1
    print("index: %d records valid" % len(frames))
    return 0


def review_state(data, last_seq):
    """Every pending frame of frames 0..last_seq and its review state, by
    the rules of q42-volume(5) (signatures are not checked here), and
    (offset, end, hash, entries) of frame last_seq."""
    keys, quorum, pending = [], 0, {}
    off, seq, leaves = 64, 0, 0
    while off < len(data):
        length, ftype = struct.unpack_from("<IH", data, off)
        end = off + 52 + length
        frame, p = data[off:end], data[off + 48:off + 48 + length]
        if ftype == 1:
            quorum, n = struct.unpack_from("<II", p, 0)
            keys = [p[8 + 32 * i:40 + 32 * i] for i in range(n)]
        elif ftype == 3:
            digest = sha(p[:16] + p[24:])
            pending[seq] = dict(off=off, length=length, state=0, appr=0, rej=0, voted=0,
                                leaf=0xFFFFFFFFFFFFFFFF, hash=sha(frame), digest=digest)
        elif ftype == 4:
            ps, decision = struct.unpack_from("<QB", p, 0)
            d = pending[ps]
            d["voted"] |= 1 << keys.index(p[16:48])
            if decision == 1:
                d["appr"] += 1
            else:
                d["rej"] += 1
                if d["rej"] > len(keys) - quorum:
                    d["state"] = 2
        elif ftype == 2:
            review = struct.unpack_from("<Q", p, 16)[0]
            if review != 0xFFFFFFFFFFFFFFFF:
                pending[review]["state"] = 1
                pending[review]["leaf"] = leaves
            leaves += 1
        if seq == last_seq:
            return pending, (off, end, sha(frame), leaves)
        off, seq = end, seq + 1
    raise ValueError("the volume has no frame %d" % last_seq)


def check_review(path):
    """VOLUME.rev as q42-volume(5) specifies it, computed here from the
    frames alone and compared byte for byte."""
    read_volume(path)
    data = open(path, "rb").read()
    rev = open(path + ".rev", "rb").read()
    head = b"Q42R" + struct.pack("<III", 1, 64, 0) + sha(data[:64]) + bytes(12)
    head += struct.pack("<I", crc32c(head))
    if rev[:64] != head:
        print("review state header differs")
        return 1
    last = struct.unpack_from("<Q", rev, 64)[0]
    pending, (off, end, fh, leaves) = review_state(data, last)
    body = struct.pack("<QQQ", last, off, end) + fh + struct.pack("<QQ", leaves, len(pending))
    for seq in sorted(pending):
        d = pending[seq]
        body += struct.pack("<QQIB3xIIIIQ", seq, d["off"], d["length"], d["state"], d["appr"],
                            d["rej"], d["voted"], 0, d["leaf"]) + d["hash"] + d["digest"]
    body += struct.pack("<I", crc32c(body))
    if rev[64:] != body:
        print("review state after frame %d differs" % last)
        return 1
    print("review state: after frame %d, %d pending frames, valid" % (last, len(pending)))
    return 0


def main(argv):
    cmd = argv[1]
    if cmd == "index":
        return check_index(argv[2])
    if cmd == "review":
        return check_review(argv[2])
    if cmd == "roots":
        hashes = [leaf_hash(d) for d in read_volume(argv[2])]
        for n in range(len(hashes) + 1):
            print(n, mth(hashes[:n]).hex())
        return 0
    if cmd in ("root", "leaves"):
        hashes = [leaf_hash(d) for d in read_volume(argv[2])]
        if cmd == "leaves":
            for h in hashes:
                print(h.hex())
            return 0
        n = int(argv[3]) if len(argv) > 3 else len(hashes)
        print(n, mth(hashes[:n]).hex())
        return 0
    h = bytes.fromhex
    bad = 0
    for path in argv[2:]:
        p = json.load(open(path))
        if cmd == "inclusion":
            ok = verify_inclusion(p["index"], p["size"], h(p["leaf"]),
                                  [h(x) for x in p["path"]], h(p["root"]))
        else:
            ok = verify_consistency(p["old"], p["new"], h(p["old_root"]), h(p["new_root"]),
                                    [h(x) for x in p["proof"]])
        print("%s: %s" % (path, "valid" if ok else "INVALID"))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
