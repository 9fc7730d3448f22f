#!/usr/bin/env python3
"""Writes tests/mpp_session/peer-cases.json: what the reference (integraledger-terms 0.4.0, with eth-account for the
payer's signatures) answers for the session `mpp/session/evm`, so tests/mpp_session.rs compares the crate with the
reference case by case. Run it with a Python that has both installed (scripts/bench-peer's target/peer-venv):

    target/peer-venv/bin/python scripts/peer-mpp-session-cases.py

Every case starts from mpp-session-evm.json: B2's document, account, inputs and time, the payer's key, B6's opening.
- `openings`: transact over B2's document (or its challenge with another request, placed again for H) with B2's inputs
  changed, the link serving "abc". The signer signs every eip712 request with the payer's key and answers an
  evm-calls request with `answer` (ES9's transaction hash unless the case names one). The outcome is the credential,
  or the decline's code and detail and whether it carries what moved; `requests` are the requests the signer got
  (an EIP-712 message's integers written as decimal strings, so that a uint256 survives a JSON reader).
- `withins`: within over a document in B6's hold, with `refund` where given (where `charged` is given, a voucher for
  `before` is signed first and `charged` recorded): the signed payment and the hold's signedMax, or the decline;
  `calls` counts the signer's calls.
- `bounds`: bound of B6's opening (or a hash opening built here) with changes ([key path, value] sets a member,
  [key path] removes it): the hash read, or the refusal code."""

import asyncio
import base64
import copy
import json
import pathlib

import httpx
from eth_account import Account
from eth_account.messages import encode_typed_data

import integraledger_terms as t
from integraledger_terms import _gate

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILE = json.loads((ROOT / "tests" / "vectors" / "mpp-session-evm.json").read_text())
OUT = ROOT / "tests" / "mpp_session" / "peer-cases.json"

FIXED = FILE["fixed"]
ROWS = {r["name"]: r for r in FILE["buyer"]["rows"]}
B2 = ROWS["B2"]["input"]
PRESENTED = ROWS["B6"]["input"]["presented"]
KEY = FIXED["payerKey"]
HASH = FILE["ES9"]["hash"]
BINDING = t.MppSessionEvm()
ANVIL_1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

# The reference's clock is the system's; the file's challenge expires a minute after fixed.now.
_gate._now = lambda: FIXED["now"]


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def canonical(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


def sign_typed(typed) -> str:
    signed = Account.sign_message(encode_typed_data(full_message=typed), KEY)
    return "0x" + signed.signature.hex().removeprefix("0x")


class Wallet:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.calls: list = []

    @property
    def account(self) -> str:
        return B2["account"]

    async def sign(self, request):
        self.calls.append(request)

        def one(r):
            return sign_typed(r["typedData"]) if r["kind"] == "eip712" else self.answer

        return [one(r) for r in request["requests"]] if request["kind"] == "batch" else one(request)


def fetch() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200, content=b"abc")))


def outcome(got) -> dict:
    if isinstance(got, t.Declined):
        return {"code": got.code, "detail": got.detail, "moved": got.moved is not None}
    if hasattr(got, "signed"):
        return {"signed": got.signed}
    return {"other": repr(got)}


def placed(request: dict) -> list:
    """B2's challenge with another request (H, its id and its opaque unchanged)."""
    c = copy.deepcopy(B2["doc"][0])
    c["request"] = b64u(canonical(request))
    return [c]


def fixed_request() -> dict:
    return json.loads(FIXED["request"])


def exact(request):
    """A request with an EIP-712 message's integers written as decimal strings: the reference hands JSON integers,
    which a JSON reader holds as doubles past 2^53 (a Permit2 nonce is a uint256)."""

    def strings(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int):
            return str(v)
        if isinstance(v, dict):
            return {k: strings(x) for k, x in v.items()}
        if isinstance(v, list):
            return [strings(x) for x in v]
        return v

    if request.get("kind") != "eip712":
        return request
    typed = dict(request["typedData"])
    typed["message"] = strings(typed["message"])
    return {**request, "typedData": typed}


def opening_cases() -> list:
    only_hash = fixed_request()
    only_hash["methodDetails"]["credentialTypes"] = ["hash"]
    named_permit2 = fixed_request()
    named_permit2["methodDetails"]["permit2Contract"] = "0x000000000022D473030F116dDEE9F6B43aC78BA4"
    cases = [
        ("authorization", {}, None, None),
        ("permit2", {"credentialType": "permit2"}, None, None),
        ("permit2 at a named Permit2", {"credentialType": "permit2"}, named_permit2, None),
        ("hash", {"credentialType": "hash"}, None, None),
        ("the first type offered", {"credentialType": None}, None, None),
        ("an authorized signer", {"authorizedSigner": ANVIL_1}, None, None),
        ("a deposit of 0", {"deposit": "0"}, None, None),
        ("a deposit of 2^128", {"deposit": str(1 << 128)}, None, None),
        ("a deposit of 2^128 - 1", {"deposit": str((1 << 128) - 1)}, None, None),
        ("no deposit", {"deposit": None}, None, None),
        ("a deposit that is not a decimal", {"deposit": "5e6"}, None, None),
        ("an unknown credential type", {"credentialType": "transaction"}, None, None),
        ("a credential type not offered", {}, only_hash, None),
        ("no token domain", {"tokenDomain": None}, None, None),
        ("a token domain with an empty name", {"tokenDomain": {"name": "", "version": "2"}}, None, None),
        ("a token domain that is not an object", {"tokenDomain": "USDC"}, None, None),
        ("an authorized signer that is not an address", {"authorizedSigner": "0x12"}, None, None),
        ("a hash answer that is not a hash", {"credentialType": "hash"}, None, "0x1234"),
    ]
    out = []
    for name, changes, request, answer in cases:
        inputs = dict(B2["inputs"])
        for k, v in changes.items():
            if v is None:
                inputs.pop(k, None)
            else:
                inputs[k] = v
        doc = placed(request) if request is not None else B2["doc"]
        wallet = Wallet(answer or HASH)
        got = asyncio.run(t.transact(doc, BINDING, wallet, fetch(), inputs=inputs))
        requests = [exact(r) for r in wallet.calls]
        out.append({"case": name, "doc": doc, "inputs": inputs, "answer": answer or HASH, "requests": requests, "outcome": outcome(got)})
    return out


def within_challenge(amount: str, channel=None, chain=None, opaque=None, drop=()) -> dict:
    request = fixed_request()
    request["amount"] = amount
    details = request["methodDetails"]
    if chain is not None:
        details["chainId"] = chain
    if channel is not None:
        details["channelId"] = channel
    c = {"realm": "api.seller.example", "method": "evm", "intent": "session", "request": b64u(canonical(request)), "id": "seller-1"}
    if opaque is not None:
        c["opaque"] = b64u(canonical(opaque))
    for k in drop:
        c.pop(k)
    return c


def within_cases() -> list:
    hold = t.open_channel(b"abc", PRESENTED, BINDING)
    channel = hold["channel"]
    lc = {"legalContext": "lcp:sha256:" + FIXED["H"]}
    other = {"legalContext": "lcp:sha256:" + FIXED["H2"]}
    cases = [
        ("the opening's document", B2["doc"], None, None),
        ("a challenge naming the held channel", [within_challenge("100", channel)], None, None),
        ("naming the held channel, the held H in its opaque", [within_challenge("250", channel, opaque=lc)], None, None),
        ("after a recorded charge", [within_challenge("100", channel)], None, "100"),
        ("a challenge naming another channel", [within_challenge("100", "0x" + "11" * 32)], None, None),
        ("another channel after one on another chain", [within_challenge("100", channel, chain=8453), within_challenge("100", "0x" + "11" * 32)], None, None),
        ("the held channel on another chain", [within_challenge("100", channel, chain=8453)], None, None),
        ("a channel id that is not a hash, then the held one", [within_challenge("100", "0x12"), within_challenge("100", channel)], None, None),
        ("another H in its opaque", [within_challenge("100", channel, opaque=other)], None, None),
        ("an opaque that is not a map of strings", [within_challenge("100", channel, opaque={"n": 1})], None, None),
        ("a legal context that is not an LCP hash", [within_challenge("100", channel, opaque={"legalContext": "x"})], None, None),
        ("an amount that is not a decimal", [within_challenge("1.5", channel)], None, None),
        ("a cumulative amount of 2^128", [within_challenge(str(1 << 128), channel)], None, None),
        ("a challenge with no id", [within_challenge("100", channel, drop=("id",))], None, None),
        ("no challenge of the session", [{"realm": "r", "method": "evm", "intent": "charge", "request": "e30"}], None, None),
        ("not a list", {"challenges": []}, None, None),
        ("the close", [within_challenge("100", channel)], {}, None),
        ("the close after a recorded charge", [within_challenge("100", channel)], {}, "100"),
        ("a partial refund", [within_challenge("100", channel)], {"amount": "5"}, None),
    ]
    out = []
    for name, doc, refund, charged in cases:
        h = hold
        before = None
        if charged is not None:
            # A charge can be recorded up to what was signed: sign a voucher for it first.
            before = [within_challenge(charged, channel)]
            first = asyncio.run(t.within(before, hold, BINDING, Wallet(HASH)))
            h = t.record_charge(first.hold, charged)
        wallet = Wallet(HASH)
        got = asyncio.run(t.within(doc, h, BINDING, wallet, refund=refund))
        o = outcome(got)
        if "signed" in o:
            o["signedMax"] = got.hold["signedMax"]
        out.append({"case": name, "before": before, "charged": charged, "doc": doc, "refund": refund, "calls": len(wallet.calls), "outcome": o})
    return out


def hash_opening() -> dict:
    doc = B2["doc"]
    inputs = {**B2["inputs"], "credentialType": "hash"}
    got = asyncio.run(t.transact(doc, BINDING, Wallet(HASH), fetch(), inputs=inputs))
    return got.signed


def bound_cases() -> list:
    other_chain = PRESENTED["source"].replace(":84532:", ":8453:")
    cases = [
        ("B6", "B6", []),
        ("B6 without its source", "B6", [[["source"]]]),
        ("B6 with a source on another chain", "B6", [[["source"], other_chain]]),
        ("B6 with a source that is not a did:pkh", "B6", [[["source"], "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"]]),
        ("a hash opening", "hash", []),
        ("a hash opening without its source", "hash", [[["source"]]]),
        ("a hash opening with a source on another chain", "hash", [[["source"], other_chain]]),
        ("a hash opening with a source of another payer", "hash", [[["source"], "did:pkh:eip155:84532:" + ANVIL_1]]),
        ("B6 as a voucher", "B6", [[["payload", "action"], "voucher"]]),
        ("B6 of type transaction", "B6", [[["payload", "type"], "transaction"]]),
        ("B6 with another authorized signer", "B6", [[["payload", "authorizedSigner"], ANVIL_1]]),
    ]
    base = {"B6": PRESENTED, "hash": hash_opening()}
    out = []
    for name, start, changes in cases:
        p = copy.deepcopy(base[start])
        for change in changes:
            path = change[0]
            at = p
            for k in path[:-1]:
                at = at[k]
            if len(change) == 1:
                at.pop(path[-1])
            else:
                at[path[-1]] = change[1]
        got = BINDING.bound(p)
        out.append({"case": name, "presented": p, "expect": got if isinstance(got, str) else got.code})
    return out


def main() -> None:
    cases = {"openings": opening_cases(), "withins": within_cases(), "bounds": bound_cases()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":
    main()
