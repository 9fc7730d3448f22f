// @x402/fetch (the official x402 TypeScript client, with @x402/evm's exact scheme and viem's local account) paying
// the stand-in seller's /open path: `node bench.mjs <address> [requests] [concurrency]`, the same measure as
// `peers bench` (20 to warm up, then `requests` paid requests from `concurrency` loops), one JSON line out.

import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm";
import { privateKeyToAccount } from "viem/accounts";

const [address, requestsArg, concurrencyArg] = process.argv.slice(2);
if (!address) {
  console.error("usage: node bench.mjs <address> [requests] [concurrency]");
  process.exit(2);
}
const requests = Number(requestsArg ?? 400);
const concurrency = Number(concurrencyArg ?? 4);
// Anvil's published development key #0, the seller's KEY.
const account = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const pay = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network: "eip155:84532", client: new ExactEvmScheme(account) }],
});
const url = `http://${address}/open`;

async function once() {
  const started = process.hrtime.bigint();
  const response = await pay(url, { method: "GET" });
  const body = await response.text();
  if (response.status !== 200 || !response.headers.get("payment-response")) {
    throw new Error(`not paid: ${response.status}: ${body}`);
  }
  return Number(process.hrtime.bigint() - started) / 1e6;
}

for (let i = 0; i < 20; i++) await once();
let next = 0;
const took = [];
const cpuBefore = process.cpuUsage();
const started = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next++ < requests) took.push(await once());
  }),
);
const wall = Number(process.hrtime.bigint() - started) / 1e9;
const cpu = process.cpuUsage(cpuBefore);
took.sort((a, b) => a - b);
const at = (q) => took[Math.min(took.length, Math.max(1, Math.ceil(took.length * q))) - 1];
const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;
console.log(
  JSON.stringify({
    client: "@x402/fetch",
    requests: took.length,
    concurrency,
    per_second: round(took.length / wall, 1),
    p50_ms: round(at(0.5), 3),
    p99_ms: round(at(0.99), 3),
    cpu_us_per_request: Math.round((cpu.user + cpu.system) / took.length),
  }),
);
