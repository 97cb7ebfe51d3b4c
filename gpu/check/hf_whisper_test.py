"""Tests of the parts of hf_whisper.py that need no torch: the special-token
layout (as engine/models/hfwhisper/vocab.go derives it) and the vocabulary
files written for boxd's converter. Run by make kits."""

import os
import struct
import tempfile
import unittest

import hf_whisper as hw


class LayoutTest(unittest.TestCase):
    def test_known_ids(self):
        # openai/whisper-tiny (51865) and -large-v3 (51866) tokenizer ids.
        tiny = hw.layout(51865)
        self.assertEqual((tiny["eot"], tiny["sot"], tiny["en"], tiny["transcribe"], tiny["notimestamps"]),
                         (50257, 50258, 50259, 50359, 50363))
        large = hw.layout(51866)
        self.assertEqual((large["transcribe"], large["notimestamps"], large["n_lang"]), (50360, 50364, 100))
        en = hw.layout(51864)
        self.assertEqual((en["eot"], en["sot"], en["transcribe"]), (50256, 50257, 50358))


def whisper_cpp_file(path, tokens):
    with open(path, "wb") as f:
        f.write(struct.pack("<I", 0x67676D6C))
        f.write(struct.pack("<11i", 51865, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1))
        f.write(struct.pack("<ii", 2, 3))
        f.write(struct.pack("<6f", *([0.0] * 6)))
        f.write(struct.pack("<i", len(tokens)))
        for t in tokens:
            f.write(struct.pack("<I", len(t)))
            f.write(t)


class VocabTest(unittest.TestCase):
    def test_files(self):
        enc = hw.gpt2_byte_alphabet()
        order = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE]
        order += [b for b in range(256) if b not in order]
        tokens = [bytes([b]) for b in order] + [b" the"] * 3 + [b"x%d" % i for i in range(50257 - 259)]
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "v.bin")
            whisper_cpp_file(p, tokens)
            got = hw.read_whisper_cpp_vocab(p)
        self.assertEqual(got, tokens)
        vocab, added = hw.vocab_files(got, 51865)
        self.assertEqual(sorted(vocab.values()), list(range(50257)))
        self.assertEqual(vocab[enc[ord("!")]], 0)
        self.assertEqual(vocab["".join(enc[b] for b in b" the")], 256)  # the first of the duplicates keeps its text
        self.assertEqual(len(vocab), 50257)  # the other two got stand-ins
        self.assertEqual(added["<|endoftext|>"], 50257)
        self.assertEqual(added["<|notimestamps|>"], 50363)
        alphabet = set(enc.values())
        for s in vocab:
            self.assertTrue(set(s) <= alphabet, s)

    def test_too_few_tokens(self):
        with self.assertRaises(ValueError):
            hw.vocab_files([b"a"] * 100, 51865)


class WavTest(unittest.TestCase):
    def test_repeat_to(self):
        self.assertEqual(hw.repeat_to([1, 2, 3], 7), [1, 2, 3, 1, 2, 3, 1])


if __name__ == "__main__":
    unittest.main()
