#!/usr/bin/env python3
"""CPU tests of plots/tables.py's reading of tests/sanitize.sh logs (sanitize_log): a run whose untracked cuBLAS
launches a clean rerun without the check cleared, one whose rerun was not clean (its summary shown, not the first
run's alone; a racecheck rerun's races counted against its own summary, or not at all where
it has none), races printed with no location that a clean rerun cleared, and several logs in one table, each named
before its runs; and the k5 targets' dgrad row, which names the twin the entry point ran and its time against the
fastest twin where the run has the twins.
usage: python3 tests/tables_test.py"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plots"))
import tables  # noqa: E402

CLEARED = """== moe E=1000 top40 d=64 F=192 T=100 unfused synccheck
custom   T=100    unfused     2521.4 us  check pass +CPU fp64 (max abs err 0.009)
========= ERROR SUMMARY: 33 errors
(33 launch(es) of cuBLAS's nvjet kernels, the check's reference, not tracked by the tool; without the check (--no-check) it finds none: not counted)
"""
NOT_CLEARED = """== moe E=1000 top40 d=64 F=192 T=100 fused cp_async synccheck
custom   T=100    fused     3873.8 us  check pass +CPU fp64 (max abs err 0.00957)
========= ERROR SUMMARY: 34 errors
(rerun without the check, --no-check: its summary and report follow)
========= ERROR SUMMARY: 2 errors
========= Barrier error detected. Divergent thread(s) in warp
"""
UNPLACED = """== moe E=12 top3 d=7168 F=128 T=333 fused cp_async racecheck
custom   T=333    fused     900.0 us  check pass (max abs err 0.05)
========= RACECHECK SUMMARY: 14 hazards displayed (14 errors, 0 warnings)
(2 race(s) printed with no location; without the check (--no-check) racecheck finds none: not counted)
(the other 12 race(s) are inside cuBLAS's nvjet kernels, the check's reference: not counted)
"""
RACE_NOT_CLEARED = """== moe E=12 top3 d=7168 F=128 T=333 fused cp_async racecheck
custom   T=333    fused     900.0 us  check pass (max abs err 0.05)
========= RACECHECK SUMMARY: 14 hazards displayed (14 errors, 0 warnings)
(rerun without the check, --no-check: its summary and report follow)
========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at k4::scatter+0x1a0 in k4_moe_steps.cu:120
=========     and Read access at k4::scatter+0x1c0 in k4_moe_steps.cu:121 [4 hazards]
========= 
========= Error: Race reported between Read access at k4::scatter+0x1c0 in k4_moe_steps.cu:121
=========     and Write access at k4::scatter+0x1a0 in k4_moe_steps.cu:120 [4 hazards]
========= 
"""
RACE_RERUN_CUT = """== moe E=12 top3 d=7168 F=128 T=333 fused cp_async racecheck
custom   T=333    fused     900.0 us  check pass (max abs err 0.05)
========= RACECHECK SUMMARY: 14 hazards displayed (14 errors, 0 warnings)
(rerun without the check, --no-check: its summary and report follow)
"""
CUT = """== moe E=300 top8 d=128 F=128 T=200 unfused racecheck
"""


def table(*texts):
    with tempfile.TemporaryDirectory() as d:
        logs = []
        for i, text in enumerate(texts):
            logs.append(os.path.join(d, f"log{i}.log"))
            with open(logs[-1], "w") as f:
                f.write(text)
        return tables.sanitize_log("a caption", logs).splitlines()


class SanitizeLog(unittest.TestCase):
    def test_cleared(self):
        row = table(CLEARED)[-1].split(" | ")
        self.assertEqual(row[2], "33 errors")
        self.assertEqual(row[6], "33 (a rerun without the check finds none)")
        self.assertEqual(row[7], "pass |")

    def test_rerun_not_clean(self):
        row = table(NOT_CLEARED)[-1].split(" | ")
        self.assertEqual(row[2], "34 errors; rerun without the check: 2 errors")
        self.assertEqual(row[6], "– (the rerun's report follows)")

    def test_race_rerun_not_clean(self):  # the races counted are the rerun's, against its summary
        row = table(RACE_NOT_CLEARED)[-1].split(" | ")
        self.assertEqual(row[2], "14 hazards displayed (14 errors, 0 warnings); rerun without the check: "
                                 "2 hazards displayed (2 errors, 0 warnings)")
        self.assertEqual(row[3:6], ["0", "0", "2"])

    def test_race_rerun_cut(self):  # no rerun summary: nothing is counted against the first run's
        row = table(RACE_RERUN_CUT)[-1].split(" | ")
        self.assertEqual(row[2], "14 hazards displayed (14 errors, 0 warnings); rerun without the check: no summary")
        self.assertEqual(row[3:6], ["0", "0", "0"])

    def test_unplaced_cleared(self):
        row = table(UNPLACED)[-1].split(" | ")
        self.assertEqual(row[2:6], ["14 hazards displayed (14 errors, 0 warnings)", "12", "2", "0"])

    def test_several_logs_named(self):
        lines = table(CLEARED, CUT)
        names = [line for line in lines if line.startswith("| *from")]
        self.assertEqual(names, ["| *from `log0.log`:* | | | | | | | |", "| *from `log1.log`:* | | | | | | | |"])
        self.assertIn("cut by the limit before its summary", lines[-1])
        self.assertEqual(len(table(CLEARED)), 5)  # one log: no row naming it


class MoeSteps(unittest.TestCase):
    ROW = {"model": "m", "tokens": "256", "impl": "k4_moe", "path": "fused", "check": "pass",
           "time_us_median": "16.0", **{f"{c}_us": str(float(i + 1)) for i, c in
                                       enumerate(("route", "permute", "gemm1", "gemm2", "combine"))}}

    def test_spread_where_the_csv_has_it(self):  # moe.csv since e8492ec: <step>_us_p10 and _p90
        row = dict(self.ROW, **{f"{c}_us_p{q}": v for c in ("route", "permute", "gemm1", "gemm2", "combine")
                                for q, v in (("10", "0.5"), ("90", "9"))})
        lines = tables.moe_steps({}, [row], "moe.csv").splitlines()
        self.assertIn("µs [p10–p90]", lines[2])
        self.assertEqual(lines[-1].split(" | ")[3], "1.0 [0.5–9.0]")
        self.assertEqual(lines[-1].split(" | ")[8:], ["15.0", "16.0 |"])  # sum of medians, whole layer

    def test_medians_alone_in_older_files(self):
        lines = tables.moe_steps({}, [self.ROW], "moe.csv").splitlines()
        self.assertNotIn("[p10–p90]", lines[2])
        self.assertEqual(lines[-1].split(" | ")[3:8], ["1.0", "2.0", "3.0", "4.0", "5.0"])


HEAD = "kernel,config,tokens,experts,k,n,skew,set,check,time_us_median,roofline_pct\n"


def dgrad_row(kernel, config, us):
    return f"{kernel},{config},2048,64,1024,2688,1.2,backward_stages,pass,{us},50\n"


class K5DgradRow(unittest.TestCase):
    def targets(self, backward_rows):
        with tempfile.TemporaryDirectory() as d:
            bwd, fwd = os.path.join(d, "backward.csv"), os.path.join(d, "sweep.csv")
            with open(bwd, "w") as f:
                f.write("# device=GPU\n" + HEAD + "".join(backward_rows))
            with open(fwd, "w") as f:
                f.write("# device=GPU\n# commit=abc\n" + HEAD
                        + "k3_wgmma,k3_wgmma_coop_m64_n192: why,2048,64,1024,2688,1.2,stages,pass,100,50\n")
            return tables.k5_targets(bwd, [fwd], layer=os.path.join(d, "none.csv")) or ""

    def test_twins_named(self):  # the entry's config names its twin first; the fastest twin beside it
        text = self.targets([dgrad_row("k5_dgrad_coop_m128_n256", "x", 120),
                             dgrad_row("k5_dgrad_pingpong_m64_n128", "x", 95),
                             dgrad_row("k5_dgrad", "k5_dgrad_pingpong_m64_n128: k3_wgmma_pingpong_m64_n128 on", 102)])
        self.assertIn("| 1.020 (ran pingpong_m64_n128; time / the fastest twin's (pingpong_m64_n128): 1.074) | ✓ |",
                      text)

    def test_failed_twin_listed(self):  # a twin that fails its check is a row of its own, not dropped
        text = self.targets([dgrad_row("k5_dgrad_coop_m128_n256", "x", 120).replace(",pass,", ",fail,"),
                             dgrad_row("k5_dgrad", "k5_dgrad_coop_m128_n256: k3_wgmma_coop_m128_n256 on", 102)])
        self.assertIn("| `k5_dgrad_coop_m128_n256` passes its check | stages: 2048 rows, s=1.2 | fail | ✗ |", text)

    def test_without_twins(self):  # older runs: the entry's row alone, as before
        text = self.targets([dgrad_row("k5_dgrad", "dA = dC B_e^T: k3 step 2 with B read K-major", 110)])
        self.assertIn("| 1.100 | ✗ |", text)
        self.assertNotIn("ran ", text)


if __name__ == "__main__":
    unittest.main()
