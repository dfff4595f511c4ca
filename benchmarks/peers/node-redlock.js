// Copyright (c) the locksmith authors. Distributed under the Boost Software License, Version 1.0.
// node-redlock on one Redis node (or RedLock over several, --ports), in locksmith-bench's shapes: `uncontended` (one worker, one
// name), `independent` (N workers of one process, each on its own name, one connection) and
// `handoff` (N workers of one process on one name, as locksmith-bench's: a holder releases once
// another worker has waited 5 ms, and a worker pauses 0-100 ms after its release; node-redlock
// waits by polling, every --retry-delay-ms plus up to as much jitter). A cycle is acquire +
// release, timed from the start of the acquire to the end of the release, as locksmith-bench
// times async_lock + async_unlock; a handoff from a release (stamped before it starts) to the
// acquisition by a worker that was already waiting. Prints one JSON line. With --ports P1,P2,...
// it runs RedLock over those nodes (one ioredis client each, as node-redlock's README does), and
// the uncontended row is then named "quorum", as locksmith-bench's RedLock cycle.
//
//   node node-redlock.js --port P | --ports P1,P2,... --scenario uncontended|independent|handoff
//                        [--workers N] [--duration-ms 3000] [--warmup-ms 100] [--retry-delay-ms 10]
'use strict';
const Redis = require('ioredis');
const { default: Redlock } = require('redlock');

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
}

const ports = option('--ports', option('--port', '')).split(',').filter((p) => p).map(Number);
const port = ports[0];
const scenario = option('--scenario', 'uncontended');
const workers = scenario === 'uncontended' ? 1
  : Number(option('--workers', scenario === 'handoff' ? '2' : '64'));
const durationMs = Number(option('--duration-ms', '3000'));
const warmupMs = Number(option('--warmup-ms', '100'));
const retryDelayMs = Number(option('--retry-delay-ms', '10'));
if (!port || ports.some((p) => !p) || !['uncontended', 'independent', 'handoff'].includes(scenario) || !(workers > 0) ||
    (scenario === 'handoff' && workers < 2) || !(retryDelayMs > 0)) {
  process.stderr.write('usage: node-redlock.js --port P | --ports P1,P2,... ' +
                       '--scenario uncontended|independent|handoff\n');
  process.exit(2);
}

const clients = ports.map((p) => new Redis({ host: '127.0.0.1', port: p, enableAutoPipelining: false }));
// retryCount 0 where nothing contends, so that every try must win at once; in the handoff, tries
// until it gets the lock.
const redlock = new Redlock(clients, scenario === 'handoff'
  ? { retryCount: -1, retryDelay: retryDelayMs, retryJitter: retryDelayMs }
  : { retryCount: 0 });

const cycles = [];
const handoffs = [];
let failures = 0;
let measuring = false;
let stopping = false;
const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function worker(id) {
  const key = `locksmith-peers:{w${id}}`;
  while (!stopping) {
    const start = now();
    try {
      const lock = await redlock.acquire([key], 30000);
      await lock.release();
      if (measuring)
        cycles.push(Number(now() - start) / 1000);
    } catch (e) {
      ++failures;
    }
  }
}

// The handoff shape: since when each worker waits (0n: it does not), and the last release.
const waitingSince = new Array(workers).fill(0n);
let released = { by: -1, at: 0n };
const settleNs = 5_000_000n;
const thinkMs = 100;

function oldestOtherWaiter(id) {
  let oldest = 0n;
  for (let i = 0; i < workers; ++i)
    if (i !== id && waitingSince[i] !== 0n && (oldest === 0n || waitingSince[i] < oldest))
      oldest = waitingSince[i];
  return oldest;
}

async function handoffWorker(id) {
  const key = 'locksmith-peers:{handoff}';
  await sleep(Math.random() * thinkMs);
  while (!stopping) {
    const start = now();
    waitingSince[id] = start;
    let lock;
    try {
      lock = await redlock.acquire([key], 30000);
    } catch (e) {
      waitingSince[id] = 0n;
      ++failures;
      continue;
    }
    const acquired = now();
    waitingSince[id] = 0n;
    if (measuring && released.by !== -1 && released.by !== id && released.at > start)
      handoffs.push(Number(acquired - released.at) / 1000);
    for (;;) {
      const oldest = oldestOtherWaiter(id);
      if (stopping || (oldest !== 0n && now() - oldest >= settleNs))
        break;
      await sleep(1);
    }
    released = { by: id, at: now() };
    try {
      await lock.release();
      if (measuring)
        cycles.push(Number(now() - start) / 1000);
    } catch (e) {
      ++failures;
    }
    await sleep(Math.random() * thinkMs);
  }
}

function quantile(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;
}

async function main() {
  await Promise.all(clients.map((c) => c.ping()));
  const body = scenario === 'handoff' ? handoffWorker : worker;
  const running = Array.from({ length: workers }, (_, i) => body(i));
  await sleep(warmupMs);
  measuring = true;
  const cpu0 = process.cpuUsage();
  const t0 = now();
  await sleep(durationMs);
  measuring = false;
  const seconds = Number(now() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  stopping = true;
  await Promise.all(running);
  clients.forEach((c) => c.disconnect());
  const sorted = cycles.slice().sort((a, b) => a - b);
  const handed = handoffs.slice().sort((a, b) => a - b);
  const round = (x) => (x === null ? null : Math.round(x * 10) / 10);
  console.log(JSON.stringify({
    library: 'node-redlock',
    scenario: ports.length > 1 && scenario === 'uncontended' ? 'quorum' : scenario,
    nodes: ports.length,
    workers,
    acquisitions: cycles.length,
    acquisitions_per_s: Math.round(cycles.length / seconds),
    cycle_p50_us: round(quantile(sorted, 0.5)),
    cycle_p99_us: round(quantile(sorted, 0.99)),
    handoffs: handed.length,
    handoff_p50_us: round(quantile(handed, 0.5)),
    handoff_p99_us: round(quantile(handed, 0.99)),
    client_cpu_us_per_acquisition: round((cpu.user + cpu.system) / Math.max(1, cycles.length)),
    failures,
  }));
}

main().catch((e) => {
  process.stderr.write(`node-redlock: ${e.message}\n`);
  process.exit(1);
});
