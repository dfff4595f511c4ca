"""Segments of the 1-waiter handoff from perf script's lines (handoff.sh).

  handoff.py split LABEL PID...   LABEL.txt into LABEL.raw.txt (the first two worker processes)
                                  and LABEL.sub.txt (the next two); the servers' lines go to both
  handoff.py segments FILE        the median of each segment, from the holder's leave_critical
                                  to the waiter's enter_critical

The server's writes of one event loop turn are told apart by size: the waiter's message is the
longest (a release's reply is ":1" or "+PONG" and ":1").
"""
import re
import statistics
import sys

NAMES = {0: 'read', 1: 'write', 20: 'writev', 44: 'sendto', 45: 'recvfrom', 232: 'epoll'}
LINE = re.compile(r'\s*(\S+) (\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)')


def split(label, pids):
    raw, sub = set(pids[0:2]), set(pids[2:4])
    with open(label + '.txt') as src, open(label + '.raw.txt', 'w') as r, \
            open(label + '.sub.txt', 'w') as s:
        for line in src:
            m = LINE.match(line)
            if not m:
                continue
            bench = m.group(1) == 'locksmith-bench'
            if not bench or m.group(2) in raw:
                r.write(line)
            if not bench or m.group(2) in sub:
                s.write(line)


def events(path):
    """(µs, who, kind, fd or length, result): who is a thread id, or 'S' for a server's main
    thread; kind 'L'/'E' (the probes), 'wake', 'run', 'NAME>' (entry) or '<NAME' (exit)."""
    ev = []
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, tid, _, t, e, rest = m.groups()
        t = float(t) * 1e6
        who = 'S' if comm == 'redis-server' and pid == tid else tid
        if e == 'probe_locksmith:leave':
            ev.append((t, tid, 'L', 0, 0))
        elif e == 'probe_locksmith:enter':
            ev.append((t, tid, 'E', 0, 0))
        elif e == 'sched:sched_wakeup':
            ev.append((t, re.search(r' pid=(\d+)', rest).group(1), 'wake', 0, 0))
        elif e == 'sched:sched_switch':
            ev.append((t, re.search(r'next_pid=(\d+)', rest).group(1), 'run', 0, 0))
        elif e.startswith('raw_syscalls') and comm in ('locksmith-bench', 'redis-server'):
            nr = int(re.search(r'NR (\d+)', rest).group(1))
            if nr not in NAMES:
                continue
            if e.endswith('enter'):
                args = rest.split('(')[1].split(', ')
                length = int(args[2], 16) if nr in (0, 1, 44, 45) else -1
                ev.append((t, who, NAMES[nr] + '>', int(args[0], 16), length))
            else:
                ev.append((t, who, '<' + NAMES[nr], 0,
                           int(re.search(r'= (-?\d+)', rest).group(1))))
    ev.sort(key=lambda e: e[0])
    return ev


def follow(ev, i, j, holder, waiter):
    """The stamps of one handoff between ev[i] (leave) and ev[j] (enter), or None."""
    def find(k, pred):
        for n in range(k, j):
            if pred(ev[n]):
                return n
        return None

    def chain(k, steps):
        # Each step: the first event after the last one's, of `who`, of one of `kinds`, and
        # with a positive result if `positive` (a read that read something).
        for name, who, kinds, positive in steps:
            k = find(k, lambda e: e[1] == who and e[2] in kinds and (not positive or e[4] > 0))
            if k is None:
                return None
            s[name] = ev[k][0]
        return k
    s = {'leave': ev[i][0]}
    writes = ('write>', 'writev>')
    k = chain(i, [('release sent', holder, ('sendto>',), False),
                  ('server reads it', 'S', ('<read',), True)])
    if k is None:
        return None
    end = find(k, lambda e: e[1] == 'S' and e[2] == 'epoll>') or j
    turn = [e for e in ev[k:end] if e[1] == 'S' and e[2] in writes]
    if not turn:
        return None
    message = max(turn, key=lambda e: e[4])
    s['message written'] = message[0]
    s['first'] = turn[0] is message
    at = ev.index(message)
    woken = find(at, lambda e: e[1] == waiter and e[2] in ('wake', 'run'))
    k = chain(at, [('waiter reads it', waiter, ('<recvfrom',), True)])
    if k is None:
        return None
    if woken is not None and woken < k:
        s['waiter runs'] = ev[woken][0]
    k = chain(k, [('acquire sent', waiter, ('sendto>',), False),
                  ('server reads it ', 'S', ('<read',), True),
                  ('reply written', 'S', writes, False),
                  ('waiter reads it ', waiter, ('<recvfrom',), True)])
    if k is None:
        return None
    s['acquired (enter_critical)'] = ev[j][0]
    return s


def segments(path):
    ev = events(path)
    rows = []
    for i, e in enumerate(ev):
        if e[2] != 'L':
            continue
        # The acquisition that this release hands over: the next stamp, another worker's enter.
        j = next((n for n in range(i + 1, len(ev)) if ev[n][2] in ('L', 'E')), None)
        if j is None or ev[j][2] != 'E' or ev[j][1] == e[1] or ev[j][0] - e[0] > 5000:
            continue
        s = follow(ev, i, j, e[1], ev[j][1])
        if s:
            rows.append(s)
    if not rows:
        print('no handoff found')
        return
    keys = [k for k in rows[0] if k not in ('first', 'waiter runs')]
    keys.insert(keys.index('waiter reads it'), 'waiter runs')
    print(f'{len(rows)} handoffs; the message was the server\'s first write of its turn in '
          f'{sum(r["first"] for r in rows)}')
    for a, b in zip(keys, keys[1:]):
        if a == 'waiter runs':
            d = [r[b] - r[a] for r in rows if a in r]
        elif b == 'waiter runs':
            d = [r[b] - r[a] for r in rows if b in r]
        else:
            d = [r[b] - r[a] for r in rows]
        q = sorted(d)
        print(f'{a.strip():>26} -> {b.strip():<26} p50 {statistics.median(d):6.0f}'
              f'  p25 {q[len(q) // 4]:6.0f}  p75 {q[3 * len(q) // 4]:6.0f} µs')
    total = [r['acquired (enter_critical)'] - r['leave'] for r in rows]
    print(f'{"total":>26}    {"":<26} p50 {statistics.median(total):6.0f} µs')


if __name__ == '__main__':
    if sys.argv[1] == 'split':
        split(sys.argv[2], sys.argv[3:])
    else:
        segments(sys.argv[2])
