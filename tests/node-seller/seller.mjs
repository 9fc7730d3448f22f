// A seller nobody here wrote: express with the official x402 middleware (@x402/express, its resource server and
// @x402/evm's exact scheme), advertising the legal context extension on its route, and a local facilitator stand-in
// in the same process that checks what a facilitator would before it "settles": the EIP-3009 signature recovers to
// `from` over the requirement's own token domain (viem), the payment is the requirement's (payee, amount, validity),
// its nonce is H (the legal context binding), and a nonce is settled once.
//
// It prints one JSON line, {"port", "h", "facilitator"}, once both listen on 127.0.0.1, then serves until killed.
// GET /atr/<H> serves the terms, GET /report costs $0.01 USDC on Base Sepolia, GET /seen reports what the
// facilitator verified and settled.

import { createHash } from "node:crypto";
import http from "node:http";
import express from "express";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { verifyTypedData, getAddress } from "viem";

const NETWORK = "eip155:84532";
const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
const HOST = "seller.test";
const ATR = Buffer.from(
  '{"atrVersion":"1","seller":{"name":"Node Co."},"terms":"Reports are licensed for one reader."}',
);
const H = "0x" + createHash("sha256").update(ATR).digest("hex");

const seen = { verified: [], settled: [], refused: [], echoed: [] };

/** Why a payment is not good for the requirement, or null. */
async function check(payload, requirements) {
  const auth = payload?.payload?.authorization;
  const signature = payload?.payload?.signature;
  if (!auth || !signature) return "invalid_payload";
  if (getAddress(auth.to) !== getAddress(requirements.payTo)) return "invalid_exact_evm_payload_recipient_mismatch";
  if (BigInt(auth.value) !== BigInt(requirements.amount)) return "invalid_exact_evm_payload_authorization_value";
  if (BigInt(auth.validBefore) <= BigInt(Math.floor(Date.now() / 1000))) return "invalid_exact_evm_payload_authorization_valid_before";
  if (auth.nonce.toLowerCase() !== H) return "invalid_exact_evm_payload_nonce_not_legal_context";
  const ok = await verifyTypedData({
    address: auth.from,
    domain: {
      name: requirements.extra?.name,
      version: requirements.extra?.version,
      chainId: Number(requirements.network.split(":")[1]),
      verifyingContract: requirements.asset,
    },
    types: {
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "TransferWithAuthorization",
    message: {
      from: auth.from,
      to: auth.to,
      value: BigInt(auth.value),
      validAfter: BigInt(auth.validAfter),
      validBefore: BigInt(auth.validBefore),
      nonce: auth.nonce,
    },
    signature,
  });
  return ok ? null : "invalid_exact_evm_payload_signature";
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"));
      } catch (e) {
        reject(e);
      }
    });
  });
}

// The facilitator stand-in: /supported, /verify, /settle.
const facilitator = http.createServer(async (req, res) => {
  const send = (status, body) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  try {
    if (req.method === "GET" && req.url.startsWith("/supported")) {
      return send(200, { kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }], extensions: [], signers: {} });
    }
    const body = await readJson(req);
    const { paymentPayload, paymentRequirements } = body;
    const payer = paymentPayload?.payload?.authorization?.from;
    const why = await check(paymentPayload, paymentRequirements);
    if (req.url.startsWith("/verify")) {
      seen.verified.push(paymentPayload?.payload?.authorization?.nonce);
      seen.echoed.push(paymentPayload?.extensions ?? null);
      if (why) seen.refused.push(why);
      return send(200, why ? { isValid: false, invalidReason: why, payer } : { isValid: true, payer });
    }
    if (req.url.startsWith("/settle")) {
      const nonce = paymentPayload?.payload?.authorization?.nonce;
      if (why || seen.settled.includes(nonce)) {
        const errorReason = why ?? "invalid_exact_evm_nonce_used";
        seen.refused.push(errorReason);
        return send(200, { success: false, errorReason, payer, transaction: "", network: paymentRequirements.network });
      }
      seen.settled.push(nonce);
      const transaction = "0x" + createHash("sha256").update(nonce).digest("hex");
      return send(200, { success: true, payer, transaction, network: paymentRequirements.network });
    }
    send(404, {});
  } catch (e) {
    send(500, { error: String(e) });
  }
});

await new Promise((resolve) => facilitator.listen(0, "127.0.0.1", resolve));
const facilitatorUrl = `http://127.0.0.1:${facilitator.address().port}`;

const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
  NETWORK,
  new ExactEvmScheme(),
);

const app = express();
app.get("/atr/:h", (req, res) => res.type("application/json").send(ATR));
app.get("/seen", (req, res) => res.json(seen));
app.use(
  paymentMiddleware(
    {
      "GET /report": {
        accepts: { scheme: "exact", price: "$0.01", network: NETWORK, payTo: PAY_TO, maxTimeoutSeconds: 60 },
        description: "a report",
        mimeType: "text/plain",
        // The legal context extension, declared on the route: the middleware copies a route's `extensions` into
        // the 402's PAYMENT-REQUIRED as written.
        extensions: {
          legalContext: { info: { type: "sha256", value: H, legalContextUrl: `https://${HOST}/atr/${H}` } },
        },
      },
    },
    server,
  ),
);
app.get("/report", (req, res) => res.type("text/plain").send("the report from node"));

const listening = app.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: listening.address().port, h: H, facilitator: facilitatorUrl }) + "\n");
});
