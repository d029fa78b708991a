#!/usr/bin/env python3
"""Lists every public type in Sources/ without a `///` line saying what it is for; exits 1 if any.
   scripts/check-public-docs.py [ROOT]     (default: Sources)"""
import pathlib, re, sys

DECL = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public|open)\s+(?:(?:final|indirect|nonisolated)\s+)*'
                  r'(class|struct|enum|protocol|actor|typealias)\s+(\w+)')

def undocumented(path):
    lines = path.read_text(encoding='utf-8').splitlines()
    for index, line in enumerate(lines):
        match = DECL.match(line)
        if not match:
            continue
        above = index - 1
        # Attributes on their own lines (`@MainActor`, `@available(...)`) sit between doc and type.
        while above >= 0 and lines[above].strip().startswith('@'):
            above -= 1
        if above < 0 or not lines[above].strip().startswith('///'):
            yield index + 1, f'{match.group(1)} {match.group(2)}'

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else 'Sources')
missing = [(path, line, what) for path in sorted(root.rglob('*.swift')) for line, what in undocumented(path)]
for path, line, what in missing:
    print(f'{path}:{line}: public {what} has no /// comment')
sys.exit(1 if missing else 0)
