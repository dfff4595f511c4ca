// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// Reads the JSON lines of benchmarks/peers/run.sh and prints each row's medians over the rounds,
// with the lowest and highest of each figure.
'use strict';
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter((l) => l.startsWith('{'));
const rows = new Map();
for (const line of lines) {
  const r = JSON.parse(line);
  const who = r.library ??
    ['locksmith', r.strategy, r.fence === false && 'unfenced'].filter(Boolean).join(' ');
  const key = `${r.scenario}\t${who}`;
  if (!rows.has(key))
    rows.set(key, { scenario: r.scenario, who, p50: [], rate: [], cpu: [], handoff: [] });
  const row = rows.get(key);
  row.p50.push(r.cycle_p50_us);
  row.rate.push(r.acquisitions_per_s);
  row.cpu.push(r.client_cpu_us_per_acquisition);
  row.handoff.push(r.handoff_p50_us);
}
function spread(xs) {
  const s = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (!s.length)
    return '-';
  const med = s[Math.floor(s.length / 2)];
  return `${med} (${s[0]}-${s[s.length - 1]})`;
}
const pad = (s, n) => String(s).padEnd(n);
console.log([pad('scenario', 12), pad('library', 20), pad('cycle p50 us', 22), pad('acq/s', 24),
             pad('client cpu us/acq', 22), 'handoff p50 us'].join(' '));
for (const row of rows.values())
  console.log([pad(row.scenario, 12), pad(row.who, 20), pad(spread(row.p50), 22),
               pad(spread(row.rate), 24), pad(spread(row.cpu), 22), spread(row.handoff)].join(' '));
console.log(`medians over ${Math.max(...[...rows.values()].map((r) => r.p50.length))} rounds, ` +
            'lowest-highest in brackets');
