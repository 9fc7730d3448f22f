"""The card part of the differential test's cases (generate.py writes them beside the x402 and MPP ones): for each of
the four card pairings, card.json's documents (C2's shown JSON, the merchant's checkout_jwt), the signer's answers that
pay them (C2's TAP signature fields, L2i, L1/L2a/L3b) and the file's other payments, mutated. Stdlib only; the same
seed and count give the same bytes.

The mutations: the legal context (hash, link, type, the agreement URL in either spelling), the document's shape and
the checkout_jwt's segments; the account; TAP's Signature-Input (structured-field syntax, the lcp-hash component, the
tag), Signature and lcp-hash lines; the Verifiable Intent layers (disclosures removed, repeated, changed, nested too
deep; headers with alg none or another typ; segments not base64url; the layers swapped); presented payments from the
file's other rows; and transact, with the agreement exchange where the document names an agreement URL."""

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

# The card pairings the crate builds, in the order terms::built_ids() lists them.
PAIRINGS = [
    "card/mastercard-vi/autonomous",
    "card/mastercard-vi/immediate",
    "card/seller-reference",
    "card/visa-tap",
]
VI = {"card/mastercard-vi/autonomous", "card/mastercard-vi/immediate"}
KIND = {"card/visa-tap": "tap-field", "card/mastercard-vi/immediate": "vi-checkout-mandate",
        "card/mastercard-vi/autonomous": "vi-checkout-mandate"}


def load(name):
    return json.loads((VECTORS / name).read_text())


def sha(data):
    return "0x" + hashlib.sha256(data).hexdigest()


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64u(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


FILE = load("card.json")
H = FILE["fixed"]["H"]
E = FILE["fixed"]["E"]
VIF = FILE["vi"]
C2 = FILE["C2"]
SHOWN = C2["build"]["doc"]
LINK = SHOWN["legalContext"]["legalContextUrl"]
TAP_ANSWER = {"signatureInput": C2["request"]["signatureInput"], "signature": C2["request"]["signature"],
              "lcpHash": C2["request"]["lcpHash"]}
ANSWERS = {
    "card/visa-tap": TAP_ANSWER,
    "card/mastercard-vi/immediate": {"l2": VIF["L2i"]},
    "card/mastercard-vi/autonomous": {"l1": VIF["L1"], "l2": VIF["L2a"], "l3b": VIF["L3b"]},
}
# Every payment the file holds, for checks of one pairing's bound over another's payment too.
PRESENTED = [
    TAP_ANSWER, {**TAP_ANSWER, "lcpHash": C2["upperCaseField"]["lcpHash"]},
    {**TAP_ANSWER, "lcpHash": C2["repeatedField"]["lcpHash"]},
    {k: FILE["C3"][k] for k in ("signatureInput", "signature", "lcpHash")},
    *({k: r[k] for k in ("signatureInput", "signature", "lcpHash")} for r in FILE["C9"]["rows"]),
    FILE["C6"]["bound"]["presented"], FILE["C6"]["plant"]["presented"],
    FILE["C7"]["bound"]["presented"], FILE["C7"]["flippedSignature"]["presented"],
    FILE["C7"]["withoutDco"]["presented"], *FILE["C8"]["inputs"],
]


def agreement_routes(h, atr_link):
    """buyer.json's agreement (its required and receipt), rewritten from hash(A) to h, as generate.py writes it."""
    buyer = load("buyer.json")["fixed"]
    old = sha(bytes.fromhex(buyer["A"]))
    agreement = json.loads(json.dumps(buyer["agreement"]).replace(old[2:], h[2:]))
    agreement["required"]["extensions"]["legalContext"]["info"]["legalContextUrl"] = atr_link
    return agreement


AGREEMENT = agreement_routes(H, LINK)


def checkout_jwt(payload, header=None):
    """A checkout_jwt of the payload (compact JSON) under CJ's header (or the one given), with CJ's signature."""
    h, _, s = VIF["CJ"].split(".")
    head = h if header is None else b64u(compact(header).encode())
    return f"{head}.{b64u(compact(payload).encode())}.{s}"


CJ_PAYLOAD = json.loads(unb64u(VIF["CJ"].split(".")[1]))


class Builder:
    def __init__(self, pairing, seq, rng):
        self.pairing = pairing
        self.rng = rng
        self.lc = copy.deepcopy(SHOWN["legalContext"] if pairing not in VI else CJ_PAYLOAD["legalContext"])
        self.raw_doc = None  # a document given whole, not written from the legal context
        self.case = {
            "id": "",
            "seq": seq,
            "pairing": pairing,
            "now": NOW,
            "account": EVM_ACCOUNT,
            "routes": {LINK: {"unpaid": {"status": 200, "headers": [], "body": {"hex": b"abc".hex()}}}},
            "finish": [{"answers": [ANSWERS[pairing]]}] if pairing in ANSWERS else [{"answers": []}],
            "checks": [
                {"bytesHex": b"abc".hex(), "presented": "$signed"},
                {"bytesHex": b"abd".hex(), "presented": "$signed"},
            ],
        }

    def with_agreement(self, spelling="legalContextAgreementUrl", url=None):
        self.lc[spelling] = AGREEMENT["url"] if url is None else url
        self.case["routes"][AGREEMENT["url"]] = {
            "unpaid": {"status": 402, "headers": [["PAYMENT-REQUIRED", base64.b64encode(compact(AGREEMENT["required"]).encode()).decode()]],
                       "body": {"hex": ""}},
            "paid": {"status": 200, "headers": [["Content-Type", "application/json"]],
                     "body": {"hex": compact(AGREEMENT["receipt"]).encode().hex()}},
        }
        return self

    def transact(self, approve=True, answer=None):
        answers = {}
        if self.pairing in KIND:
            answers[KIND[self.pairing]] = ANSWERS[self.pairing] if answer is None else answer
        self.case["transact"] = {"account": self.case["account"], "key": None, "edit": "none", "erc7710": None,
                                 "approve": approve, "answers": answers,
                                 "agreementSigner": {"account": EVM_ACCOUNT, "key": PAYER_KEY}}
        return self

    def done(self):
        if self.raw_doc is not None:
            self.case["doc"] = self.raw_doc
        elif self.pairing in VI:
            payload = dict(CJ_PAYLOAD, legalContext=self.lc)
            self.case["doc"] = VIF["CJ"] if payload == CJ_PAYLOAD else checkout_jwt(payload)
        else:
            self.case["doc"] = {"legalContext": self.lc}
        return self.case


# --- the mutations --------------------------------------------------------------------------------------------------

LINKS = ["http://atr.seller.example/x", "HTTPS://atr.seller.example/x", "https://", "https://user@atr.seller.example/x",
         "https://atr.seller.example/" + "x" * 2100, "", 5, None, "ftp://a.example/x", "https://[::1]/x",
         "https://atr.seller.example:65536/x", "https://atr.seller.example/a b"]
HASHES = [E, H.upper(), "0X" + H[2:], H[2:], H[:-1], H + "0", 5, None, "lcp:sha256:" + H, " " + H]


def legal_context(rng, b):
    what = rng.choice(["value", "link", "type", "snake", "both", "agreement", "drop", "not-object", "extra"])
    if what == "value":
        b.lc["value"] = rng.choice(HASHES)
    elif what == "link":
        b.lc["legalContextUrl"] = rng.choice(LINKS)
    elif what == "type":
        b.lc["type"] = rng.choice(["SHA256", "sha-256", "", None, 1])
    elif what == "snake":
        b.lc["legal_context_url"] = b.lc.pop("legalContextUrl")
    elif what == "both":
        b.lc["legal_context_url"] = rng.choice([LINK, LINK + "/other"])
    elif what == "agreement":
        spelling = rng.choice(["legalContextAgreementUrl", "legal_context_agreement_url"])
        b.with_agreement(spelling, rng.choice([None, None, "http://api.seller.example/a", "", 5,
                                               "https://api.seller.example/" + "x" * 2100]))
        if rng.random() < 0.3:
            b.lc["legalContextAgreementUrl" if spelling != "legalContextAgreementUrl" else "legal_context_agreement_url"] = (
                rng.choice([AGREEMENT["url"], AGREEMENT["url"] + "/x", None]))
        b.transact(approve=rng.random() < 0.8)
    elif what == "drop":
        b.lc.pop(rng.choice(list(b.lc)))
    elif what == "not-object":
        b.lc = rng.choice([None, [], "lcp:sha256:" + H, 1])
    else:
        b.lc["extra"] = {"nested": [1, 2]}
    return what


def document(rng, b):
    what = rng.choice(["not-object", "no-legal-context", "segments", "padding", "header", "payload", "long", "deep"])
    cj = VIF["CJ"]
    h, p, s = cj.split(".")
    if what == "not-object":
        b.raw_doc = rng.choice([None, 1, [], "x", [SHOWN], cj if b.pairing not in VI else SHOWN])
    elif what == "no-legal-context":
        b.raw_doc = {"legal": SHOWN["legalContext"]} if b.pairing not in VI else checkout_jwt({"iss": "x"})
    elif what == "segments":
        b.raw_doc = rng.choice([f"{h}.{p}", f"{cj}.{s}", f"{h}..{s}", f"{h}.{p}.", p, ""])
    elif what == "padding":
        b.raw_doc = rng.choice([cj + "=", f"{h}.{p}=.{s}", f"{h}.{p}.{s[:-1]}+", f"{h}.{p[:-1]}.{s}", cj + " "])
    elif what == "header":
        b.raw_doc = checkout_jwt(CJ_PAYLOAD, rng.choice([{"alg": "none"}, {}, {"alg": "HS256", "typ": "JWT"}]))
    elif what == "payload":
        body = b64u(rng.choice([b"[]", b"1", b"{", bytes([0xFF]), b"null"]))
        b.raw_doc = f"{h}.{body}.{s}"
    elif what == "long":
        b.raw_doc = f"{h}.{p}.{'A' * rng.choice([16000, 16384, 17000])}"
    else:
        deep = rng.choice([63, 64, 65])
        payload = compact(dict(CJ_PAYLOAD, x=json.loads("[" * deep + "]" * deep)))
        b.raw_doc = f"{h}.{b64u(payload.encode())}.{s}"
    return what


def account(rng, b):
    # Strings only, as generate.py's and mpp_mutations.py's pools: the crate's signer names its account as a string.
    b.case["account"] = rng.choice(["not-an-account", "", "eip155:84532", "solana:abc:xyz", "EIP155:84532:0xabc",
                                    "eip155:1:0x0000000000000000000000000000000000000000", " " + EVM_ACCOUNT])
    return str(b.case["account"])


SI = C2["request"]["signatureInput"]
SIG = C2["request"]["signature"]
SI_EDITS = [
    ('"lcp-hash"', ""), ('"lcp-hash"', '"lcp-hash";sf'), ('"lcp-hash"', '"LCP-HASH"'), ('"lcp-hash"', "lcp-hash"),
    ('tag="agent-payer-auth"', "tag=agent-payer-auth"), ('tag="agent-payer-auth"', 'tag="agent-payer-auth";x=1.5'),
    ("created=1790000000", "created=1.5"), ("created=1790000000", "created=@1790000000"),
    ("created=1790000000", 'created=%"x"'), ("created=1790000000", "created=:YWJj:"), ("sig2=", "Sig2="),
    (", sig2", ",sig2"), (", sig2", ",\tsig2"), (", sig2", " , sig2"), ('"@path"', '"@path" "@path"'),
    ('tag="agent-browser-auth"', 'tag="agent-payer-auth"'), ("sig2=(", "sig2=("), ('nonce="bm9uY2UtMQ"', 'nonce="a\\"b"'),
]


def tap_answer(rng, b):
    a = copy.deepcopy(TAP_ANSWER)
    what = rng.choice(["si-edit", "si-cut", "si-char", "si-many", "sig", "lines", "member", "shape"])
    if what == "si-edit":
        old, new = rng.choice(SI_EDITS)
        a["signatureInput"] = SI.replace(old, new)
    elif what == "si-cut":
        a["signatureInput"] = SI[: rng.randrange(len(SI))]
    elif what == "si-char":
        i = rng.randrange(len(SI))
        a["signatureInput"] = SI[:i] + rng.choice(["", "(", ")", '"', ";", "=", ",", " ", "\t", "é", "\\"]) + SI[i + 1:]
    elif what == "si-many":
        n = rng.choice([15, 16, 17])
        a["signatureInput"] = ", ".join(f'k{i}=("a")' for i in range(n - 1)) + ", " + SI.split(", ")[1]
        if rng.random() < 0.5:
            a["signatureInput"] = SI.replace('"lcp-hash"', " ".join(['"x"'] * rng.choice([30, 31, 32])) + ' "lcp-hash"')
    elif what == "sig":
        a["signature"] = rng.choice(["sig2=:a:", 'sig2="x"', "sig2=:YWJj:, sig1=?1", "sig1=:YWJj:", "", "sig2=:a",
                                     SIG.replace("sig2", "sig3"), SIG + ", " * 1, "sig2=:YWJj:;p=1", "sig2=(:YWJj:)"])
    elif what == "lines":
        a["lcpHash"] = rng.choice([[], [H, H], [H.upper()], [" \t" + H + " "], [1], H, None, [E], [H[:-1]], ["x" * 300],
                                   [H + "\n"], ["0X" + H[2:]]])
    elif what == "member":
        del a[rng.choice(list(a))]
    else:
        a = rng.choice([None, [], "x", {"signatureInput": 1, "signature": SIG, "lcpHash": [H]}, {**a, "signature": ""}])
    b.case["finish"] = [{"answers": [a]}]
    if rng.random() < 0.4:
        b.with_agreement().transact(answer=a)
    return what


def layer_edit(rng, layer):
    parts = layer.split("~")
    what = rng.choice(["drop", "repeat", "change", "deep", "swap", "header", "segment", "tail", "char", "many"])
    jws = parts[0].split(".")
    if what == "drop" and len(parts) > 2:
        del parts[rng.randrange(1, len(parts) - 1)]
    elif what == "repeat" and len(parts) > 2:
        parts.insert(1, parts[1])
    elif what == "change" and len(parts) > 2:
        d = json.loads(unb64u(parts[1]))
        d[0] = d[0] + "x"
        parts[1] = b64u(compact(d).encode())
    elif what == "deep":
        n = rng.choice([62, 63, 64, 70])
        parts.insert(1, b64u(("[\"s\"," + "[" * n + "]" * n + "]").encode()))
    elif what == "swap" and len(parts) > 3:
        parts[1], parts[2] = parts[2], parts[1]
    elif what == "header":
        header = json.loads(unb64u(jws[0]))
        header.update(rng.choice([{"alg": "none"}, {"alg": "ES384"}, {"typ": "JWT"}, {"typ": "kb-sd-jwt+kb"}, {"kid": 1}]))
        if rng.random() < 0.3:
            header.pop("kid", None)
        parts[0] = ".".join([b64u(compact(header).encode())] + jws[1:])
    elif what == "segment":
        parts[0] = rng.choice([".".join(jws[:2]), parts[0] + "=", parts[0] + ".x", jws[0] + ".." + jws[2]])
    elif what == "tail":
        parts[-1] = rng.choice(["x", "a.b.c", "~"])
    elif what == "char":
        i = rng.randrange(len(parts[0]))
        parts[0] = parts[0][:i] + rng.choice(["A", "-", "_", "+", "/"]) + parts[0][i + 1:]
    else:
        parts = [parts[0]] + [parts[1]] * rng.choice([31, 32, 33]) + [""] if len(parts) > 2 else parts
    return "~".join(parts), what


def vi_answer(rng, b):
    a = copy.deepcopy(ANSWERS.get(b.pairing, {"l2": VIF["L2i"]}))
    keys = [k for k in ("l1", "l2", "l3b") if k in a]
    key = rng.choice(keys)
    what = rng.choice(["edit", "edit", "edit", "swap", "other", "drop", "shape"])
    if what == "edit":
        a[key], how = layer_edit(rng, a[key])
        what = f"{key} {how}"
    elif what == "swap" and len(keys) > 1:
        x, y = rng.sample(keys, 2)
        a[x], a[y] = a[y], a[x]
    elif what == "other":
        a[key] = rng.choice([VIF["L1"], VIF["L2i"], VIF["L2a"], VIF["L3b"], FILE["C6"]["plant"]["presented"]["l2"]])
    elif what == "drop":
        del a[key]
    else:
        a = rng.choice([None, "x", [], {k: 1 for k in keys}, {k: "" for k in keys}])
    b.case["finish"] = [{"answers": [a]}]
    if rng.random() < 0.4:
        b.with_agreement().transact(answer=a)
    return what


def answers(rng, b):
    if b.pairing == "card/visa-tap":
        return tap_answer(rng, b)
    if b.pairing in VI:
        return vi_answer(rng, b)
    b.case["finish"] = [{"answers": [rng.choice([TAP_ANSWER, {"l2": VIF["L2i"]}, None])]}]
    return "an answer to nothing"


def checks(rng, b):
    b.case["checks"] = [{"bytesHex": rng.choice([b"abc", b"abd", b""]).hex(), "presented": rng.choice(PRESENTED)}
                        for _ in range(3)]
    return "the file's payments"


def transact_only(rng, b):
    if rng.random() < 0.7:
        b.with_agreement()
    b.transact(approve=rng.random() < 0.8)
    if rng.random() < 0.3:
        b.case["routes"][LINK]["unpaid"]["body"]["hex"] = b"abd".hex()
    return "transact"


MUTATIONS = [(legal_context, 12), (document, 8), (account, 3), (answers, 20), (checks, 6), (transact_only, 6)]


def cases(seed, pairing, count, seq):
    """count cases for the pairing, from seq + 1 on: the fixture first (with its agreement exchange), then mutations
    drawn by weight."""
    rng = random.Random(f"{seed}:{pairing}")
    for i in range(count):
        seq += 1
        b = Builder(pairing, seq, rng)
        if i == 0:
            b.with_agreement().transact()
            b.case["id"] = f"{pairing}#{seq}: the fixture as it is"
            yield b.done()
            continue
        # Most offers name the agreement URL, so confirm goes on to the build and finish reads the answers.
        if rng.random() < 0.85:
            b.with_agreement()
        mutation = rng.choices([m for m, _ in MUTATIONS], weights=[w for _, w in MUTATIONS])[0]
        what = mutation(rng, b)
        if "transact" not in b.case and rng.random() < 0.25:
            b.transact(approve=rng.random() < 0.8)
        b.case["id"] = f"{pairing}#{seq}: {mutation.__name__}: {what}"
        yield b.done()
