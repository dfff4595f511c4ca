// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// node-redlock on one Redis node, in locksmith-bench's shapes: `uncontended` (one worker, one
// name) and `independent` (N workers of one process, each on its own name, one connection).
// A cycle is acquire + release, timed from the start of the acquire to the end of the release,
// as locksmith-bench times async_lock + async_unlock. Prints one JSON line.
//
//   node node-redlock.js --port P --scenario uncontended|independent [--workers N]
//                        [--duration-ms 3000] [--warmup-ms 100]
'use strict';
const Redis = require('ioredis');
const { default: Redlock } = require('redlock');

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
}

const port = Number(option('--port'));
const scenario = option('--scenario', 'uncontended');
const workers = scenario === 'uncontended' ? 1 : Number(option('--workers', '64'));
const durationMs = Number(option('--duration-ms', '3000'));
const warmupMs = Number(option('--warmup-ms', '100'));
if (!port || !['uncontended', 'independent'].includes(scenario) || !(workers > 0)) {
  process.stderr.write('usage: node-redlock.js --port P --scenario uncontended|independent\n');
  process.exit(2);
}

const redis = new Redis({ host: '127.0.0.1', port, enableAutoPipelining: false });
// retryCount 0: these shapes never contend, so every try must win at once.
const redlock = new Redlock([redis], { retryCount: 0 });

const cycles = [];
let failures = 0;
let measuring = false;
let stopping = false;

async function worker(id) {
  const key = `locksmith-peers:{w${id}}`;
  while (!stopping) {
    const start = process.hrtime.bigint();
    try {
      const lock = await redlock.acquire([key], 30000);
      await lock.release();
      if (measuring)
        cycles.push(Number(process.hrtime.bigint() - start) / 1000);
    } catch (e) {
      ++failures;
    }
  }
}

function quantile(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;
}

async function main() {
  await redis.ping();
  const running = Array.from({ length: workers }, (_, i) => worker(i));
  await new Promise((r) => setTimeout(r, warmupMs));
  measuring = true;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, durationMs));
  measuring = false;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  stopping = true;
  await Promise.all(running);
  redis.disconnect();
  const sorted = cycles.slice().sort((a, b) => a - b);
  const round = (x) => (x === null ? null : Math.round(x * 10) / 10);
  console.log(JSON.stringify({
    library: 'node-redlock',
    scenario,
    workers,
    acquisitions: cycles.length,
    acquisitions_per_s: Math.round(cycles.length / seconds),
    cycle_p50_us: round(quantile(sorted, 0.5)),
    cycle_p99_us: round(quantile(sorted, 0.99)),
    client_cpu_us_per_acquisition: round((cpu.user + cpu.system) / Math.max(1, cycles.length)),
    failures,
  }));
}

main().catch((e) => {
  process.stderr.write(`node-redlock: ${e.message}\n`);
  process.exit(1);
});
