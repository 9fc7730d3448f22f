"""The checkout part of the differential test's cases (generate.py writes them beside the x402 and MPP ones): for each
of the eight checkout pairings (ACP, ACK, AP2, UCP), the document, ATR, account, inputs, signer answers and presented
payments of its vector file's buyer rows, with the agreement URL named where the protocol names it, mutated. Stdlib
only; the same seed and count give the same bytes.

The fixtures: ACP's B2 session (the agreement URL in `metadata.legal_context`), its allowance values as inputs and the
agent's delegate_payment request answering the allowance (V4's); ACK's B2 body (the agreement URL in `legalContext`);
AP2's checkout JWT J written again with the agreement URL in its payload's `legalContext` (the signature is never
read), and the closed Checkout Mandate over it written from the file's templates; UCP's B2 checkouts with a
`legal_context_agreement` link, and the issuer's mandate M of the file. The mutations: a member of the document (for
AP2, of the JWT's payload, written again, or the JWT's text) removed or changed; the buyer's inputs; the account; the
signer's answer; the presented payment of a check; and transact, approved or not."""

import base64
import copy
import hashlib
import json
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors"

NOW = 1790000000
PAYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"  # Anvil #0
EVM_ACCOUNT = "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

# The checkout pairings the crate builds, in the order terms::built_ids() lists them.
PAIRINGS = [
    "acp/checkout/delegated",
    "acp/checkout/undelegated",
    "ap2/checkout-mandate",
    "ucp/booking/ap2-mandate",
    "ucp/booking/unsigned",
    "ucp/checkout/ap2-mandate",
    "ucp/checkout/unsigned",
    "ack/payment-request",
]
FILES = {
    "acp/checkout/delegated": "acp-checkout.json",
    "acp/checkout/undelegated": "acp-checkout.json",
    "ap2/checkout-mandate": "ap2-checkout-mandate.json",
    "ucp/booking/ap2-mandate": "ucp.json",
    "ucp/booking/unsigned": "ucp.json",
    "ucp/checkout/ap2-mandate": "ucp.json",
    "ucp/checkout/unsigned": "ucp.json",
    "ack/payment-request": "ack-payment-request.json",
}
# The request kind each signing pairing's signer is handed.
KINDS = {
    "acp/checkout/delegated": "acp-allowance",
    "ap2/checkout-mandate": "ap2-checkout-mandate",
    "ucp/booking/ap2-mandate": "ucp-checkout",
    "ucp/checkout/ap2-mandate": "ucp-checkout",
}
ACCOUNTS = [
    EVM_ACCOUNT, "eip155:8453:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "eip155:1:0xabc", "not-caip10", "",
    "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", "eip155::0x1",
]


def load(name):
    return json.loads((VECTORS / name).read_text())


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u_json(text):
    return b64u(text.encode())


def unb64u(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def row(f, name, pairing):
    return next(r for r in f["buyer"]["rows"] if r["name"] == name and r.get("pairing") == pairing)


class Base:
    """One pairing's fixture."""

    def __init__(self, pairing):
        self.pairing = pairing
        self.inputs = None
        self.answers = []
        self.presented = None


def ap2_mandate(fixed, jwt):
    """The closed Checkout Mandate over jwt, written from the file's templates: the mandate header, its payload with
    checkout_hash and the one disclosure's digest for jwt, the fixed signature, and the disclosure."""
    disclosure = b64u_json(fixed["disclosureTemplate"].replace("<J>", jwt))
    payload = json.loads(fixed["mandatePayload"])
    payload["checkout_hash"] = b64u(hashlib.sha256(jwt.encode()).digest())
    payload["_sd"] = [b64u(hashlib.sha256(disclosure.encode()).digest())]
    issuer = f"{b64u_json(fixed['mandateHeader'])}.{b64u_json(json.dumps(payload, separators=(',', ':')))}"
    return f"{issuer}.{fixed['signature']}~{disclosure}~"


def ap2_jwt(fixed, payload):
    body = b64u_json(json.dumps(payload, separators=(",", ":")))
    return f"{b64u_json(fixed['jwtHeader'])}.{body}.{fixed['signature']}"


def base_of(g, pairing):
    f = load(FILES[pairing])
    b = Base(pairing)
    b2 = row(f, "B2", pairing)["input"]
    b.account = b2["account"]
    b.link = f["fixed"]["L"]
    if pairing.startswith("acp/"):
        delegated = row(f, "B6", "acp/checkout/delegated")["input"]
        b.atr = bytes.fromhex(delegated["check"][0]["bytesHex"])
        b.doc = copy.deepcopy(b2["doc"])
        b.agreement = g.agreement_routes(g.sha(b.atr), b.link)
        b.doc["metadata"]["legal_context"]["legal_context_agreement_url"] = b.agreement["url"]
        if pairing == "acp/checkout/delegated":
            b.inputs = copy.deepcopy(b2["inputs"])
            b.answers = [{"allowance": f["V4"]["expectAllowance"], "payment_method": {"type": "card"}}]
            b.presented = delegated["presented"]
    elif pairing == "ack/payment-request":
        b.atr = b"abc"
        assert g.sha(b.atr) == f["fixed"]["H"]
        b.doc = copy.deepcopy(b2["doc"])
        b.agreement = g.agreement_routes(g.sha(b.atr), b.link)
        b.doc["legalContext"]["legalContextAgreementUrl"] = b.agreement["url"]
    elif pairing == "ap2/checkout-mandate":
        fixed = f["fixed"]
        b.atr = fixed["A"].encode()
        assert g.sha(b.atr) == fixed["H"]
        b.agreement = g.agreement_routes(g.sha(b.atr), b.link)
        payload = json.loads(fixed["V2Payload"])
        payload["legalContext"]["legalContextAgreementUrl"] = b.agreement["url"]
        b.payload = payload
        b.fixed = fixed
        b.doc = ap2_jwt(fixed, payload)
        b.answers = [ap2_mandate(fixed, b.doc)]
        b.presented = row(f, "B6", pairing)["input"]["presented"]
    else:
        b.atr = f["fixed"]["A"].encode()
        assert g.sha(b.atr) == f["fixed"]["H"]
        b.doc = copy.deepcopy(b2["doc"])
        b.agreement = g.agreement_routes(g.sha(b.atr), b.link)
        b.doc["links"].append({"type": "legal_context_agreement", "url": b.agreement["url"]})
        if pairing.endswith("ap2-mandate"):
            b.answers = [f["built"]["M"]]
            b.presented = row(f, "B6", pairing)["input"]["presented"]
    return b


class Builder:
    def __init__(self, g, base, seq):
        self.g = g
        self.base = base
        planted = base.atr[:-1] + bytes([base.atr[-1] ^ 1])
        a = base.agreement
        self.case = {
            "id": "", "seq": seq, "pairing": base.pairing, "now": NOW, "account": base.account,
            "doc": copy.deepcopy(base.doc),
            "routes": {
                base.link: {"unpaid": g.ok_reply(base.atr)},
                a["url"]: {
                    "unpaid": {"status": 402, "headers": [["PAYMENT-REQUIRED", g.b64(g.compact(a["required"]))]],
                               "body": {"hex": ""}},
                    "paid": {"status": 200, "headers": [["Content-Type", "application/json"]],
                             "body": {"hex": g.compact(a["receipt"]).encode().hex()}},
                },
            },
            "finish": [{"answers": copy.deepcopy(base.answers)}],
            "checks": [
                {"bytesHex": base.atr.hex(), "presented": "$signed"},
                {"bytesHex": planted.hex(), "presented": "$signed"},
            ],
        }
        if base.inputs is not None:
            self.case["inputs"] = copy.deepcopy(base.inputs)
        if base.presented is not None:
            self.case["checks"] += [{"bytesHex": base.atr.hex(), "presented": base.presented},
                                    {"bytesHex": planted.hex(), "presented": base.presented}]

    def transact(self, approve=True, answers=None):
        kind = KINDS.get(self.base.pairing)
        given = answers if answers is not None else self.case["finish"][0]["answers"]
        spec = {"account": self.case["account"], "key": None, "edit": "none", "erc7710": None, "approve": approve,
                "answers": {kind: given[0]} if kind and given else {},
                "agreementSigner": {"account": EVM_ACCOUNT, "key": PAYER_KEY}}
        self.case["transact"] = spec
        return self


# --- the mutations ----------------------------------------------------------------------------------------------------


def doc_member(rng, b):
    """A member of the document removed or changed (for AP2, of the checkout JWT's payload, the JWT written again)."""
    if b.base.pairing == "ap2/checkout-mandate":
        what, payload = b.g.random_mutation(rng, b.base.payload)
        b.case["doc"] = ap2_jwt(b.base.fixed, payload)
        return f"payload {what}"
    what, doc = b.g.random_mutation(rng, b.case["doc"])
    b.case["doc"] = doc
    return what


def doc_text(rng, b):
    """The document as a whole: another type, or (for AP2) the JWT's text changed."""
    if isinstance(b.case["doc"], str):
        new = rng.choice(b.g.string_variants(b.case["doc"]) + [b.case["doc"] + ".x", b.case["doc"].rsplit(".", 1)[0]])
    else:
        new = rng.choice(b.g.TYPE_VARIANTS + [[b.case["doc"]], json.dumps(b.case["doc"])])
    b.case["doc"] = new
    return f"doc = {b.g.compact(new)[:60]}"


def inputs(rng, b):
    """The buyer's inputs: one removed or changed, or none."""
    base = b.case.get("inputs") or {"max_amount": 19900, "currency": "usd", "merchant_id": "acct_123",
                                      "expires_at": "2026-09-21T14:23:20Z"}
    if rng.random() < 0.1:
        b.case.pop("inputs", None)
        return "no inputs"
    what, new = b.g.random_mutation(rng, base)
    b.case["inputs"] = new
    return what


def account(rng, b):
    new = rng.choice(ACCOUNTS)
    b.case["account"] = new
    return f"account = {new}"


def answer(rng, b):
    """The signer's answer changed (a member, its type, or its text), or none given."""
    answers = b.case["finish"][0]["answers"]
    if not answers or rng.random() < 0.1:
        new = rng.choice([[], [None], ["x"], [{}], [[]]])
        b.case["finish"][0]["answers"] = new
        return f"answers = {b.g.compact(new)[:60]}"
    first = answers[0]
    if isinstance(first, str):
        parts = first.split("~")
        new = rng.choice(b.g.string_variants(first)[:12] + ["~".join(parts[:-2]) + "~", "~".join(parts[:1]) + "~",
                                                              first + first, first.replace("~", "~~", 1)])
        what = "the mandate's text changed"
    else:
        what, new = b.g.random_mutation(rng, first)
    b.case["finish"][0]["answers"] = [new]
    return what


def presented(rng, b):
    """A check's presented payment changed."""
    if b.base.presented is None:
        return answer(rng, b)
    base = copy.deepcopy(b.base.presented)
    if isinstance(base.get("checkout_mandate"), str) and rng.random() < 0.5:
        m = base["checkout_mandate"]
        base["checkout_mandate"] = rng.choice(b.g.string_variants(m)[:12] + [m.replace("~", "~~", 1), m + m])
        what = "presented mandate text"
    else:
        what, base = b.g.random_mutation(rng, base)
    b.case["checks"] = [{"bytesHex": b.base.atr.hex(), "presented": base}]
    return f"presented {what}"


def transact_only(rng, b):
    b.transact(approve=rng.random() < 0.8)
    return "transact"


MUTATIONS = [(doc_member, 40), (doc_text, 6), (inputs, 12), (account, 8), (answer, 16), (presented, 10),
             (transact_only, 8)]


def cases(g, seed, pairing, count, seq):
    """count cases for the pairing, from seq + 1 on: the fixture first, then mutations drawn by weight."""
    base = base_of(g, pairing)
    rng = random.Random(f"{seed}:{pairing}")
    for i in range(count):
        seq += 1
        b = Builder(g, base, seq)
        if i == 0:
            b.transact()
            b.case["id"] = f"{pairing}#{seq}: the fixture as it is"
            yield b.case
            continue
        mutation = rng.choices([m for m, _ in MUTATIONS], weights=[w for _, w in MUTATIONS])[0]
        what = mutation(rng, b)
        if "transact" not in b.case and rng.random() < 0.35:
            b.transact(approve=rng.random() < 0.8)
        b.case["id"] = f"{pairing}#{seq}: {mutation.__name__}: {what}"
        yield b.case
