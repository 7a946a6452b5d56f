"""Measured test strength: mutation testing (mutmut) of the modules whose mistakes give wrong answers,
each mutant run against the fast tests that cover it; writes the report to tests/MUTATION.md.

Run: .venv/bin/pip install -e '.[dev]'   (once: mutmut, pinned)
     .venv/bin/python scripts/mutation.py [--max-children 2] [--modules tiling/dependences.py ...]
     .venv/bin/python scripts/mutation.py --sample 60 [--seed 0]  (up to 60 unchecked mutants a module)
     .venv/bin/python scripts/mutation.py --survivors          (run the survivors again, after new tests)
     .venv/bin/python scripts/mutation.py --confirm            (each survivor in a fresh pytest process)
     .venv/bin/python scripts/mutation.py --report-only        (the table from the last run)

A whole run costs about 8 s of wall time a mutant on 2 cores (a forked pytest session each), so
--sample estimates a module's kill rate from a seeded random sample of its mutants; the report
gives the sample size beside the rate. In codegen/cpu.py only the driver writer (SCOPE) is
sampled: the rest of that module (argument checks, task orders, the replay) has tests of its
own but is not what the issue's "driver writer" names.

Which modules and tests: [tool.mutmut] in pyproject.toml. Mutants judged equivalent (no test can
tell them from the original) are listed with the reason in EQUIVALENT below; they leave the
denominator of the kill rate. mutmut keeps its results in mutants/ (ignored by git), so a run
can be resumed, and a module re-run alone.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "tests" / "MUTATION.md"

#: mutant name -> why no test can kill it (the same behaviour as the original)
EQUIVALENT: dict[str, str] = {
    "tiling.dependences.x__reversed_order__mutmut_2":
        "drops the '[n] ->' prefix for parametric n; intersecting with the parametric domain adds the "
        "parameter back, so the map is the same",
    **{f"tiling.dependences.{name}": "extract_map picks the map out of the union by its tuples; the "
       "parametric space asked for does not change which map, its points or its parameters "
       "(test_a_model_names_itself_... checks those)"
       for name in ("x__as_map__mutmut_2", "x__last_source__mutmut_11", "x_exact_dependences__mutmut_10",
                    "x_exact_dependences__mutmut_19", "x_exact_dependences__mutmut_28")},
    "schedules.legality.xǁViolationǁ_how_timed__mutmut_12":
        "'b <= a' for 'b < a' inside 'if a != b': the same test",
    **{f"schedules.stages.x__run_enumerator__mutmut_{number}": why for numbers, why in (
        ((3, 6, 7), "the name only prefixes the cached module's file name"),
        ((8,), "at exactly COMPILE_ABOVE units the compiled and the interpreted enumerator list the same units"),
        ((12, 14, 22, 24), "float64 instead of int64 holds every index exactly (< 2**53); the view casts to int32"),
        ((15,), "an eighth column nobody reads"),
        ((25, 26, 27, 28), "stage and task counters start anywhere: the view keeps only their order (np.unique)"),
        ((35,), "the enumerator lists each domain point once, so the count check cannot fail"),
    ) for number in numbers},
    "schedules.stages.x_stage_view__mutmut_61": "out has 7 columns: 4:8 is 4:7",
    "schedules.legality.x__to_tiles__mutmut_2": "drops the '[n] ->' prefix for parametric n; the map's domain is "
                                               "intersected with the parametric one, which adds n back",
    "schedules.tree.x_to_point_tree__mutmut_10": "the same: pulling back a tree over [n] adds n to the map",
    "codegen.proved_ast.xǁMarkStateǁ__init____mutmut_1": "every statement is below a task mark, which sets role "
                                                          "to None before any statement reads it",
    "schedules.families.x_recursive_spec__mutmut_1": "family_spec always passes paired: the default is never used",
    "codegen.cpu.xǁ_Writerǁhooks__mutmut_54": "a region is recorded with its label when its mark is met, and "
                                             "record_workers keeps the first label",
    **{f"codegen.cpu.xǁCompiledScheduleǁ__call____mutmut_{number}": "a float64 status holds -1 and every pivot "
       "index exactly; the call returns int(status[0])" for number in (14, 17)},
    "codegen.proved_ast.xǁMarkStateǁleave__mutmut_3": "in_task is read only through before_task, which is False "
                                                      "once the region is left",
    **{f"codegen.cpu.{name}": why for names, why in (
        (("xǁ_Writerǁhooks__mutmut_33", "xǁ_Writerǁhooks__mutmut_64"), "None for False: both falsy"),
        (("xǁ_Writerǁhooks__mutmut_44", "xǁ_Writerǁhooks__mutmut_48"),
         "prange[0] is already False whenever a mark is left: a region's first loop or its task mark reset it"),
        (("xǁCompiledScheduleǁ__call____mutmut_18",), "a status of 2 elements: the code reads and writes status[0]"),
        (("xǁCompiledScheduleǁ_run_in_order__mutmut_54", "xǁCompiledScheduleǁ_run_in_order__mutmut_55",
          "xǁ_ReplayedDriverǁ__call____mutmut_18", "xǁ_ReplayedDriverǁ__call____mutmut_19"),
         "the driver's module imports put itself: the Python put given beside it does the same"),
        (("x_generate_cpu__mutmut_112",), "recording put's calls too replays the same table writes"),
        (("xǁ_ReplayedDriverǁ__call____mutmut_24",), "never keeping the program records it again at every call: "
                                                      "the same kernel calls, slower"),
        (("x__ordered__mutmut_10",), "with no tasks, one step over no tasks gives no calls either"),
        (("x_generate_cpu__mutmut_1", "x_generate_cpu__mutmut_4"), "build always passes runtime and driver"),
        (("x__has_racing_reads__mutmut_6", "x__has_racing_reads__mutmut_7", "x__has_racing_reads__mutmut_20",
          "x__has_racing_reads__mutmut_24"), "racing_reads reads the units, stages and tasks, not the view's n or tile"),
    ) for name in names},
}


#: module -> the mangled-name fragments of the functions sampled there (all functions if absent)
SCOPE: dict[str, tuple[str, ...]] = {
    "codegen/cpu.py": ("xǁ_Writerǁ", "x_generate_cpu_", "x__has_racing_reads_"),
}


def unchecked(module: str) -> list[str]:
    """Mutant names of `module` (in SCOPE) that have no result yet, from mutmut's meta file."""
    meta = ROOT / "mutants" / (module + ".meta")
    if not meta.exists():
        return []
    names = [name for name, code in json.loads(meta.read_text())["exit_code_by_key"].items() if code is None]
    return [name for name in names if any(part in name for part in SCOPE.get(module, ("",)))]


CONFIRMED = ROOT / "mutants" / "confirmed.json"
#: every test run of a mutant: mutmut forks a process per mutant from one that may have run parallel
#: kernels, and GNU OpenMP aborts after a fork where Numba's workqueue does not; proofs kept on disk
#: are proved again (the checker's behaviour changes, its files do not)
ENVIRONMENT = {**os.environ, "OMP_WAIT_POLICY": "passive", "POLYFW_REGISTER_BLOCK": "default",
               "NUMBA_ENABLE_CUDASIM": "1", "NUMBA_THREADING_LAYER": "workqueue", "POLYFW_PROVE_ALWAYS": "1"}


def confirm(names: list[str], workers: int, tests: list[str] | None = None) -> dict[str, str]:
    """Run each mutant's covering tests in a fresh `python -m pytest` process (no fork server, no
    state carried from another run) and record 'killed' or 'survived' in mutants/confirmed.json.
    mutmut's forked runs reported survivors that a fresh process kills; this is the arbiter."""
    from concurrent.futures import ThreadPoolExecutor

    found = json.loads(CONFIRMED.read_text()) if CONFIRMED.exists() else {}

    def run(name: str) -> tuple[str, str]:
        covering = tests or mutmut("tests-for-mutant", name).split()
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *covering],
                              cwd=ROOT / "mutants", env={**ENVIRONMENT, "MUTANT_UNDER_TEST": name},
                              capture_output=True, text=True)
        return name, "survived" if done.returncode == 0 else "killed"

    with ThreadPoolExecutor(workers) as pool:
        for name, status in pool.map(run, names):
            found[name] = status
            CONFIRMED.write_text(json.dumps(found, indent=1))
            print(f"{status:8} {name}", flush=True)
    return found


def modules() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["mutmut"]["only_mutate"]


def mutmut(*arguments: str, check: bool = True) -> str:
    done = subprocess.run([str(Path(sys.executable).parent / "mutmut"), *arguments], cwd=ROOT, env=ENVIRONMENT,
                          capture_output=True, text=True)
    if check and done.returncode:
        raise SystemExit(f"mutmut {' '.join(arguments)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def module_of(mutant: str) -> str:
    """'schedules.tree.xǁBandǁf__mutmut_3' / 'tiling.dependences.x_f__mutmut_1' -> the module's path."""
    dotted = mutant.split(".xǁ")[0] if ".xǁ" in mutant else mutant.split(".x_")[0]
    return dotted.replace(".", "/") + ".py"


def results() -> dict[str, Counter]:
    """Per module: how many mutants were killed, survived, timed out, ... (mutmut's statuses)."""
    counts: dict[str, Counter] = {module: Counter() for module in modules()}
    confirmed = json.loads(CONFIRMED.read_text()) if CONFIRMED.exists() else {}
    for line in mutmut("results", "--all", "true").splitlines():
        name, _, status = line.strip().rpartition(": ")
        if not name:
            continue
        status = confirmed.get(name, status) if status == "survived" else status
        key = "equivalent" if name in EQUIVALENT and status == "survived" else status
        counts.setdefault(module_of(name), Counter())[key] += 1
    return counts


def survivors() -> list[str]:
    """Surviving mutants not judged equivalent and not killed by a confirmation run."""
    confirmed = json.loads(CONFIRMED.read_text()) if CONFIRMED.exists() else {}
    return [line.strip().rpartition(": ")[0] for line in mutmut("results").splitlines()
            if line.strip().endswith(": survived") and line.strip().rpartition(": ")[0] not in EQUIVALENT
            and confirmed.get(line.strip().rpartition(": ")[0]) != "killed"]


#: mutmut's statuses that say the tests noticed the mutant: a failed test, a time-out, or a test
#: process that crashed (mutmut's 'suspicious' is an exit it has no name for, here SIGABRT from isl
#: when a mutant hands it None; 'segfault' likewise): the suite fails loudly in all of them
NOTICED = ("killed", "timeout", "suspicious", "segfault")


def wilson(noticed: int, decided: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a kill rate measured on a sample of `decided` mutants."""
    if not decided:
        return 0.0, 1.0
    p = noticed / decided
    centre = (p + z * z / (2 * decided)) / (1 + z * z / decided)
    half = z / (1 + z * z / decided) * (p * (1 - p) / decided + z * z / (4 * decided * decided)) ** 0.5
    return max(0.0, centre - half), min(1.0, centre + half)


def table(counts: dict[str, Counter]) -> str:
    lines = ["| module | mutants | killed | timeout | survived | equivalent | crashed | not run "
             "| killed of non-equivalent decided | 95% interval |", "|---|---|---|---|---|---|---|---|---|---|"]
    for module, count in counts.items():
        total = sum(count.values())
        noticed = sum(count[k] for k in NOTICED)
        decided = noticed + count["survived"]
        rate = f"{noticed / decided:.1%} of {decided}" if decided else "-"
        low, high = wilson(noticed, decided)
        crashed = count["suspicious"] + count["segfault"]
        lines.append(f"| {module} | {total} | {count['killed']} | {count['timeout']} | {count['survived']} | "
                     f"{count['equivalent']} | {crashed} | "
                     f"{count['no tests'] + count['not checked'] + count['skipped']} | {rate} | "
                     f"{low:.0%}-{high:.0%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--modules", nargs="+", default=None, help="paths from [tool.mutmut] only_mutate")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--sample", type=int, default=None, help="run up to this many unchecked mutants a module")
    parser.add_argument("--seed", type=int, default=0, help="--sample's random seed")
    parser.add_argument("--survivors", action="store_true", help="run the surviving mutants again")
    parser.add_argument("--confirm", action="store_true", help="run each survivor in a fresh pytest process")
    parser.add_argument("--confirm-tests", nargs="+", default=None, metavar="TEST",
                        help="--confirm with these tests (files or node ids) instead of mutmut's map, e.g. for "
                             "tests added after its last stats run")
    args = parser.parse_args()
    children = ("--max-children", str(args.max_children))
    if args.sample is not None:
        mutmut("run", *children, "generate.only.no_such_mutant", check=False)  # mutants and stats, no runs
        chosen = survivors() if args.survivors else []
        for module in args.modules or modules():
            names = sorted(unchecked(module))
            chosen += random.Random(f"{args.seed}:{module}").sample(names, min(args.sample, len(names)))
        print(f"running {len(chosen)} sampled mutants", flush=True)
        mutmut("run", *children, *chosen, check=False)
    elif args.survivors:
        mutmut("run", *children, *survivors(), check=False)
    elif args.confirm:
        confirm(survivors(), args.max_children, args.confirm_tests)
    elif not args.report_only:
        patterns = [module.removesuffix(".py").replace("/", ".") + ".*" for module in args.modules or []]
        mutmut("run", *children, *patterns, check=False)
    counts = results()
    print(table(counts))
    left = survivors()
    print(f"\n{len(left)} surviving mutants not judged equivalent" + (":" if left else ""))
    for name in left[:200]:
        print(f"  {name}")


if __name__ == "__main__":
    main()
