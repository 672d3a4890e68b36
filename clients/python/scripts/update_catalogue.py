#!/usr/bin/env python3
"""Regenerates ``src/iq_client/catalogue.json`` from the service's own catalogue.

The file is written as exactly what ``iq-service catalogue`` prints. The service's
test suite (``cargo test --test api python_client``) compares the two as JSON values
and fails when they differ.

Usage (from anywhere in the repository)::

    python clients/python/scripts/update_catalogue.py            # via cargo run
    python clients/python/scripts/update_catalogue.py --binary target/debug/iq-service
    python clients/python/scripts/update_catalogue.py --check    # exit 1 if stale
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE_FILE = HERE.parent / "src" / "iq_client" / "catalogue.json"
REPOSITORY = HERE.parent.parent.parent


def service_catalogue(binary: str | None) -> str:
    """The text ``iq-service catalogue`` prints."""
    if binary:
        # A path is taken from the caller's directory; a bare name from PATH.
        program = str(Path(binary).resolve()) if os.sep in binary else binary
        command = [program, "catalogue"]
    else:
        command = ["cargo", "run", "-q", "--bin", "iq-service", "--", "catalogue"]
    result = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
    json.loads(result.stdout)  # it must be JSON
    return result.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", help="an iq-service binary (default: cargo run)")
    parser.add_argument(
        "--check", action="store_true", help="compare only; exit 1 when the file is stale"
    )
    args = parser.parse_args()
    fresh = service_catalogue(args.binary)
    if args.check:
        current = json.loads(PACKAGE_FILE.read_text(encoding="utf-8"))
        if current != json.loads(fresh):
            print(f"{PACKAGE_FILE} is stale; run {Path(__file__).name} without --check")
            return 1
        print(f"{PACKAGE_FILE} is up to date")
        return 0
    PACKAGE_FILE.write_text(fresh, encoding="utf-8")
    print(f"wrote {PACKAGE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
