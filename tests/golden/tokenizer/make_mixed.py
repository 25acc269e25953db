#!/usr/bin/env python3
"""make_mixed.py -- writes mixed.txt, an input (not expected results) for
the Unigram and gemma4 goldens: 400 lines drawn with a fixed seed from
pieces that stress them (runs of spaces and tabs, charsmap input such as
fullwidth letters, U+00BD and U+3000, special-token texts, U+2581, and
ill-formed UTF-8). Deterministic. Usage: make_mixed.py > mixed.txt"""
import random, sys

random.seed(7)
pool = [b' ', b'  ', b'\t', b'a', b'the', b' cat', b'\xc3\xa9', b'\xef\xbd\x81', b'\xc2\xbd',
        b'\xe3\x80\x80', b'\xff', b'\xe2\x82', b'\xf0\x9f\xa6\x99', b'<s>', b'</s>', b'<mask>',
        b'<unk>', b'<bos>', b'<eos>', b'\xe2\x96\x81', b'\r', b'123', b'\xef\xbf\xbd', b'<0x41>',
        b'\xe1\x84\x80', b'\xed\xa0\x80', b'\xc0\xaf', b'\n\n', b'---', b'\xe2\x84\xa2',
        b'\xef\xac\x81']
out = []
for i in range(400):
    line = b''.join(random.choice(pool) for _ in range(random.randint(0, 24)))
    out.append(line.replace(b'\n', b' ') + b'\n')
sys.stdout.buffer.write(b''.join(out))
