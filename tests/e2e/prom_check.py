#!/usr/bin/env python3
"""Checks on a Prometheus text exposition (gpuraidd's GET /metrics).

  prom_check.py lint < metrics          the format: HELP/TYPE before samples, names
                                        and units by convention, histograms whole
  prom_check.py get 'NAME{k="v",...}' < metrics
                                        prints the value of the one series whose
                                        labels include the given ones
  prom_check.py dashboard DASH.json < metrics
                                        every metric (and label matcher) the
                                        dashboard's PromQL uses exists
"""
import json
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse(text):
    """-> (families {name: type}, samples [(name, {labels}, value)], problems)"""
    types, helps, samples, problems = {}, set(), [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith('# HELP '):
            helps.add(line.split()[2])
            continue
        if line.startswith('# TYPE '):
            _, _, name, typ = line.split(maxsplit=3)
            if name in types:
                problems.append(f'line {n}: TYPE of {name} given twice')
            types[name] = typ
            continue
        if line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append(f'line {n}: not a sample: {line!r}')
            continue
        labels, rest = {}, m.group(3) or ''
        while rest:
            lm = LABEL.match(rest)
            if not lm:
                problems.append(f'line {n}: bad labels: {m.group(3)!r}')
                break
            labels[lm.group(1)] = lm.group(2)
            rest = rest[lm.end():]
        samples.append((m.group(1), labels, float(m.group(4))))
    for name in types:
        if name not in helps:
            problems.append(f'{name}: no HELP')
    return types, samples, problems


def family_of(name, types):
    for suffix in ('_bucket', '_sum', '_count'):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) == 'histogram':
            return name[: -len(suffix)]
    return name


def lint(text):
    types, samples, problems = parse(text)
    seen, current, done = set(), None, set()
    for name, labels, value in samples:
        fam = family_of(name, types)
        if fam not in types:
            problems.append(f'{name}: sample without a TYPE')
        if fam != current:
            if fam in done:
                problems.append(f'{fam}: samples not together')
            if current:
                done.add(current)
            current = fam
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            problems.append(f'{name}{labels}: series given twice')
        seen.add(key)
    for fam, typ in types.items():
        if not re.fullmatch(r'gpuraid_[a-z0-9_]+', fam):
            problems.append(f'{fam}: not a gpuraid_ snake_case name')
        if typ == 'counter' and not fam.endswith('_total'):
            problems.append(f'{fam}: a counter whose name does not end in _total')
        if typ != 'counter' and fam.endswith('_total'):
            problems.append(f'{fam}: _total on a {typ}')
        if typ == 'histogram':
            series = {}
            for name, labels, value in samples:
                if family_of(name, types) != fam:
                    continue
                base = tuple(sorted((k, v) for k, v in labels.items() if k != 'le'))
                series.setdefault(base, {'buckets': [], 'sum': None, 'count': None})
                s = series[base]
                if name.endswith('_bucket'):
                    s['buckets'].append((float(labels['le']), value))
                elif name.endswith('_sum'):
                    s['sum'] = value
                else:
                    s['count'] = value
            for base, s in series.items():
                b = s['buckets']
                if not b or b[-1][0] != float('inf'):
                    problems.append(f'{fam}{dict(base)}: no +Inf bucket')
                    continue
                if any(b[i][0] >= b[i + 1][0] or b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
                    problems.append(f'{fam}{dict(base)}: buckets not increasing')
                if s['count'] != b[-1][1] or s['sum'] is None:
                    problems.append(f'{fam}{dict(base)}: _count differs from the +Inf bucket or no _sum')
    return problems


def get(text, selector):
    m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?', selector)
    want, rest = {}, (m.group(3) or '')
    while rest:
        lm = LABEL.match(rest)
        want[lm.group(1)] = lm.group(2)
        rest = rest[lm.end():]
    _, samples, _ = parse(text)
    hits = [v for n, l, v in samples if n == m.group(1) and all(l.get(k) == v for k, v in want.items())]
    if len(hits) != 1:
        sys.exit(f'{selector}: {len(hits)} series match (want 1)')
    v = hits[0]
    print(int(v) if v == int(v) else v)


def exprs(node):
    """Every PromQL expression of a dashboard: panel targets and variable queries."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == 'expr' and isinstance(v, str):
                yield v
            elif k == 'query' and isinstance(v, str) and 'gpuraid_' in v:
                yield v
            elif k == 'query' and isinstance(v, dict) and isinstance(v.get('query'), str):
                yield v['query']
            else:
                yield from exprs(v)
    elif isinstance(node, list):
        for x in node:
            yield from exprs(x)


def dashboard(text, path):
    types, samples, problems = parse(text)
    labels_of = {}
    for name, labels, _ in samples:
        labels_of.setdefault(name, set()).update(labels)
    dash = json.load(open(path))
    found = list(exprs(dash))
    if not found:
        return [f'{path}: no PromQL expressions found']
    used = set()
    for e in found:
        for m in re.finditer(r'\b(gpuraid_[a-zA-Z0-9_:]+)\s*(\{([^}]*)\})?', e):
            name = m.group(1)
            used.add(name)
            if name not in labels_of:
                problems.append(f'{name} (in {e!r}) is not in /metrics')
                continue
            for lm in re.finditer(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)', m.group(3) or ''):
                if lm.group(1) not in labels_of[name]:
                    problems.append(f'{name} has no label {lm.group(1)} (in {e!r})')
        for m in re.finditer(r'label_values\(\s*(gpuraid_[a-zA-Z0-9_:]+)\s*,\s*([a-zA-Z_]\w*)\s*\)', e):
            if m.group(2) not in labels_of.get(m.group(1), ()):
                problems.append(f'{m.group(1)} has no label {m.group(2)} (in {e!r})')
    print(f'{len(found)} expressions, {len(used)} metrics checked')
    return problems


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    text = sys.stdin.read()
    if sys.argv[1] == 'lint':
        problems = lint(text)
    elif sys.argv[1] == 'get':
        return get(text, sys.argv[2])
    elif sys.argv[1] == 'dashboard':
        problems = dashboard(text, sys.argv[2])
    else:
        sys.exit(__doc__)
    for p in problems:
        print('PROBLEM:', p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
