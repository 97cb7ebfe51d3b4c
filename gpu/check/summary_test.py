"""Tests of summary.py's reading of Go benchmark output. Run by make kits."""

import os
import tempfile
import unittest

import summary


class ParseBenchTest(unittest.TestCase):
    def test_lines(self):
        text = """goos: linux
BenchmarkAggregate/streams=8-16         	       1	12345 ns/op	       812.5 boxd_tok/s	       640.1 ollama_tok/s	         1.269 ratio
--- BENCH: BenchmarkAggregate/streams=8-16
BenchmarkSpeed/window-2         	       1	6326349613 ns/op	      1229 enc_ms	        34.10 mel_ms	        13.01 step_ms
BenchmarkLiveUnderChatLoad/live-alone-2  1  75276415311 ns/op  9902 final_p50_ms  NaN partial_p50_ms
PASS
"""
        got = summary.parse_bench(text)
        self.assertEqual(got["Aggregate/streams=8"]["ratio"], 1.269)
        self.assertEqual(got["Speed/window"]["enc_ms"], 1229)
        self.assertEqual(got["LiveUnderChatLoad/live-alone"]["final_p50_ms"], 9902)
        self.assertTrue(got["LiveUnderChatLoad/live-alone"]["partial_p50_ms"] != got["LiveUnderChatLoad/live-alone"]["partial_p50_ms"])
        self.assertEqual(len(got), 3)

    def test_fmt_and_ratio(self):
        self.assertEqual(summary.fmt(float("nan")), "-")
        self.assertEqual(summary.fmt(1234.5), "1234")
        self.assertIsNone(summary.ratio(1.0, 0))
        self.assertEqual(summary.ratio(3.0, 2.0), 1.5)


class SummarizeTest(unittest.TestCase):
    def table(self, steps):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "steps.tsv"), "w") as f:
                f.write(steps)
            return summary.summarize(d, "NVIDIA H200", "0", "0", 10)[1]

    def test_a_call_without_serve_says_so(self):
        # GPU_CHECK_ONLY="chat-large": serve never ran; the table must not
        # read as a failed health check on a CPU-only box.
        t = self.table("cuda-build\tprebuilt\t0\t\nchat-large\tok\t80\t\n")
        self.assertIn("not run in this call", t)
        self.assertNotIn("CPU only", t)
        self.assertNotIn("/healthz ok", t)

    def test_a_call_that_served_reports_it(self):
        t = self.table("serve\tok\t3\t\n")
        self.assertIn("/healthz ok", t)
        self.assertNotIn("not run in this call", t)


class FlashRowsTest(unittest.TestCase):
    def test_flash_against_off(self):
        bench = """BenchmarkSpeed/window-16  1  1 ns/op  {enc} enc_ms  1 mel_ms  {step} step_ms
BenchmarkSpeed/longform-16  1  1 ns/op  {rtf} rtf
BenchmarkSpeed/batch-16  1  1 ns/op  {wps} windows_per_s
"""
        live = "BenchmarkConcurrentLiveSessions/sessions=4-16  1  1 ns/op  {p50} final_p50_ms  900 final_p95_ms  100 partial_p50_ms  200 partial_p95_ms  1 realtime\n"
        with tempfile.TemporaryDirectory() as d:
            for name, text in [("steps.tsv", ""), ("speech-large-v3-boxd.log", bench.format(enc=21.0, step=9.8, rtf=40, wps=2.7)),
                               ("speech-large-v3-flash.log", bench.format(enc=16.8, step=8.0, rtf=44, wps=3.0)),
                               ("live.log", live.format(p50=834)), ("live-flash.log", live.format(p50=700))]:
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            s, t = summary.summarize(d, "NVIDIA H200", "0", "0", 10)
        rows = {(r["section"], r["measure"]): r for r in s["rows"]}
        enc = rows[("whisper large-v3", "flash attention: encoder ms")]
        self.assertEqual((enc["boxd"], enc["peer"], enc["ratio"]), ("16.80", "21.00", "1.25"))
        self.assertEqual(rows[("whisper large-v3", "flash attention: decoder ms / step")]["ratio"], "1.23")
        self.assertIn(("live x4 flash", "final ms p50 / p95"), rows)
        self.assertTrue(rows[("live x4 flash", "final ms p50 / p95")]["boxd"].startswith("700"))
        self.assertTrue(rows[("live x4", "final ms p50 / p95")]["boxd"].startswith("834"))


class DiarizeRowTest(unittest.TestCase):
    def test_diarize_rtf(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text in [("steps.tsv", "diarize\tok\t40\t\n"),
                               ("diarize.log", "BenchmarkNeural10Min-16  1  1 ns/op  600.0 audio-s  0.0042 rtf\n")]:
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            s, t = summary.summarize(d, "NVIDIA H200", "0", "0", 10)
        row = next(r for r in s["rows"] if r["section"].startswith("diarization"))
        self.assertEqual(row["boxd"], "0.0042")
        self.assertIn("600 s of audio", row["measure"])
        self.assertEqual(row["against"], "NVIDIA H200")


if __name__ == "__main__":
    unittest.main()
