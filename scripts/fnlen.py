#!/usr/bin/env python3
"""Lists functions longer than a screen (70 lines) in the Rust sources under a directory, `async`,
`const` and `unsafe` ones included.

A function runs from its `fn` line to the closing brace at its own indent. Declarations without a
body (trait methods ending in `;`) and one-line bodies (`{}` or `{ ... }` on the signature's last
line) are not functions to measure. Test modules (`#[cfg(test)]` followed by `mod`) are skipped.

A file named `tests.rs` (a module's unit tests, kept beside it) is skipped too. Exits 1 when it
lists any function, so `scripts/test` runs it as a gate over every crate.

Usage: scripts/fnlen.py DIRECTORY... [limit]     e.g. scripts/fnlen.py crates/*/src
"""
import glob
import re
import sys

ARGS = sys.argv[1:]
LIMIT = int(ARGS.pop()) if ARGS and ARGS[-1].isdigit() else 70
# Qualifiers in Rust's order: visibility, `const`, `async`, `unsafe`, `extern "ABI"`.
SIGNATURE = re.compile(r'^(?P<indent>\s*)(pub(\([a-z:\s]+\))? )?(const )?(async )?(unsafe )?(extern "\w+" )?fn (?P<name>\w+)')


def body_start(lines, start):
    """Index of the signature's last line and whether a body follows it on later lines."""
    for index in range(start, len(lines)):
        code = lines[index].split('//')[0].rstrip()
        if code.endswith(';'):
            return index, False
        if code.endswith('{'):
            return index, True
        if code.endswith('}'):
            return index, False  # `{}` or a body on one line
    return len(lines), False


def main():
    found = 0
    paths = sorted(path for directory in ARGS for path in glob.glob(directory + '/**/*.rs', recursive=True))
    for path in paths:
        if path.endswith('/tests.rs'):
            continue  # a module's unit tests, kept beside it
        lines = open(path).read().split('\n')
        test_start = next((i for i, line in enumerate(lines)
                           if line.strip() == '#[cfg(test)]' and i + 1 < len(lines)
                           and lines[i + 1].lstrip().startswith(('mod ', 'pub(crate) mod '))), len(lines))
        for i, line in enumerate(lines[:test_start]):
            match = SIGNATURE.match(line)
            if not match:
                continue
            last, has_body = body_start(lines, i)
            if not has_body:
                continue
            closing = ' ' * len(match.group('indent')) + '}'
            end = next((j for j in range(last + 1, len(lines)) if lines[j] == closing), None)
            if end is not None and end - i + 1 > LIMIT:
                print(f"{end - i + 1:4} {path}:{i + 1} {match.group('name')}")
                found += 1
    return 1 if found else 0


sys.exit(main())
