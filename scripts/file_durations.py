"""Per-file seconds from a pytest `--durations=0` log, as the FILE_SECONDS table of
marin_assets_tests/file_durations.py (files of at least --min seconds, longest first).

    .venv/bin/python -m pytest --durations=0 > run.log; .venv/bin/python scripts/file_durations.py run.log
"""

import argparse
import re
from collections import Counter

LINE = re.compile(r"^\s*([0-9.]+)s (?:setup|call|teardown)\s+(\S+?\.py)::")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--min", type=float, default=15.0, help="leave out files shorter than this (seconds)")
    args = parser.parse_args()
    seconds: Counter[str] = Counter()
    with open(args.log, errors="replace") as log:
        for line in log:
            if match := LINE.match(line):
                seconds[match[2]] += float(match[1])
    print("FILE_SECONDS = {")
    for path, total in seconds.most_common():
        if total >= args.min:
            print(f'    "{path}": {round(total)},')
    print("}")


if __name__ == "__main__":
    main()
