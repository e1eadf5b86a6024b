#!/usr/bin/env python3
"""Fill the cover letter git format-patch wrote (make series).

usage: series-cover.py TEMPLATE COVER TOP BUILD

TEMPLATE (patches/cover-letter) holds the subject on its first line, a
blank line, then the text; @BENCH@ in it becomes the latest RX bench
table: build/bench/results.md's when make bench has run in this tree,
else the one README.md records, with the day it was measured. The
cover letter's Date is the last patch's, so that a run on the same tree
writes the same mails.
"""
import glob
import os
import re
import sys


def first_rx_table(text):
    """The first markdown table whose header starts with "| MTU |"."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('| MTU |'):
            table = []
            for row in lines[i:]:
                if not row.startswith('|'):
                    break
                table.append(row)
            return table
    return None


def readme_bench(top):
    """README's latest results: the day they were measured and the table."""
    with open(os.path.join(top, 'README.md'), encoding='utf-8') as f:
        text = f.read()
    start = text.find('### Latest results')
    if start < 0:
        sys.exit('series-cover: README.md has no "### Latest results"')
    section = text[start:]
    day = re.search(r'\d{4}-\d{2}-\d{2}', section)
    table = first_rx_table(section)
    if not day or not table:
        sys.exit('series-cover: README.md\'s latest results have no date or no RX table')
    return 'make bench, ' + day.group(0) + ':', table


def bench(top, build):
    results = os.path.join(build, 'bench', 'results.md')
    if os.path.exists(results):
        with open(results, encoding='utf-8') as f:
            table = first_rx_table(f.read())
        if table:
            return 'make bench, latest run:', table
    return readme_bench(top)


def main():
    template, cover, top, build = sys.argv[1:5]
    with open(template, encoding='utf-8') as f:
        subject, _, body = f.read().partition('\n\n')
    intro, table = bench(top, build)
    body = body.replace('@BENCH@', intro + '\n\n' + '\n'.join(table))
    with open(cover, encoding='utf-8') as f:
        mail = f.read()
    if '*** SUBJECT HERE ***' not in mail or '*** BLURB HERE ***' not in mail:
        sys.exit('series-cover: ' + cover + ' is not git format-patch\'s template')
    mail = mail.replace('*** SUBJECT HERE ***', subject.strip())
    mail = mail.replace('*** BLURB HERE ***', body.rstrip())
    last = sorted(glob.glob(os.path.join(os.path.dirname(cover), '[0-9]*.patch')))[-1]
    with open(last, encoding='utf-8') as f:
        date = re.search(r'^Date: .*$', f.read(), re.M).group(0)
    mail = re.sub(r'^Date: .*$', date, mail, count=1, flags=re.M)
    with open(cover, 'w', encoding='utf-8') as f:
        f.write(mail)


if __name__ == '__main__':
    main()
