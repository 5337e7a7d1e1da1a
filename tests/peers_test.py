#!/usr/bin/env python3
"""CPU tests of the MoE peers' parts that need no torch (harness/peers/): the timing summary, the
case list and its floors, moe.csv's row, and Liger's weight layouts and step marks, the last two
against a list model of Liger's kernels (their address arithmetic, as fused_moe_kernels.py reads
its strided weights). The GPU run checks the same against the fp32 reference.
usage: python3 tests/peers_test.py"""
import io
import math
import os
import random
import struct
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness", "peers"))
import liger_moe  # noqa: E402
import peer_common  # noqa: E402


class Nested:
    """A 3-D row-major tensor as nested lists, with the two methods liger_weights calls."""

    def __init__(self, data):
        self.data = data

    def shape(self):
        return (len(self.data), len(self.data[0]), len(self.data[0][0]))

    def transpose(self, a, b):
        dims = [0, 1, 2]
        dims[a], dims[b] = dims[b], dims[a]
        s = self.shape()
        out_shape = [s[dims[i]] for i in range(3)]
        return Nested([[[self.data[(i, j, k)[dims.index(0)]][(i, j, k)[dims.index(1)]][(i, j, k)[dims.index(2)]]
                         for k in range(out_shape[2])] for j in range(out_shape[1])] for i in range(out_shape[0])])

    def contiguous(self):
        return self

    def flat(self):
        return [v for plane in self.data for row in plane for v in row]


def rand3(rng, a, b, c):
    return [[[rng.randint(-3, 3) for _ in range(c)] for _ in range(b)] for _ in range(a)]


def silu(v):
    return v / (1.0 + math.exp(-v))


class LigerLayout(unittest.TestCase):
    """liger_weights' output, read as Liger's kernels read it (flat buffer + strides of a contiguous
    [E, 2F, d] and [E, d, F]), gives the layer that our layouts give read directly."""

    def test_layer_from_kernel_addressing(self):
        rng = random.Random(7)
        T, d, F, E, K = 5, 6, 4, 3, 2
        x = [[rng.randint(-3, 3) for _ in range(d)] for _ in range(T)]
        w1 = rand3(rng, E, d, 2 * F)  # ours: [E, d, 2F], gate columns [0, F), up [F, 2F)
        w2 = rand3(rng, E, F, d)      # ours: [E, F, d]
        ids = [rng.sample(range(E), K) for _ in range(T)]
        wts = [[rng.random() for _ in range(K)] for _ in range(T)]
        gate_up, down = liger_moe.liger_weights(Nested(w1), Nested(w2))
        self.assertEqual(gate_up.shape(), (E, 2 * F, d))
        self.assertEqual(down.shape(), (E, d, F))
        gu, dn = gate_up.flat(), down.flat()
        # Contiguous strides, as _fused_up_proj_swiglu_kernel and _fused_down_proj_kernel get them.
        gu_e, gu_n, gu_k = 2 * F * d, d, 1
        dn_e, dn_h, dn_i = d * F, F, 1
        # Routing metadata as Liger's scatter kernel leaves it: sorted by expert, then flat (t, k).
        order = sorted(range(T * K), key=lambda i: (ids[i // K][i % K], i))
        s_rev = [0] * (T * K)
        for pos, i in enumerate(order):
            s_rev[i] = pos
        y = []
        for i in order:  # sorted row: token i // K, expert ids[t][k]
            t, e = i // K, ids[i // K][i % K]
            gate = [sum(x[t][c] * gu[e * gu_e + n * gu_n + c * gu_k] for c in range(d)) for n in range(F)]
            up = [sum(x[t][c] * gu[e * gu_e + (n + F) * gu_n + c * gu_k] for c in range(d)) for n in range(F)]
            h = [silu(g) * u for g, u in zip(gate, up)]
            y.append([sum(h[n] * dn[e * dn_e + c * dn_h + n * dn_i] for n in range(F)) for c in range(d)])
        liger = [[sum(wts[t][k] * y[s_rev[t * K + k]][c] for k in range(K)) for c in range(d)] for t in range(T)]
        # The same layer from our layouts directly.
        ours = [[0.0] * d for _ in range(T)]
        for t in range(T):
            for k in range(K):
                e = ids[t][k]
                u = [sum(x[t][c] * w1[e][c][n] for c in range(d)) for n in range(2 * F)]
                h = [silu(u[n]) * u[F + n] for n in range(F)]
                for c in range(d):
                    ours[t][c] += wts[t][k] * sum(h[n] * w2[e][n][c] for n in range(F))
        for a, b in zip(liger, ours):
            for u, v in zip(a, b):
                self.assertAlmostEqual(u, v, places=9)


class LigerSteps(unittest.TestCase):
    """The events land at Liger's step boundaries, and its module is left as it was."""

    def test_marks_and_restore(self):
        calls = []

        class Kernel:
            def __getitem__(self, grid):
                return lambda *a, **kw: calls.append(("down", grid))

        fake = type("Module", (), {})()
        fake.compute_routing_metadata = lambda *a: calls.append("metadata") or "meta"
        fake._fused_down_proj_kernel = Kernel()
        fake._token_aggregation = lambda *a: calls.append("aggregation") or "out"
        before = (fake.compute_routing_metadata, fake._fused_down_proj_kernel, fake._token_aggregation)
        saved, liger_moe.fused_moe = liger_moe.fused_moe, fake
        try:
            with liger_moe.liger_steps(lambda i: calls.append(i)):
                # the order of LigerFusedMoEFunction.forward
                self.assertEqual(fake.compute_routing_metadata(), "meta")
                fake._fused_down_proj_kernel[(3, 4)]()
                self.assertEqual(fake._token_aggregation(), "out")
        finally:
            liger_moe.fused_moe = saved
        self.assertEqual(calls, ["metadata", 2, 3, ("down", (3, 4)), 4, "aggregation"])
        self.assertEqual((fake.compute_routing_metadata, fake._fused_down_proj_kernel, fake._token_aggregation), before)


class FakeCuda:
    """The CUDA calls of peer_common's timing, logged in order; a clock ticks 1 µs per recorded event."""

    def __init__(self):
        self.log, self.clock = [], 0
        cuda = self

        class Event:
            def __init__(self, enable_timing):
                self.name, self.at = f"ev{len([e for e in cuda.log if e == 'new event'])}", None
                cuda.log.append("new event")

            def record(self):
                cuda.clock += 1
                self.at = cuda.clock
                cuda.log.append(f"record {self.name}")

            def synchronize(self):
                cuda.log.append(f"wait {self.name}")

            def elapsed_time(self, other):
                return (other.at - self.at) * 1e-3  # ms

        class Stream:
            def synchronize(self):
                cuda.log.append("wait stream")

        self.Event, self.current_stream = Event, Stream
        self.cuda = self
        self.int64 = "int64"


class FakeFlush:
    def __init__(self, log):
        self.log = log

    def view(self, dtype):
        return self

    def sum(self):
        self.log.append("flush")


class Timing(unittest.TestCase):
    """harness/timing.c's protocol: warm-ups, one wait, then per rep: flush, event, fn, event, and
    a wait for that event before the next rep."""

    def test_time_us(self):
        torch = FakeCuda()
        times = peer_common.time_us(torch, lambda: torch.log.append("fn"), FakeFlush(torch.log), 2, 2)
        self.assertEqual(times, [1.0, 1.0])  # the two events one tick (1 µs) apart
        rep = ["flush", "record ev0", "fn", "record ev1", "wait ev1"]
        self.assertEqual(torch.log, ["fn", "fn", "wait stream", "new event", "new event"] + rep + rep)

    def test_time_reps_steps(self):
        torch = FakeCuda()

        def layer(ev):
            for e in ev or ():
                e.record()
        per_rep = peer_common.time_reps(torch, layer, FakeFlush(torch.log), 0, 3, 6)
        self.assertEqual(len(per_rep), 3)
        self.assertEqual([len(t) for t in per_rep], [5, 5, 5])
        self.assertEqual(torch.log.count("wait ev5"), 3)
        self.assertEqual(torch.log.index("wait stream"), 0)
        self.assertEqual(torch.log[-2:], ["record ev5", "wait ev5"])


class CaseLoop(unittest.TestCase):
    """each_case: one case's exception ends that case alone; rows are written as they come; the
    exit status is 1 for a failed check or an error, 0 for skips."""

    def torch(self, broken_after=None):
        state = {"synced": 0}

        def synchronize():
            state["synced"] += 1
            if broken_after is not None:
                raise RuntimeError("CUDA error: an illegal memory access was encountered")
        cuda = types.SimpleNamespace(is_available=lambda: broken_after is not None, synchronize=synchronize,
                                     empty_cache=lambda: None)
        return types.SimpleNamespace(cuda=cuda, OutOfMemoryError=type("OutOfMemoryError", (RuntimeError,), {}))

    def run_loop(self, torch, outcomes):
        written = []

        def run(case):
            what = outcomes[case]
            if isinstance(what, Exception):
                raise what
            return what

        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            status = peer_common.each_case(torch, "peer", [(f"case {i}", i) for i in range(len(outcomes))], run,
                                           written.append)
            lines = sys.stderr.getvalue().splitlines()
        finally:
            sys.stderr = stderr
        return status, written, lines

    def test_skips_are_not_failures(self):
        torch = self.torch()
        ok = {"check": "pass"}
        status, written, lines = self.run_loop(torch, [ok, torch.OutOfMemoryError("CUDA out of memory. Tried"), None,
                                                       NotImplementedError("no backward"),
                                                       RuntimeError("derivative for aten::x is not implemented"), ok])
        self.assertEqual((status, len(written)), (0, 2))
        self.assertEqual(lines, ["peer: skip case 1: out of memory: CUDA out of memory. Tried",
                                 "peer: skip case 3: no backward",
                                 "peer: skip case 4: derivative for aten::x is not implemented"])

    def test_check_failure_and_error(self):
        torch = self.torch()
        status, written, lines = self.run_loop(torch, [{"check": "fail"}, {"check": "pass"}])
        self.assertEqual((status, len(written)), (1, 2))
        status, written, lines = self.run_loop(torch, [RuntimeError("Triton Error [CUDA]: invalid argument\nmore"),
                                                       {"check": "pass"}])
        self.assertEqual((status, len(written)), (1, 1))
        self.assertEqual(lines, ["peer: ERROR case 0: Triton Error [CUDA]: invalid argument"])

    def test_broken_context_stops(self):
        torch = self.torch(broken_after=0)
        status, written, lines = self.run_loop(torch, [RuntimeError("CUDA error: an illegal memory access"),
                                                       {"check": "pass"}])
        self.assertEqual((status, written), (1, []))
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[1].startswith("peer: the GPU context no longer works"))

    def test_cuda_error_is_never_a_skip(self):
        kind, _ = peer_common.case_outcome(self.torch(), RuntimeError("CUDA error: operation not supported"))
        self.assertEqual(kind, "error")


# moe.csv's columns before the pass column (`ggemm moe --backward` appends it; the steps' p10/p90 come after it).
MOE_COLUMNS = ("impl,path,model,tokens,d,f,experts,topk,renorm,routed_rows,active_experts,time_us_median,"
               "time_us_p10,time_us_p90,route_us,permute_us,gemm1_us,gemm2_us,combine_us,floor_us,"
               "roofline_pct,useful_tflops,check,max_abs_err,rel_err,seed")


def write_files(tmp, moe_text, cases_text):
    """moe.csv and a case list with these contents in tmp; their paths."""
    paths = os.path.join(tmp, "moe.csv"), os.path.join(tmp, "cases.csv")
    for path, text in zip(paths, (moe_text, cases_text)):
        with open(path, "w") as f:
            f.write(text)
    return paths


class Common(unittest.TestCase):
    def test_median_p10_p90(self):
        # harness/timing.c: the median of an even count averages the middle two; p10/p90 round.
        self.assertEqual(peer_common.median_p10_p90([5, 1, 3]), (3, 1, 5))
        times = list(range(30, 0, -1))  # 1..30
        self.assertEqual(peer_common.median_p10_p90(times), (15.5, 4, 27))

    def test_fnv1a64(self):
        # FNV-1a's published 64-bit values for "" and "a"; ggemm moe's routing digest is this hash.
        self.assertEqual(peer_common.fnv1a64(b""), "cbf29ce484222325")
        self.assertEqual(peer_common.fnv1a64(b"a"), "af63dc4c8601ec8c")
        # Three int32s, as tests/suite_moe.c's routing_digest_is_fnv1a hashes them in C.
        self.assertEqual(peer_common.fnv1a64(struct.pack("<3i", 1, 2, -1)), "511984b0dc92e782")

    def test_input_scale(self):
        # 2^(2 - round(log2 sqrt K)), half up, as harness/moe.c's input_scale.
        for k, s in ((2048, 2.0 ** -4), (768, 2.0 ** -3), (4096, 2.0 ** -4), (14336, 2.0 ** -5), (1, 4.0)):
            self.assertEqual(peer_common.input_scale(k), s)

    def test_cases_floors_and_row(self):
        columns = MOE_COLUMNS
        with tempfile.TemporaryDirectory() as tmp:
            moe, cases = write_files(tmp, "# device=test\n" + columns + "\n"
                                     "k4_moe,fused,qwen3,4096" + ",0" * 15 + ",400.00" + ",0" * 6 + "\n",
                                     "model,tokens,d,f,experts,topk,renorm,seed,floor_us,gemm_flops\n"
                                     "qwen3,4096,2048,768,128,8,1,1,410.5,1.2e12\n"
                                     "olmoe,256,2048,1024,64,8,0,1,90.25,1e11\n")
            got = peer_common.read_cases(cases)
            peer_common.same_run_floors(moe, got)
            self.assertEqual([c["floor_us"] for c in got], [400.0, 90.25])  # the same run's k4_moe floor first
            self.assertEqual(peer_common.read_header(moe), columns.split(","))
            steps = {s: (m, m - 0.5, m + 0.5) for s, m in zip(peer_common.MOE_STEPS, (1, 2, 3, 4, 5))}
            v = peer_common.moe_values(got[0], "liger_moe", "fused", 128, (800.0, 790.0, 810.0), steps,
                                       (True, 0.01, 0.001))
            self.assertEqual(v["roofline_pct"], "50.0")  # floor / median, as ggemm moe
            self.assertEqual(v["useful_tflops"], "1500.00")
            self.assertEqual(v["routed_rows"], 4096 * 8)
            row = peer_common.csv_row(columns.split(","), v).split(",")
            self.assertEqual(len(row), len(columns.split(",")))
            self.assertEqual(row[:3] + row[14:19], ["liger_moe", "fused", "qwen3", "1.00", "2.00", "3.00", "4.00", "5.00"])
            # Each step's spread, in the columns `ggemm moe` appends after the older ones.
            spread = [c + q for c in peer_common.MOE_STEPS for q in ("_us_p10", "_us_p90")]
            wide = columns.split(",") + spread
            row = dict(zip(wide, peer_common.csv_row(wide, v).split(",")))
            self.assertEqual([row[c] for c in spread[:4]], ["0.50", "1.50", "1.50", "2.50"])

    def test_backward_rows_and_cases(self):
        # `ggemm moe --backward`: a pass column last; the backward's cases and floors apart from the
        # forward's, and a backward row without per-step times.
        columns = MOE_COLUMNS + ",pass"
        with tempfile.TemporaryDirectory() as tmp:
            moe, cases = write_files(tmp, columns + "\n"
                                     "k4_moe,unfused,qwen3,4096" + ",0" * 15 + ",400.00" + ",0" * 6 + ",forward\n"
                                     "k4_moe,unfused,qwen3,4096" + ",0" * 15 + ",900.00" + ",0" * 6 + ",backward\n",
                                     "model,tokens,d,f,experts,topk,renorm,seed,floor_us,gemm_flops,pass\n"
                                     "qwen3,4096,2048,768,128,8,1,1,410.5,1.2e12,forward\n"
                                     "qwen3,4096,2048,768,128,8,1,1,950.5,2.4e12,backward\n")
            fwd, bwd = peer_common.read_cases(cases), peer_common.read_cases(cases, "backward")
            self.assertEqual([c["gemm_flops"] for c in fwd + bwd], [1.2e12, 2.4e12])
            peer_common.same_run_floors(moe, fwd)
            peer_common.same_run_floors(moe, bwd, "backward")
            self.assertEqual([c["floor_us"] for c in fwd + bwd], [400.0, 900.0])
            v = peer_common.moe_values(bwd[0], "torch_moe", "eager", 128, (1800.0, 1700.0, 1900.0), None,
                                       (True, 0.01, 0.001), "backward")
            row = peer_common.csv_row(columns.split(","), v).split(",")
            self.assertEqual(row[-1], "backward")
            self.assertEqual(row[14:19], [""] * 5)
            spread = [c + q for c in peer_common.MOE_STEPS for q in ("_us_p10", "_us_p90")]
            self.assertEqual(peer_common.csv_row(spread, v), "," * (len(spread) - 1))  # no per-step times
            self.assertEqual(v["roofline_pct"], "50.0")


if __name__ == "__main__":
    unittest.main()
