#!/usr/bin/env python3
"""Check the workspace's declared `rust-version` against the locked dependency tree.

Only one Rust toolchain can be installed where CI runs, so the minimum is not proven by
building with it; instead (as cargo-msrv's `verify --no-check-feedback` reasons about
dependencies): every package the build uses declares the oldest compiler it supports, and
the workspace's minimum must be at least the newest of those. Our own code's use of newer
standard-library APIs is caught by clippy's `incompatible_msrv` lint, which reads the same
`rust-version` (run with -D warnings in .ci/run). Exit 1 when the declaration is too low,
naming the packages that need more.
"""
import json
import subprocess
import sys


def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    # Only packages in the resolved graph for this platform (the lock holds others).
    used = {node["id"] for node in meta["resolve"]["nodes"]}
    members = set(meta["workspace_members"])
    declared = {
        p["name"]: p.get("rust_version") for p in meta["packages"] if p["id"] in members
    }
    missing = [name for name, v in declared.items() if not v]
    if missing:
        print(f"no rust-version declared in: {', '.join(sorted(missing))}")
        return 1
    ours = min(version(v) for v in declared.values())
    needs = sorted(
        (
            (version(p["rust_version"]), p["name"], p["version"])
            for p in meta["packages"]
            if p["id"] in used and p["id"] not in members and p.get("rust_version")
        ),
        reverse=True,
    )
    newest = needs[0][0] if needs else (0, 0, 0)
    fmt = lambda v: ".".join(str(x) for x in v)
    top = [f"{name} {ver} ({fmt(rv)})" for rv, name, ver in needs if rv == newest]
    if ours < newest:
        print(f"rust-version {fmt(ours)} is too low: {', '.join(top)} need {fmt(newest)}")
        return 1
    print(f"rust-version {fmt(ours)} covers every locked dependency (newest need: {', '.join(top)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
