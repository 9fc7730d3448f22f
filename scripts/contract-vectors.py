#!/usr/bin/env python3
"""Writes tests/vectors/contract/*.json: the signed agent contract's six documents (offer card, quote, mandate
presentation, payment challenge, receipt, attestation) signed with fixed test keys, each row with the verdict a reader
must give it. tests/contract_vectors.rs and tests/contract_props.rs drive every row from these files.

This is an independent signer: it does not call the crate. Signatures are Ed25519 (the `cryptography` package) over
the RFC 8785 form (the `rfc8785` package) of the document without its `signature` member, written `ed25519:` and the
unpadded base64url of the 64 bytes. Each key's 32-byte seed is the SHA-256 of the text `terms contract test key
<kid>`, and Ed25519 is deterministic, so every run writes the same bytes. Versions pinned in
scripts/contract-vectors.requirements.txt:

    python3 -m venv /tmp/cv && /tmp/cv/bin/pip install -r scripts/contract-vectors.requirements.txt
    /tmp/cv/bin/python scripts/contract-vectors.py            # (re)write the files
    /tmp/cv/bin/python scripts/contract-vectors.py --check    # exit 1 if a file on disk differs (CI)

Each row: `name`, `kind` (which document), `keys` (the key list of keys.json that verifies it), `text` (the document's
exact JSON text, a string, so repeated members and exact bytes survive), `expect` (`ok` or the exact
`contract/<reason>` code of the first refusal, from reading or from verifying), where the signature is exactly the
one made over the text's object `signer` (the kid whose seed made it; it may differ from the document's `kid`), where
the present time matters `clock`, and for a presentation that reads `links`: for each link of its chain, the key list
that verifies it, its `expect` and its `signer`."""

import base64
import copy
import hashlib
import json
import pathlib
import sys

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "vectors" / "contract"

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

# When the valid documents are signed, and the dates of every list's two keys: `<list>-2025` retired at the start of
# 2026, `<list>-2026` valid from then on. `<list>-9` has a seed but is in no list.
NOW = "2026-03-01T12:00:00Z"
RETIRED_FROM = "2025-01-01T00:00:00Z"
CHANGE = "2026-01-01T00:00:00Z"
WHILE_RETIRED_VALID = "2025-06-01T08:30:00Z"
JUST_BEFORE_CHANGE = "2025-12-31T23:59:59Z"
LISTS = ["seller", "verifier", "principal", "agent-a", "agent-b"]


def b64u(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def seed_label(kid):
    return f"terms contract test key {kid}"


def seed(kid):
    return hashlib.sha256(seed_label(kid).encode()).digest()


def private(kid):
    return Ed25519PrivateKey.from_private_bytes(seed(kid))


def public(kid):
    return b64u(private(kid).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))


def h(text):
    """A digest as the contract writes one: 0x and the SHA-256 in hex."""
    return "0x" + hashlib.sha256(text.encode()).hexdigest()


def compact(doc):
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def pretty(doc):
    return json.dumps(doc, ensure_ascii=False, indent=2)


def signature_of(obj, kid):
    unsigned = {k: v for k, v in obj.items() if k != "signature"}
    return "ed25519:" + b64u(private(kid).sign(rfc8785.dumps(unsigned)))


def signed(obj, kid, signer=None):
    """The object with `kid` set and signed by `signer`'s seed (the kid's own by default), `signature` last."""
    out = {k: v for k, v in obj.items() if k != "signature"}
    out["kid"] = kid
    out["signature"] = signature_of(out, signer or kid)
    return out


# ---- the six documents, unsigned, each with its signing time `at` ----

TERMS = h("Terms of service of api.seller.example, version 3.")


def offer_card(at):
    return {
        "contract": "1.0",
        "seller": {"host": "api.seller.example", "verification": "domain"},
        "rates": [
            {"name": "translate", "price": "0.002", "currency": "USD", "unit": "1k-tokens", "miss": "free"},
            {"name": "summarize", "price": "0.01", "currency": "USD", "unit": "call", "miss": "full"},
        ],
        "quote": "https://api.seller.example/quote",
        "terms": {"digest": TERMS, "refund": "full refund within 14 days — café rules", "license": "CC-BY-4.0"},
        "pay": [
            {"kind": "x402", "network": "eip155:8453", "asset": "USDC", "testnet": False},
            {"kind": "checkout", "url": "https://api.seller.example/checkout", "packs": [100, 1000]},
        ],
        "proof": {
            "by": "verifier.example",
            "window": {"from": "2026-02-01T00:00:00Z", "until": "2026-03-01T00:00:00Z"},
            "calls": 1200,
            "success": 0.987,
            "signed": "https://verifier.example/attestations/api.seller.example",
        },
        "keys": "https://api.seller.example/.well-known/receipt-keys",
        "issued": at,
        "kid": "",
    }


def quote(at):
    return {
        "contract": "1.0",
        "id": "q_01J8Z3",
        "seller": "api.seller.example",
        "verb": "translate",
        "price": "0.002",
        "currency": "USD",
        "input": h("Bonjour, le monde."),
        "terms": TERMS,
        "issued": at,
        "expires": "2026-03-01T12:05:00Z",
        "kid": "",
    }


def link(who, agent, mark, verbs, per_month, per_task, until, issued):
    return {
        "who": who,
        "for": "person:alice@example.com",
        "agent": agent,
        "mark": mark,
        "sellers": ["api.seller.example"],
        "verbs": verbs,
        "per_month": per_month,
        "per_task": per_task,
        "currency": "USD",
        "until": until,
        "issued": issued,
        "kid": "",
    }


def chain(tamper=False, first_signer="principal-2026"):
    """The person's link (signed by the principal's key) and the agent's narrower one (signed by agent A's key)."""
    first = link("person:alice@example.com", "agent:a.example", "intent", ["translate", "summarize"], "100", "5",
                 "2026-12-31T00:00:00Z", "2026-02-01T00:00:00Z")
    second = link("agent:a.example", "agent:b.example", "purchase", ["translate"], "20", "1",
                  "2026-06-30T00:00:00Z", "2026-02-15T09:00:00Z")
    first = signed(first, first_signer)
    second = signed(second, "agent-a-2026")
    if tamper:
        second["per_task"] = "50"
    return [first, second]


CHAIN_OK = [{"keys": "principal", "expect": "ok", "signer": "principal-2026"},
            {"keys": "agent-a", "expect": "ok", "signer": "agent-a-2026"}]


def presentation(at, links=None):
    return {
        "contract": "1.0",
        "chain": links if links is not None else chain(),
        "present": at,
        "status": "https://status.example/mandates/m_01",
        "expires": "2026-03-01T12:05:00Z",
        "kid": "",
    }


def challenge(at):
    return {
        "contract": "1.0",
        "type": "https://terms.example/problems/payment-required",
        "title": "Paiement requis",
        "status": 402,
        "offers": [
            {
                "kind": "challenge",
                "id": "o_01",
                "price": "0.002",
                "currency": "USD",
                "terms": TERMS,
                "pay": [{"kind": "x402", "network": "eip155:8453", "asset": "USDC", "testnet": False}],
                "expires": "2026-03-01T12:05:00Z",
            },
            {"kind": "checkout", "pack": "1000 calls", "url": "https://api.seller.example/checkout/pack-1000"},
        ],
        "issued": at,
        "kid": "",
    }


def receipt(at):
    return {
        "contract": "1.0",
        "id": "r_01J8Z4",
        "seller": "api.seller.example",
        "verb": "translate",
        "version": "2.1.0",
        "price": "0.002",
        "currency": "USD",
        "paid": "0.002",
        "terms": TERMS,
        "mandate": h("presentation m_01"),
        "output": h("Hello, world."),
        "definition": h("verb translate 2.1.0"),
        "kind": "call",
        "grade": "pass",
        "upstream": ["https://upstream.example/receipts/r_77"],
        "time": at,
        "kid": "",
    }


def attestation(at):
    return {
        "contract": "1.0",
        "verifier": "verifier.example",
        "subject": "api.seller.example",
        "checked": ["receipts", "outputs", "terms"],
        "window": {"from": "2026-02-01T00:00:00Z", "until": "2026-03-01T00:00:00Z"},
        "calls": 1200,
        "results": [
            {"verb": "translate", "calls": 1000, "success": 0.99},
            {"verb": "summarize", "calls": 200, "success": 0.922},
        ],
        "issued": at,
        "kid": "",
    }


# Per kind: its file, how to build it, its key list, its signing-time member, the text of a nested object to repeat a
# member in (a quote and a receipt have none of their own: an unknown `meta` object is signed in), a member changed
# after signing and its new value.
KINDS = [
    ("offer-card", offer_card, "seller", "issued", ("seller", "host", "evil.example"), ("quote", "https://evil.example/q")),
    ("quote", quote, "seller", "issued", ("meta", "region", "us"), ("price", "0.001")),
    ("presentation", presentation, "agent-b", "present", None, ("status", "https://evil.example/status")),
    ("challenge", challenge, "seller", "issued", None, ("status", 200)),
    ("receipt", receipt, "seller", "time", ("meta", "region", "us"), ("paid", "0")),
    ("attestation", attestation, "verifier", "issued", ("window", "from", "2020-01-01T00:00:00Z"), ("calls", 12000)),
]


def nested_repeat(kind, doc):
    """The compact text of `doc` with a member of a nested object written twice (the second value differs)."""
    text = compact(doc)
    if kind == "presentation":
        anchor, extra = '"chain":[{', '"who":"person:mallory@example.com",'
    elif kind == "challenge":
        anchor, extra = '"offers":[{', '"kind":"checkout",'
    else:
        obj, member, value = next(k for k in KINDS if k[0] == kind)[4]
        anchor, extra = f'"{obj}":{{', f"{json.dumps(member)}:{json.dumps(value)},"
    assert text.count(anchor) == 1, (kind, anchor)
    return text.replace(anchor, anchor + extra)


def with_meta(doc):
    out = {k: v for k, v in doc.items() if k not in ("kid", "signature")}
    out["meta"] = {"region": "eu"}
    out["kid"] = doc["kid"]
    return out


def unknown_members(doc, kind):
    """The document with members the contract does not name, at the top and inside a nested object where the kind
    has one: names whose RFC 8785 order (UTF-16 code units) differs from their code points' order, numbers RFC 8785
    writes in exponent form, a null, booleans and nested lists."""
    out = {k: copy.deepcopy(v) for k, v in doc.items() if k not in ("kid", "signature")}
    out["x-note"] = "signé à Zürich ✓"
    out["\U0001F600"] = 1
    out["\ufb01"] = 2
    out["é"] = [True, None, {"n": 1e21, "m": 1e-7, "k": -12, "z": 9007199254740991}]
    out["x-empty"] = {}
    nested = {"offer-card": ("seller",), "presentation": ("chain", 0), "challenge": ("offers", 0),
              "attestation": ("window",)}.get(kind)
    if nested:
        target = out
        for step in nested:
            target = target[step]
        target["x-tier"] = {"level": 2, "since": "2024"}
    if kind == "presentation":
        # The link is a signed object of its own: the member is there when its principal signs it.
        out["chain"][0] = signed(out["chain"][0], out["chain"][0]["kid"])
    out["kid"] = doc["kid"]
    return out


def signature_variants(sig):
    """Signature texts that are not `ed25519:` and the unpadded base64url of 64 bytes, by row name."""
    raw = base64.urlsafe_b64decode(sig[len("ed25519:"):] + "==")
    last = sig[-1]
    non_canonical = ALPHABET[ALPHABET.index(last) | 0b0101]
    assert non_canonical != last and ALPHABET.index(last) & 0b1111 == 0
    return [
        ("signature-prefix-uppercase", "Ed25519:" + sig[len("ed25519:"):]),
        ("signature-prefix-missing", sig[len("ed25519:"):]),
        ("signature-prefix-other", "ed448:" + sig[len("ed25519:"):]),
        ("signature-empty", "ed25519:"),
        ("signature-not-base64url", "ed25519:" + "+" + sig[len("ed25519:") + 1:]),
        ("signature-padded", sig + "=="),
        ("signature-63-bytes", "ed25519:" + b64u(raw[:63])),
        ("signature-65-bytes", "ed25519:" + b64u(raw + b"\x00")),
        ("signature-trailing-bits", sig[:-1] + non_canonical),
        ("signature-hex", "ed25519:" + raw.hex()),
    ]


def rows_for(kind, build, keys, change):
    prefix = keys
    current, retired, unlisted = f"{prefix}-2026", f"{prefix}-2025", f"{prefix}-9"
    rows = []

    def row(name, text, expect, signer=None, clock=None, links=None):
        r = {"name": f"{kind}/{name}", "kind": kind, "keys": keys, "text": text, "expect": expect}
        if signer:
            r["signer"] = signer
        if clock:
            r["clock"] = clock
        if links is not None:
            r["links"] = links
        rows.append(r)

    chain_ok = CHAIN_OK if kind == "presentation" else None
    valid = signed(build(NOW), current)
    row("valid", pretty(valid), "ok", current, links=chain_ok)
    row("valid-compact", compact(valid), "ok", current, links=chain_ok)
    row("version-minor", compact(signed({**build(NOW), "contract": "1.7"}, current)), "ok", current, links=chain_ok)
    row("version-major-alone", compact(signed({**build(NOW), "contract": "1"}, current)), "ok", current, links=chain_ok)
    row("retired-key-while-valid", compact(signed(build(WHILE_RETIRED_VALID), retired)), "ok", retired, clock=NOW,
        links=chain_ok)
    row("key-at-from", compact(signed(build(CHANGE), current)), "ok", current, links=chain_ok)
    row("unknown-members-signed", compact(signed(unknown_members(valid, kind), current)), "ok", current,
        links=chain_ok)

    row("retired-key-after-until", compact(signed(build(NOW), retired)), "contract/key-not-valid", retired, clock=NOW)
    row("retired-key-at-until", compact(signed(build(CHANGE), retired)), "contract/key-not-valid", retired)
    row("key-before-from", compact(signed(build(JUST_BEFORE_CHANGE), current)), "contract/key-not-valid", current)
    row("key-before-from-by-a-fraction", compact(signed(build("2025-12-31T23:59:59.999Z"), current)),
        "contract/key-not-valid", current)
    row("kid-unlisted", compact(signed(build(NOW), unlisted)), "contract/key-unknown", unlisted)
    row("signed-by-another-listed-key", compact(signed(build(NOW), current, signer=retired)),
        "contract/signature-invalid", retired)
    row("time-malformed", compact(signed(build("2026-03-01 12:00:00Z"), current)), "contract/time-malformed", current)

    for name, sig in signature_variants(valid["signature"]):
        row(name, compact({**valid, "signature": sig}), "contract/signature-malformed")

    added = {k: v for k, v in valid.items() if k != "signature"}
    added["refund"] = "none"
    added["signature"] = valid["signature"]
    row("member-added-after-signing", compact(added), "contract/signature-invalid")
    member, value = change
    row("member-changed-after-signing", compact({**valid, member: value}), "contract/signature-invalid")
    deep = copy.deepcopy(valid)
    deep_changes = {
        "offer-card": lambda d: d["rates"][1].update(price="0.001"),
        "quote": lambda d: d.update(currency="usd"),
        "presentation": lambda d: d["chain"][0]["verbs"].append("delete"),
        "challenge": lambda d: d["offers"][0]["pay"][0].update(testnet=True),
        "receipt": lambda d: d["upstream"].append("https://upstream.example/receipts/r_78"),
        "attestation": lambda d: d["results"][1].update(success=0.923),
    }
    deep_changes[kind](deep)
    row("nested-member-changed-after-signing", compact(deep), "contract/signature-invalid")
    row("signature-moved-first", compact({"signature": valid["signature"], **valid}), "ok", current, links=chain_ok)

    text = compact(valid)
    repeated = text.replace("{", '{"kid":' + json.dumps(unlisted) + ",", 1)
    row("duplicate-member-top-level", repeated, "contract/duplicate-member")
    row("duplicate-member-escaped-name", text.replace("{", '{"\\u006bid":' + json.dumps(current) + ",", 1),
        "contract/duplicate-member")
    row("duplicate-member-signature", text[:-1] + ',"signature":' + json.dumps(valid["signature"]) + "}",
        "contract/duplicate-member")
    base = signed(with_meta(valid), current) if kind in ("quote", "receipt") else valid
    row("duplicate-member-nested", nested_repeat(kind, base), "contract/duplicate-member")

    row("version-2.0", compact(signed({**build(NOW), "contract": "2.0"}, current)), "contract/version-unsupported")
    row("version-missing", compact(signed({k: v for k, v in build(NOW).items() if k != "contract"}, current)),
        "contract/version-unsupported")
    row("version-number", compact(signed({**build(NOW), "contract": 1.0}, current)), "contract/version-unsupported")
    row("version-1.x", compact(signed({**build(NOW), "contract": "1.x"}, current)), "contract/version-unsupported")

    if kind == "attestation":
        row("signed-by-the-seller", compact(signed(build(NOW), "seller-2026")), "contract/key-unknown", "seller-2026")
    if kind == "presentation":
        row("link-tampered", pretty(signed(presentation(NOW, chain(tamper=True)), current)), "ok", current,
            links=[CHAIN_OK[0], {"keys": "agent-a", "expect": "contract/signature-invalid"}])
        row("link-by-retired-principal-key",
            compact(signed(presentation(NOW, chain(first_signer="principal-2025")), current)), "ok", current,
            links=[{**CHAIN_OK[0], "expect": "contract/key-not-valid", "signer": "principal-2025"}, CHAIN_OK[1]])
        row("link-by-agent-key-as-principal",
            compact(signed(presentation(NOW, chain(first_signer="agent-a-2026")), current)), "ok", current,
            links=[{**CHAIN_OK[0], "expect": "contract/key-unknown", "signer": "agent-a-2026"}, CHAIN_OK[1]])
    return rows


def key_list(name, version="1.0"):
    return {
        "contract": version,
        "keys": [
            {"kid": f"{name}-2025", "alg": "ed25519", "key": public(f"{name}-2025"), "from": RETIRED_FROM,
             "until": CHANGE},
            {"kid": f"{name}-2026", "alg": "ed25519", "key": public(f"{name}-2026"), "from": CHANGE},
        ],
    }


def keys_file():
    kids = [f"{name}-{suffix}" for name in LISTS for suffix in ("2025", "2026", "9")]
    seller = key_list("seller")
    twice = copy.deepcopy(seller)
    twice["keys"].append({**seller["keys"][1], "key": public("seller-9")})
    return {
        "about": "Test keys and key lists for the contract vectors: each seed is the SHA-256 of its label. Written by "
                 "scripts/contract-vectors.py; do not edit.",
        "keys": [{"kid": k, "label": seed_label(k), "seed": seed(k).hex(), "public": public(k)} for k in kids],
        "lists": {name: pretty(key_list(name)) for name in LISTS},
        "list_rows": [
            {"name": "keys/valid", "text": compact(seller), "expect": "ok"},
            {"name": "keys/kid-twice", "text": compact(twice), "expect": "contract/malformed"},
            {"name": "keys/duplicate-member",
             "text": compact(seller).replace('{"kid"', '{"alg":"ed25519","kid"', 1), "expect": "contract/duplicate-member"},
            {"name": "keys/version-missing", "text": compact({"keys": seller["keys"]}), "expect": "contract/version-unsupported"},
            {"name": "keys/version-2.0", "text": compact(key_list("seller", "2.0")), "expect": "contract/version-unsupported"},
            {"name": "keys/not-json", "text": compact(seller)[:-1], "expect": "contract/not-json"},
        ],
    }


def files():
    out = {"keys.json": keys_file()}
    for kind, build, keys, time_member, _nested, change in KINDS:
        out[f"{kind}.json"] = {
            "about": f"The {kind} rows of the contract vectors: the document's exact text, the key list of keys.json "
                     f"that verifies it and the expected verdict. Signing time member: `{time_member}`. Written by "
                     "scripts/contract-vectors.py; do not edit.",
            "rows": rows_for(kind, build, keys, change),
        }
    return {name: json.dumps(body, ensure_ascii=False, indent=2) + "\n" for name, body in out.items()}


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        print(f"usage: {argv[0]} [--check]", file=sys.stderr)
        return 2
    wanted = files()
    if check:
        present = {p.name for p in OUT.glob("*")} if OUT.is_dir() else set()
        differ = sorted(n for n, body in wanted.items() if n not in present or (OUT / n).read_text() != body)
        extra = sorted(present - set(wanted))
        for n in differ:
            print(f"contract-vectors: tests/vectors/contract/{n} differs from what the generator writes")
        for n in extra:
            print(f"contract-vectors: tests/vectors/contract/{n} is not written by the generator")
        if differ or extra:
            return 1
        print(f"contract-vectors: {len(wanted)} files as the generator writes them")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, body in wanted.items():
        (OUT / name).write_text(body)
    print(f"contract-vectors: wrote {len(wanted)} files to tests/vectors/contract/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
