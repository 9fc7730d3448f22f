"""The MPP part of the differential test's cases (generate.py writes them beside the x402 ones): for each of the MPP
pairings the crate builds, the challenge list, account, inputs and presented payments of its vector file's buyer rows,
mutated. Stdlib only; the same seed and count give the same bytes.

A challenge is written from a spec (realm, method, intent, the request as JSON or as raw text, expires, the H its id
and opaque carry, its position, the link and agreement URL) and placed as the seller's server places it: the id
base64url(H) "." position, the opaque the base64url of the RFC 8785 form of the LCP members. The mutations
(mpp_mutations.py): the list as `WWW-Authenticate` field values in many forms (several values, several challenges in
one beside other schemes, token and quoted parameters, whitespace, the scheme's case) and past the header's caps;
positions; `expires` around now; requests changed, not base64url, not RFC 8785, not JSON; another H; several methods;
opaque and digest; the list's caps; the buyer's inputs and account; the signer's answers (EIP-712 signatures edited
or by another key, EIP-1559 transactions for another chain, nonce or recipient, hashes that are not 32 bytes, Gateway
burn intents, the session's two steps); presented credentials changed; and transact."""

import base64
import calendar
import copy
import hashlib
import json
import pathlib
import random
import time

import mpp_tempo

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors"

NOW = 1790000000
PAYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"  # Anvil #0
OTHER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"  # Anvil #1
PAYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
ANVIL_1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
EVM_ACCOUNT = f"eip155:84532:{PAYER}"

# The MPP pairings the crate builds, in the order terms::built_ids() lists them.
PAIRINGS = [
    "mpp/charge/card",
    "mpp/charge/evm/authorization",
    "mpp/charge/evm/hash",
    "mpp/charge/evm/permit2",
    "mpp/charge/evm/transaction",
    "mpp/charge/lightning",
    "mpp/charge/nearintents",
    "mpp/charge/solana",
    "mpp/charge/stellar",
    "mpp/charge/stripe",
    "mpp/charge/tempo/memo",
    "mpp/charge/tempo/push",
    "mpp/charge/usdc/evm",
    "mpp/charge/usdc/gateway",
    "mpp/charge/usdc/solana",
    "mpp/charge/xrpl",
    "mpp/session/evm",
    "mpp/session/lightning",
    "mpp/session/solana",
    "mpp/session/tempo",
    "mpp/session/xrpl",
    "mpp/subscription/stripe",
    "mpp/subscription/tempo",
]
FILES = {
    "mpp/charge/card": "mpp-charge-card.json",
    "mpp/charge/evm/authorization": "mpp-charge-evm-authorization.json",
    "mpp/charge/evm/hash": "mpp-charge-evm-hash.json",
    "mpp/charge/evm/permit2": "mpp-charge-evm-permit2.json",
    "mpp/charge/evm/transaction": "mpp-charge-evm-transaction.json",
    "mpp/charge/lightning": "mpp-charge-lightning.json",
    "mpp/charge/nearintents": "mpp-charge-nearintents.json",
    "mpp/charge/solana": "mpp-charge-solana.json",
    "mpp/charge/stellar": "mpp-charge-stellar.json",
    "mpp/charge/stripe": "mpp-charge-stripe.json",
    "mpp/charge/tempo/memo": "mpp-charge-tempo-memo.json",
    "mpp/charge/tempo/push": "mpp-charge-tempo-push.json",
    "mpp/charge/usdc/evm": "mpp-charge-usdc-evm.json",
    "mpp/charge/usdc/gateway": "mpp-charge-usdc-gateway.json",
    "mpp/charge/usdc/solana": "mpp-charge-usdc-solana.json",
    "mpp/charge/xrpl": "mpp-charge-xrpl.json",
    "mpp/session/evm": "mpp-session-evm.json",
    "mpp/session/lightning": "mpp-session-lightning.json",
    "mpp/session/solana": "mpp-session-hedera-solana-xrpl.json",
    "mpp/session/tempo": "mpp-session-tempo.json",
    "mpp/session/xrpl": "mpp-session-hedera-solana-xrpl.json",
    "mpp/subscription/stripe": "mpp-subscription-stripe.json",
    "mpp/subscription/tempo": "mpp-subscription-tempo.json",
}
# The pairings whose payment is no public proof of H: their challenges name an agreement URL, paid first.
AGREEMENT_FIRST = {
    "mpp/charge/card", "mpp/charge/stripe", "mpp/subscription/stripe", "mpp/charge/nearintents",
    "mpp/charge/evm/transaction", "mpp/charge/evm/hash", "mpp/charge/lightning", "mpp/session/lightning",
}
# The pairings whose payer's node pays a BOLT11 invoice (a bolt11-pay request), answered with a preimage.
LIGHTNING = {"mpp/charge/lightning", "mpp/session/lightning"}
EIP712 = {"mpp/charge/evm/authorization", "mpp/charge/evm/permit2", "mpp/charge/usdc/evm"}
# The pairings whose payer signs a solana-message with an ed25519 key: a `$sign` is that key's signature, the key
# x402-exact-solana.json's payer seed (the same payer as their files' fixtures, seed 01).
ED25519 = {"mpp/charge/solana", "mpp/charge/usdc/solana"}
# The Solana session: the wallet's channel client answers its solana-session-open request with the open payload (the
# file's B6 payload, SV2's opening); in operator mode the payer's key then signs the session proof (ed25519-raw, a
# `$sign` of the same seed, answered in base58).
SOL_SESSION = "mpp/session/solana"
# The XRPL charge: neither runner encodes an XRPL transaction (the reference has no XRPL encoder), so its answers are
# the file's signed blobs as given: B6's (V3's Payment, what the fixture builds) or another.
XRPL_CHARGE = "mpp/charge/xrpl"
# The Stellar charge: the payer's ed25519 key (x402-exact-stellar.json's payer seed, 05x32, the account of its files'
# fixtures) signs the stellar-auth request, SHA-256 of the Soroban authorization entry's preimage.
STELLAR_CHARGE = "mpp/charge/stellar"
# The XRPL session: the wallet answers its xrpl-session-open request {signedBlob, claimSignature}, the file's B6
# opening (XS2's PaymentChannelCreate, whose claim signature the file leaves as "00") or another.
XRPL_SESSION = "mpp/session/xrpl"


def xrpl_open(base, blob=None, signature=None):
    p = base.presented["payload"]
    return {"signedBlob": p["transaction"] if blob is None else blob,
            "claimSignature": p["signature"] if signature is None else signature}
ORDER = ["realm", "method", "intent", "request", "expires", "id", "opaque"]


def load(name):
    return json.loads((VECTORS / name).read_text())


def sha(data):
    return "0x" + hashlib.sha256(data).hexdigest()


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64u(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jcs(value):
    """RFC 8785 for the values the cases write (strings, integers, booleans, null, lists, objects of them)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def rfc3339(unix):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(unix))


def h_body(h):
    return b64u(bytes.fromhex(h[2:]))


# --- fixtures -------------------------------------------------------------------------------------------------------


class Base:
    """One MPP pairing's fixture: its B2 row's challenge (as a spec), account, inputs and now; the ATR whose hash the
    challenge carries; its B6 row's presented credential where the file has one; the signer's answers that pay it."""

    def __init__(self, pairing):
        self.pairing = pairing
        self.file = load(FILES[pairing])
        fixed = self.file["fixed"]
        rows = [r for r in self.file["buyer"]["rows"] if r.get("pairing") == pairing]
        b2 = next(r for r in rows if r["name"] == "B2")
        b6 = next((r for r in rows if r["name"] == "B6"), None)
        inp = b2["input"]
        self.atr = bytes.fromhex(b6["input"]["check"][0]["bytesHex"]) if b6 else b"abc"
        self.h = b2["advertised"]
        assert sha(self.atr) == self.h, pairing
        self.account = inp["account"]
        self.inputs = copy.deepcopy(inp.get("inputs")) or {}
        self.now = inp.get("now") or fixed.get("now") or NOW
        c = inp["doc"][0]
        opaque = json.loads(unb64u(c["opaque"]))
        self.link = opaque["legalContextUrl"]
        self.agreement = None
        if pairing in AGREEMENT_FIRST:
            self.agreement = fixed.get("agreementUrl") or f"https://pay.seller.example/agreement/{self.h}"
        self.spec = {
            "realm": c["realm"], "method": c["method"], "intent": c["intent"],
            "request": json.loads(unb64u(c["request"])), "raw": c["request"],
            "expires": c.get("expires"), "h": self.h, "link": self.link, "agreement": self.agreement,
            # The subscription's id is base64url(H) alone; every other intent's carries the position.
            "position": 0 if "." in c["id"] else None,
        }
        self.presented = copy.deepcopy(b6["input"]["presented"]) if b6 else None
        self.expires_unix = unix_of(c["expires"])
        self.key = PAYER_KEY  # what `$sign` answers sign with
        if pairing in ED25519 or pairing == SOL_SESSION:
            self.key = "0x" + load("x402-exact-solana.json")["fixed"]["payerSeed"]
        if pairing == STELLAR_CHARGE:
            self.key = "0x" + load("x402-exact-stellar.json")["fixed"]["payerSeed"]


def unix_of(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


def place(spec):
    """The challenge the spec names, as the seller's server places it."""
    c = {}
    c["realm"] = spec["realm"]
    c["method"] = spec["method"]
    c["intent"] = spec["intent"]
    if "requestText" in spec:
        c["request"] = spec["requestText"]
    elif spec.get("raw") is not None and spec["request"] == json.loads(unb64u(spec["raw"])):
        c["request"] = spec["raw"]
    else:
        c["request"] = b64u(jcs(spec["request"]).encode())
    if spec.get("expires") is not None:
        c["expires"] = spec["expires"]
    if "id" in spec:
        c["id"] = spec["id"]
    elif spec.get("position") is None:
        c["id"] = h_body(spec["h"])
    else:
        c["id"] = f"{h_body(spec['h'])}.{spec['position']}"
    if "opaqueText" in spec:
        if spec["opaqueText"] is not None:
            c["opaque"] = spec["opaqueText"]
    else:
        lcp = {"legalContext": "lcp:sha256:" + spec.get("opaqueH", spec["h"]), "legalContextUrl": spec["link"]}
        if spec.get("agreement") is not None:
            lcp["legalContextAgreementUrl"] = spec["agreement"]
        lcp.update(spec.get("opaqueExtra", {}))
        c["opaque"] = b64u(jcs(lcp).encode())
    for k in ("digest", "description", "header"):
        if spec.get(k) is not None:
            c[k] = spec[k]
    for k, v in spec.get("members", {}).items():
        c[k] = v
    order = spec.get("order")
    if order:
        c = {k: c[k] for k in order if k in c} | {k: v for k, v in c.items() if k not in order}
    return c


# --- answers --------------------------------------------------------------------------------------------------------


def sign(edit="none", key=PAYER_KEY):
    return {"$sign": {"key": key, "edit": edit}}


def tx(base, **changes):
    """An EIP-1559 transaction of the request's call, signed by the payer with MV11's fees: `{"$tx": {...}}`, each
    runner building it from the signing request (its chain id, `to` and `data` unless the spec names others)."""
    t = base.file_tx
    spec = {"key": PAYER_KEY, "nonce": t["nonce"], "gas": t["gas"], "maxFeePerGas": t["maxFeePerGas"],
            "maxPriorityFeePerGas": t["maxPriorityFeePerGas"], "edit": "none"}
    spec.update(changes)
    return {"$tx": spec}


def gateway(base, keep_salt=False, **changes):
    """A Gateway client's answer: M5's answer with the TransferSpec salt set to the `usdc` derivation over the
    request's preimage and the answer's own values (each runner computes it), unless keep_salt."""
    a = copy.deepcopy(base.gateway_answer)
    for k, v in changes.items():
        if v is None:
            a.pop(k, None)
        else:
            a[k] = v
    return {"$gateway": {"answer": a, "keepSalt": keep_salt}}


def default_answers(base, inputs=None):
    p = base.pairing
    inputs = base.inputs if inputs is None else inputs
    if p in EIP712:
        return [sign()]
    if p in ED25519 or p == STELLAR_CHARGE:
        return [sign(key=base.key)]
    if p == SOL_SESSION:
        return [copy.deepcopy(base.presented["payload"])]
    if p == "mpp/charge/evm/transaction":
        return [tx(base)]
    if p == "mpp/charge/evm/hash":
        return [base.file["MV12"]["hash"]]
    if p == "mpp/charge/usdc/gateway":
        return [gateway(base)]
    if p == "mpp/session/evm":
        funding = SESSION_HASH if inputs.get("credentialType") == "hash" else sign()
        return [funding, sign()]
    if p in mpp_tempo.TEMPO:
        return mpp_tempo.default_answers(p, PAYER_KEY)
    if p == mpp_tempo.SESSION:
        return mpp_tempo.session_answers(PAYER_KEY, sign)
    if p == mpp_tempo.SUBSCRIPTION:
        return [mpp_tempo.digest(PAYER_KEY)]
    if p in LIGHTNING:
        return [base.presented["payload"]["preimage"]]
    if p == XRPL_CHARGE:
        return [base.presented["payload"]["blob"]]
    if p == XRPL_SESSION:
        return [xrpl_open(base)]
    return []


SESSION_HASH = "0x5555555555555555555555555555555555555555555555555555555555555555"


def wallet_answers(base):
    """What the transact wallet answers beside its EIP-712 signatures, by request kind."""
    if base.pairing in mpp_tempo.TEMPO:
        return mpp_tempo.wallet_answers(base.pairing, PAYER_KEY)
    if base.pairing == mpp_tempo.SESSION:
        return {"tempo-call": mpp_tempo.tempo(PAYER_KEY)}
    if base.pairing == mpp_tempo.SUBSCRIPTION:
        return {"tempo-key-authorization": mpp_tempo.digest(PAYER_KEY)}
    if base.pairing in LIGHTNING:
        return {"bolt11-pay": base.presented["payload"]["preimage"]}
    if base.pairing in ED25519:
        return {"solana-message": sign(key=base.key)}
    if base.pairing == XRPL_CHARGE:
        return {"xrpl-tx": base.presented["payload"]["blob"]}
    if base.pairing == STELLAR_CHARGE:
        return {"stellar-auth": sign(key=base.key)}
    if base.pairing == XRPL_SESSION:
        return {"xrpl-session-open": xrpl_open(base)}
    if base.pairing == SOL_SESSION:
        return {"solana-session-open": copy.deepcopy(base.presented["payload"]), "ed25519-raw": sign(key=base.key)}
    out = {"evm-calls": SESSION_HASH}
    if base.pairing == "mpp/charge/evm/transaction":
        out["evm-call"] = tx(base)
    elif base.pairing == "mpp/charge/evm/hash":
        out["evm-call"] = base.file["MV12"]["hash"]
    elif base.pairing == "mpp/charge/usdc/gateway":
        out["gateway-burn-intent"] = gateway(base)
    return out


def ok_reply(body, headers=None):
    return {"status": 200, "headers": headers if headers is not None else [], "body": {"hex": body.hex()}}


class Builder:
    """One case: the base's challenge specs (placed into `doc` by finish()), routes, finish calls, checks."""

    def __init__(self, g, base, seq):
        self.g = g
        self.base = base
        self.specs = [copy.deepcopy(base.spec)]
        self.doc = None  # a document written directly, in place of the placed specs
        planted = base.atr[:-1] + bytes([base.atr[-1] ^ 1])
        self.case = {
            "id": "", "seq": seq, "pairing": base.pairing, "now": base.now, "account": base.account,
            "inputs": copy.deepcopy(base.inputs),
            "routes": {base.link: {"unpaid": ok_reply(base.atr)}},
            "finish": [{"answers": default_answers(base)}],
            "checks": [
                {"bytesHex": base.atr.hex(), "presented": "$signed"},
                {"bytesHex": planted.hex(), "presented": "$signed"},
            ],
        }
        if base.presented is not None:
            self.case["checks"] += [{"bytesHex": base.atr.hex(), "presented": base.presented},
                                    {"bytesHex": planted.hex(), "presented": base.presented}]
        if base.pairing == mpp_tempo.PUSH:
            self.case["checks"].append(mpp_tempo.landed_check(base))
        if base.agreement is not None:
            a = g.agreement_routes(base.h, base.link)
            self.case["routes"][base.agreement] = {
                "unpaid": {"status": 402, "headers": [["PAYMENT-REQUIRED", g.b64(g.compact(a["required"]))]],
                           "body": {"hex": ""}},
                "paid": {"status": 200, "headers": [["Content-Type", "application/json"]],
                         "body": {"hex": g.compact(a["receipt"]).encode().hex()}},
            }

    def transact(self, edit="none", approve=True, answers=None):
        spec = {"account": self.case["account"], "key": PAYER_KEY, "edit": edit, "erc7710": None, "approve": approve,
                "answers": answers if answers is not None else wallet_answers(self.base)}
        if self.base.agreement is not None:
            spec["agreementSigner"] = {"account": EVM_ACCOUNT, "key": PAYER_KEY}
        self.case["transact"] = spec
        return self

    def done(self):
        if self.doc is None:
            self.case["doc"] = [place(s) for s in self.specs]
        else:
            self.case["doc"] = self.doc
        if not self.case["inputs"]:
            del self.case["inputs"]
        return self.case


BASES = {}


def bases():
    if not BASES:
        for p in PAIRINGS:
            base = Base(p)
            base.file_tx = load(FILES["mpp/charge/evm/transaction"])["MV11"]["transaction"]
            gf = load(FILES["mpp/charge/usdc/gateway"])
            g = gf["M5"]
            transfer = g["payload"]["authorization"]["transfer"]
            b6 = next(r for r in gf["buyer"]["rows"] if r["name"] == "B6")["input"]["presented"]
            base.gateway_answer = {
                "source": g["source"], "sourceNetwork": g["payload"]["sourceNetwork"],
                "destinationNetwork": g["payload"]["destinationNetwork"], "maxFee": g["payload"]["maxFee"],
                "burnIntent": transfer["burnIntent"],
                "signature": b6["payload"]["authorization"]["transfer"]["signature"],
            }
            BASES[p] = base
    return BASES


def cases(g, seed, pairing, count, seq):
    """count cases for the pairing, from seq + 1 on: the fixture first, then mutations drawn by weight."""
    from mpp_mutations import MUTATIONS  # noqa: PLC0415 (it imports this module's helpers)

    base = bases()[pairing]
    rng = random.Random(f"{seed}:{pairing}")
    for i in range(count):
        seq += 1
        b = Builder(g, base, seq)
        if i == 0:
            b.transact()
            b.case["id"] = f"{pairing}#{seq}: the fixture as it is"
            yield b.done()
            continue
        mutation = rng.choices([m for m, _ in MUTATIONS], weights=[w for _, w in MUTATIONS])[0]
        what = mutation(rng, b)
        if "transact" not in b.case and rng.random() < 0.35:
            b.transact(approve=rng.random() < 0.8)
        b.case["id"] = f"{pairing}#{seq}: {mutation.__name__}: {what}"
        yield b.done()
