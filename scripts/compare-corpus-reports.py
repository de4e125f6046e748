#!/usr/bin/env python3
"""Compare two `sframesim corpus --json` reports of the same corpus, run
batched and with --exact: every binary's report must be identical but for
timings. Prints each difference; exit 1 if there is one."""
import json
import sys

TIMING = {"seconds", "verify_seconds", "workers"}


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in TIMING}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare-corpus-reports.py BATCHED.json EXACT.json")
    a, b = (json.load(open(p)) for p in sys.argv[1:])
    ra = {r["binary"]: strip(r) for r in a["results"]}
    rb = {r["binary"]: strip(r) for r in b["results"]}
    diffs = 0
    for name in sorted(set(ra) | set(rb)):
        if ra.get(name) != rb.get(name):
            diffs += 1
            print(f"{name}: reports differ", file=sys.stderr)
            for k in sorted(set(ra.get(name, {})) | set(rb.get(name, {}))):
                x, y = ra.get(name, {}).get(k), rb.get(name, {}).get(k)
                if x != y:
                    print(f"  {k}:\n    batched {json.dumps(x)[:400]}\n    exact   {json.dumps(y)[:400]}", file=sys.stderr)
    print(f"{len(ra)} binaries compared, {diffs} with different reports")
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
