// The terms-mcp binary driven over stdio by the official TypeScript MCP SDK client: the tools listed, a payment
// signed by a second server (the mcp_signer example, a local wallet) checked by terms-mcp against the vectors' bytes,
// a loopback link refused with zero connections, atr_pay's URL rule, --config's
// budget, history and record tools, and schema failures.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const target = process.env.CARGO_TARGET_DIR ?? join(root, "target");
const BIN = process.env.TERMS_MCP_BIN ?? join(target, "debug", "terms-mcp");
const SIGNER = process.env.TERMS_MCP_SIGNER_BIN ?? join(target, "debug", "examples", "mcp_signer");
const VERSION = /^version = "(.*)"$/m.exec(readFileSync(join(root, "Cargo.toml"), "utf8"))[1];
const buyer = JSON.parse(readFileSync(join(root, "tests", "vectors", "buyer.json"), "utf8"));
const fixed = buyer.fixed;
const B1 = buyer.rows.find((r) => r.name === "B1");
const EIP3009 = "x402/exact/eip155/eip3009";
const base64Of = (hex) => Buffer.from(hex, "hex").toString("base64");

const clients = [];
async function connect(command, args = [], env = undefined) {
  const client = new Client({ name: "terms-mcp-node-test", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env, stderr: "inherit" }));
  clients.push(client);
  return client;
}
after(async () => {
  for (const c of clients) await c.close();
});

/** Calls a tool, and checks that the text of its one block is the JSON of its structured content. */
async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0].type, "text");
  assert.equal(r.content[0].text, JSON.stringify(r.structuredContent));
  return r;
}

/** A loopback listener that counts the connections it is offered; `close()` waits 200 ms, then answers the count. */
async function countingListener() {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    async close() {
      await new Promise((resolve) => setTimeout(resolve, 200));
      server.close();
      return connections;
    },
  };
}

const terms = await connect(BIN);

test("serverInfo and the five tools of the binary", async () => {
  assert.deepEqual(terms.getServerVersion(), { name: "integraledger-terms", version: VERSION });
  assert.deepEqual(terms.getServerCapabilities(), { tools: {} });
  const { tools } = await terms.listTools();
  assert.deepEqual(
    tools.map((t) => t.name).sort(),
    ["atr_channel_open", "atr_channel_record_charge", "atr_check", "atr_confirm", "atr_finish"],
  );
  const confirm = tools.find((t) => t.name === "atr_confirm");
  assert.deepEqual(confirm.annotations, { readOnlyHint: true, openWorldHint: true });
  assert.equal(confirm.inputSchema.properties.pairing.enum.length, 67);
});

test("a payment signed by another server checks against the vectors' bytes", async () => {
  const signer = await connect(SIGNER);
  const { tools } = await signer.listTools();
  assert.equal(tools.length, 9);
  const paid = await call(signer, "atr_transact", { pairing: EIP3009, document: fixed.D });
  assert.equal(paid.isError, undefined);
  assert.equal(paid.structuredContent.atrHash, B1.expect.h);
  const signed = paid.structuredContent.signed;
  assert.equal(signed.payload.authorization.nonce, B1.expect.h);

  const ok = await call(terms, "atr_check", { pairing: EIP3009, atr: base64Of(fixed.A), presented: signed });
  assert.equal(ok.isError, undefined);
  assert.deepEqual(ok.structuredContent, { atrHash: B1.expect.h });

  const other = await call(terms, "atr_check", { pairing: EIP3009, atr: base64Of(fixed.C), presented: signed });
  assert.equal(other.isError, true);
  assert.equal(other.structuredContent.decline.code, "signed-not-bound");
});

test("atr_confirm of a loopback link is atr-unfetchable, with no connection", async () => {
  const listener = await countingListener();
  const { port } = listener;
  const document = structuredClone(fixed.D);
  document.extensions.legalContext.info.legalContextUrl = `https://127.0.0.1:${port}/${B1.expect.h}`;
  const r = await call(terms, "atr_confirm", { pairing: EIP3009, document, account: fixed.account });
  assert.equal(r.isError, true);
  assert.deepEqual(r.structuredContent, {
    decline: { code: "atr-unfetchable", detail: "The ATR could not be fetched from the link." },
  });
  assert.equal(await listener.close(), 0);
});

test("atr_pay holds the paid URL to the public-only rule: refused, with no connection", async () => {
  const listener = await countingListener();
  const { port } = listener;
  const signer = await connect(SIGNER);
  const pay = (await signer.listTools()).tools.find((t) => t.name === "atr_pay");
  assert.equal(pay.annotations.readOnlyHint, false);
  assert.equal(pay.annotations.openWorldHint, true);
  for (const url of [`https://127.0.0.1:${port}/paid`, `http://127.0.0.1:${port}/paid`, "https://10.0.0.1/paid"]) {
    const r = await call(signer, "atr_pay", { url });
    assert.equal(r.isError, true, url);
    assert.equal(r.structuredContent.decline.code, "url-refused", url);
  }
  assert.equal(await listener.close(), 0);
});

test("--config: the host's journal, policy and key, read back by atr_budget, atr_history and atr_record", async () => {
  const { network, asset } = fixed.D.accepts[0];
  const folder = mkdtempSync(join(tmpdir(), "terms-mcp-node-"));
  after(() => rmSync(folder, { recursive: true, force: true }));
  writeFileSync(
    join(folder, "policy.toml"),
    `resources = ["*"]\nnetworks = ["${network}"]\n\n[[assets]]\nnetwork = "${network}"\naddress = "${asset}"\n` +
      `symbol = "USDC"\ndecimals = 6\ncap = "1000000"\n\n[[budgets]]\nname = "day"\n` +
      `asset = "${network}/${asset}"\nwindow = "day"\nlimit = "5000000"\n`,
  );
  writeFileSync(
    join(folder, "config.toml"),
    `journal = "journal.db"\npolicy = "policy.toml"\nkey_env = "TERMS_MCP_NODE_KEY"\nnetwork = "${network}"\n`,
  );
  const host = await connect(BIN, ["--config", join(folder, "config.toml")], {
    ...process.env,
    TERMS_MCP_NODE_KEY: fixed.payerKey,
  });
  const names = (await host.listTools()).tools.map((t) => t.name);
  for (const name of ["atr_transact", "atr_pay", "atr_budget", "atr_history", "atr_record"]) {
    assert.ok(names.includes(name), name);
  }
  const budget = (await call(host, "atr_budget", {})).structuredContent.budgets[0];
  assert.deepEqual(
    [budget.budget, budget.window, budget.limit, budget.spent, budget.remaining],
    ["day", "day", "5000000", "0", "5000000"],
  );
  const hourly = (await call(host, "atr_budget", { window: "hour" })).structuredContent.budgets[0];
  assert.equal(hourly.windowSeconds, 3600);
  assert.deepEqual((await call(host, "atr_history", {})).structuredContent, { records: [] });
  assert.deepEqual((await call(host, "atr_record", { key: "no-such-purchase" })).structuredContent, { record: null });
  for (const [tool, args, argument] of [
    ["atr_history", { limit: 0 }, "limit"],
    ["atr_budget", { window: "week" }, "window"],
    ["atr_record", {}, "key"],
  ]) {
    const r = await call(host, tool, args);
    assert.equal(r.isError, true, tool);
    assert.equal(r.structuredContent.invalid.argument, argument, tool);
  }
  assert.ok(existsSync(join(folder, "journal.db")), "the journal beside the config file");
});

test("arguments outside the schema fail it", async () => {
  const cases = [
    [{ pairing: EIP3009, atr: "/x==", presented: {} }, "atr"],
    [{ pairing: EIP3009, atr: "/w", presented: {} }, "atr"],
    [{ pairing: "x402/exact/nowhere", atr: "/w==", presented: {} }, "pairing"],
    [{ pairing: EIP3009, atr: "/w==" }, "presented"],
  ];
  for (const [args, argument] of cases) {
    const r = await call(terms, "atr_check", args);
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.invalid.argument, argument);
  }
  // The schema's base64 pattern, as a client's JSON Schema validator would read it, agrees with the server.
  const { tools } = await terms.listTools();
  const pattern = new RegExp(tools.find((t) => t.name === "atr_check").inputSchema.properties.atr.pattern);
  for (const [text, canonical] of [["/w==", true], ["/x==", false], ["", true], ["QUJD", true], ["QUI", false]]) {
    assert.equal(pattern.test(text), canonical, text);
  }
});
