#!/usr/bin/env bash
# Writes blesniff's manual pages into DIR, one per command (blesniff.1, blesniff.read.1, …),
# generated from the command definitions by swift-argument-parser's generate-manual (the tool
# behind `swift package plugin generate-manual`, built here with the release build's settings so
# the release build is not redone).
# Usage: scripts/release/manuals.sh BINARY DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$1 out=$2
mkdir -p "$out"
tool="$(dirname "$(scripts/release/build.sh --product generate-manual)")/generate-manual"
date=$(git log -1 --format=%cs 2>/dev/null || date +%F)
"$tool" "$bin" --multi-page --date "$date" --output-directory "$out"
# `help` is not a command of its own.
rm -f "$out/blesniff.help.1"
# Each page's EXIT STATUS from docs/exit-codes.md (generate-manual writes a generic one).
python3 - "$out" docs/exit-codes.md <<'PY'
import re, sys, os
out, table = sys.argv[1], open(sys.argv[2]).read()
rows = {}
for line in table.splitlines():
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    if len(cells) != 4 or not cells[0].startswith('`'):
        continue
    for name in re.findall(r'`([a-z]+)`', cells[0]):
        rows[name] = cells[1:]
def plain(s):
    return re.sub(r'`([^`]*)`', r'\1', s)
for name, (ok, one, two) in rows.items():
    page = os.path.join(out, 'blesniff.%s.1' % name)
    if not os.path.exists(page):
        continue
    if ok.startswith('as `read`'):
        ok = plain(rows['read'][0])
    two = plain(two.replace('as `read`', plain(rows['read'][2])))
    body = '.Sh "EXIT STATUS"\n.Bl -tag -width Ds\n.It 0\n%s\n' % plain(ok)
    if one != '—':
        body += '.It 1\n%s\n' % plain(one)
    body += '.It 2\n%s\n.El\n' % two
    text = open(page).read()
    text = re.sub(r'\.Sh "EXIT STATUS"\n\.Ex -std[^\n]*\n?', body, text)
    open(page, 'w').write(text)
PY
