#!/usr/bin/env python3
"""Writes tests/conformance/x402_evm/peer-cases.json: what the reference (integraledger-terms 0.4.0) answers for
option and payment variants of the six x402 EVM pairings beside EIP-3009, so the Rust tests compare the crate
with the reference case by case. Run it with a Python that has integraledger-terms 0.4.0 installed:

    python scripts/peer-x402-evm-cases.py

Each build case is a vector file's option (`base`: the file's key, or `exact-eip3009` for that file's `fixed.O`) with a
list of changes, and a `now`; each bound case is a vector
file's B6 payment with a list of changes ([JSON pointer, value] sets a member, [JSON pointer] removes it). The
expected values, one per pairing in the order `pairings` lists them, are "ok" (build) or the hash (bound), or the
refusal code."""

import copy
import json
import pathlib

import integraledger_terms as t
from integraledger_terms.bindings import x402_exact_eip155_eip3009 as eip3009

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"
OUT = ROOT / "tests" / "conformance" / "x402_evm" / "peer-cases.json"

BINDINGS = {
    "x402/exact/eip155/permit2": t.X402_EXACT_EIP155_PERMIT2,
    "x402/upto/eip155/permit2": t.X402_UPTO_EIP155_PERMIT2,
    "x402/exact/eip155/erc7710": t.X402_EXACT_EIP155_ERC7710,
    "x402/exact/eip155/erc7710-salt": t.X402_EXACT_EIP155_ERC7710_SALT,
    "x402/auth-capture/eip155/eip3009": t.X402_AUTH_CAPTURE_EIP155_EIP3009,
    "x402/auth-capture/eip155/permit2": t.X402_AUTH_CAPTURE_EIP155_PERMIT2,
}
FILES = {
    "exact-permit2": "x402-exact-eip155-permit2.json",
    "upto-permit2": "x402-upto-eip155-permit2.json",
    "erc7710": "x402-exact-eip155-erc7710.json",
    "erc7710-salt": "x402-exact-eip155-erc7710-salt.json",
    "auth-capture-eip3009": "x402-auth-capture-eip155-eip3009.json",
    "auth-capture-permit2": "x402-auth-capture-eip155-permit2.json",
}
H = "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
PAYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
OTHER = "0x1111111111111111111111111111111111111111"
ZERO = "0x0000000000000000000000000000000000000000"
MAX_SAFE = 2**53 - 1


def load(name):
    return json.loads((VECTORS / name).read_text())


def pointer_parts(pointer):
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def expand(value):
    """{"$repeat": [s, n]} is s repeated n times, and a list of strings and such objects their concatenation."""
    if isinstance(value, dict) and set(value) == {"$repeat"}:
        text, count = value["$repeat"]
        return text * count
    if isinstance(value, list) and value and all(isinstance(v, (str, dict)) for v in value) and any(
        isinstance(v, dict) and "$repeat" in v for v in value
    ):
        return "".join(expand(v) for v in value)
    return value


def apply(value, changes):
    value = copy.deepcopy(value)
    for change in changes:
        change = [change[0]] + [expand(v) for v in change[1:]]
        parts = pointer_parts(change[0])
        at = value
        for p in parts[:-1]:
            at = at[int(p)] if isinstance(at, list) else at[p]
        if len(change) == 1:
            del at[parts[-1]]
        elif isinstance(at, list):
            at[int(parts[-1])] = change[1]
        else:
            at[parts[-1]] = change[1]
    return value


def build_result(binding, option, now):
    doc = load(FILES["exact-permit2"])["buyer"]["rows"][0]["input"]["doc"]
    required = dict(doc, accepts=[option])
    got = binding.build({"required": required, "accepted": option, "from": PAYER, "now": now}, H)
    return got.code if isinstance(got, t.Refusal) else "ok"


def bound_result(binding, presented):
    got = binding.bound(presented)
    return got.code if isinstance(got, t.Refusal) else got


def option_of(key):
    return load(FILES[key])["fixed"]["option"]


def build_cases():
    exact_eip3009 = load("x402-exact-eip155-eip3009.json")["fixed"]["O"]
    bases = {
        "exact-eip3009": exact_eip3009,
        "exact-permit2": option_of("exact-permit2"),
        "erc7710": option_of("erc7710"),
        "upto-permit2": option_of("upto-permit2"),
        "auth-capture-eip3009": option_of("auth-capture-eip3009"),
        "auth-capture-permit2": option_of("auth-capture-permit2"),
    }
    common = [
        ("as the file writes it", []),
        ("no extra", [["/extra"]]),
        ("extra null", [["/extra", None]]),
        ("extra a string", [["/extra", "x"]]),
        ("scheme upper case", [["/scheme", "EXACT"]]),
        ("network eip155:0", [["/network", "eip155:0"]]),
        ("network eip155:01", [["/network", "eip155:01"]]),
        ("network past 2^53", [["/network", "eip155:9007199254740992"]]),
        ("network 2^53 - 1", [["/network", "eip155:9007199254740991"]]),
        ("network solana", [["/network", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"]]),
        ("asset short", [["/asset", "0x12"]]),
        ("asset lower case", [["/asset", "0x036cbd53842c5426634e7929541ec2318f3dcf7e"]]),
        ("payTo a number", [["/payTo", 7]]),
        ("payTo absent", [["/payTo"]]),
        ("amount 0", [["/amount", "0"]]),
        ("amount with a leading zero", [["/amount", "010"]]),
        ("amount a number", [["/amount", 10000]]),
        ("amount 2^256", [["/amount", str(2**256)]]),
        ("amount 2^256 - 1", [["/amount", str(2**256 - 1)]]),
        ("amount 2^120", [["/amount", str(2**120)]]),
        ("amount 2^120 - 1", [["/amount", str(2**120 - 1)]]),
        ("timeout 0", [["/maxTimeoutSeconds", 0]]),
        ("timeout 60.0", [["/maxTimeoutSeconds", 60.0]]),
        ("timeout 60.5", [["/maxTimeoutSeconds", 60.5]]),
        ("timeout a string", [["/maxTimeoutSeconds", "60"]]),
        ("timeout 2^48", [["/maxTimeoutSeconds", 2**48]]),
        ("timeout 2^48 - 1", [["/maxTimeoutSeconds", 2**48 - 1]]),
        ("timeout true", [["/maxTimeoutSeconds", True]]),
        ("method absent", [["/extra/assetTransferMethod"]]),
        ("method eip3009", [["/extra/assetTransferMethod", "eip3009"]]),
        ("method permit2", [["/extra/assetTransferMethod", "permit2"]]),
        ("method erc7710", [["/extra/assetTransferMethod", "erc7710"]]),
        ("method other", [["/extra/assetTransferMethod", "other"]]),
        ("method null", [["/extra/assetTransferMethod", None]]),
        ("flow authorization", [["/extra/paymentFlow", "authorization"]]),
        ("flow upfront", [["/extra/paymentFlow", "upfront"]]),
        ("flow escrow", [["/extra/paymentFlow", "escrow"]]),
        ("flow other", [["/extra/paymentFlow", "other"]]),
        ("flow null", [["/extra/paymentFlow", None]]),
        ("name empty", [["/extra/name", ""]]),
        ("name absent", [["/extra/name"]]),
        ("version a number", [["/extra/version", 2]]),
        ("facilitator absent", [["/extra/facilitatorAddress"]]),
        ("facilitator null", [["/extra/facilitatorAddress", None]]),
        ("facilitator short", [["/extra/facilitatorAddress", "0x12"]]),
        ("facilitator set", [["/extra/facilitatorAddress", OTHER]]),
    ]
    auth_capture = [
        ("captureAuthorizer absent", [["/extra/captureAuthorizer"]]),
        ("captureAuthorizer null", [["/extra/captureAuthorizer", None]]),
        ("feeRecipient short", [["/extra/feeRecipient", "0x12"]]),
        ("refundDeadline absent", [["/extra/refundDeadline"]]),
        ("minFeeBps absent", [["/extra/minFeeBps"]]),
        ("version absent", [["/extra/version"]]),
        ("escrow v1.0", [["/extra/authCaptureEscrow", "0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff"]]),
        ("escrow v1.0 lower case", [["/extra/authCaptureEscrow", "0xbdea0d1bcc5966192b070fdf62ab4ef5b4420cff"]]),
        ("escrow v1.1", [["/extra/authCaptureEscrow", "0xf96815976523E00e65Be8f34cA5e64b4f41EB19c"]]),
        ("escrow other", [["/extra/authCaptureEscrow", OTHER]]),
        ("escrow null", [["/extra/authCaptureEscrow", None]]),
        ("escrow a number", [["/extra/authCaptureEscrow", 5]]),
        ("autoCapture true", [["/extra/autoCapture", True]]),
        ("autoCapture false", [["/extra/autoCapture", False]]),
        ("autoCapture a string", [["/extra/autoCapture", "true"]]),
        ("flow authorization without receiverAuthorizer", [["/extra/paymentFlow", "authorization"], ["/extra/receiverAuthorizer"]]),
        ("flow authorization with a zero receiverAuthorizer", [["/extra/paymentFlow", "authorization"], ["/extra/receiverAuthorizer", ZERO]]),
        ("receiverAuthorizer absent", [["/extra/receiverAuthorizer"]]),
        ("receiverAuthorizer null", [["/extra/receiverAuthorizer", None]]),
        ("receiverAuthorizer short", [["/extra/receiverAuthorizer", "0x12"]]),
        ("policy set, no receiverAuthorizer", [["/extra/policy", OTHER], ["/extra/receiverAuthorizer"]]),
        ("policy a number", [["/extra/policy", 1]]),
        ("captureDeadline a string", [["/extra/captureDeadline", "1790003600"]]),
        ("captureDeadline 2^48", [["/extra/captureDeadline", 2**48]]),
        ("captureDeadline 2^48 - 1", [["/extra/captureDeadline", 2**48 - 1]]),
        ("captureDeadline 2^48 as a string", [["/extra/captureDeadline", str(2**48)]]),
        ("captureDeadline -1", [["/extra/captureDeadline", -1]]),
        ("captureDeadline 1.5", [["/extra/captureDeadline", 1.5]]),
        ("captureDeadline 10.0", [["/extra/captureDeadline", 10.0]]),
        ("captureDeadline past 2^53", [["/extra/captureDeadline", 2**53]]),
        ("captureDeadline null", [["/extra/captureDeadline", None]]),
        ("minFeeBps 65535", [["/extra/minFeeBps", 65535]]),
        ("minFeeBps 65536", [["/extra/minFeeBps", 65536]]),
        ("maxFeeBps a string", [["/extra/maxFeeBps", "100"]]),
        ("maxFeeBps true", [["/extra/maxFeeBps", True]]),
    ]
    cases = []
    for base_name, base in bases.items():
        variants = common + (auth_capture if base["scheme"] == "auth-capture" else [])
        for name, changes in variants:
            try:
                option = apply(base, changes)
            except (KeyError, IndexError, TypeError):
                continue
            now = 1790000000
            expect = [build_result(b, option, now) for b in BINDINGS.values()]
            cases.append({"case": f"{base_name}: {name}", "base": base_name, "changes": changes, "now": now, "expect": expect})
        for now in (0, MAX_SAFE - 2**47, 2**48 - 61, 2**48 - 60, MAX_SAFE, -1, 1.5, "1790000000"):
            expect = [build_result(b, base, now) for b in BINDINGS.values()]
            cases.append({"case": f"{base_name}: now {now!r}", "base": base_name, "changes": [], "now": now, "expect": expect})
    return cases


def word(n):
    return n.to_bytes(32, "big")


def dyn_bytes(b):
    return word(len(b)) + b + bytes((32 - len(b) % 32) % 32)


def enc_caveat(enforcer, terms, args):
    head = enforcer + word(96) + word(96 + len(dyn_bytes(terms)))
    return head + dyn_bytes(terms) + dyn_bytes(args)


def enc_array(items):
    """abi.encode of a dynamic array of dynamic tuples: the length, the heads, the tails."""
    heads, tails, at = b"", b"", 32 * len(items)
    for item in items:
        heads += word(at)
        tails += item
        at += len(item)
    return word(len(items)) + heads + tails


def enc_delegation(salt, caveats, signature, delegate=None):
    delegate = delegate or bytes(12) + bytes.fromhex("3C44CdDdB6a900fa2b585dd299e03d12FA4293BC")
    delegator = bytes(12) + bytes.fromhex(PAYER[2:])
    authority = b"\xff" * 32
    cav = enc_array([enc_caveat(*c) for c in caveats])
    head_len = 32 * 6
    head = delegate + delegator + authority + word(head_len) + salt + word(head_len + len(cav))
    return head + cav + dyn_bytes(signature)


def context(delegations, trailing=b""):
    return "0x" + (word(32) + enc_array(delegations) + trailing).hex()


def context_cases():
    salt = bytes.fromhex(H[2:])
    enforcer = bytes(12) + b"\x11" * 20
    cav = (enforcer, b"\x12\x34", b"")
    sig = b"\x52" * 65
    one = enc_delegation(salt, [cav], sig)
    dirty = b"\x01" + bytes(11) + b"\x3c" * 20
    cases = [
        ("one delegation", context([one])),
        ("eight delegations", context([one] * 8)),
        ("nine delegations", context([one] * 9)),
        ("sixteen caveats", context([enc_delegation(salt, [cav] * 16, sig)])),
        ("seventeen caveats", context([enc_delegation(salt, [cav] * 17, sig)])),
        ("a dirty delegate word", context([enc_delegation(salt, [cav], sig, delegate=dirty)])),
        ("a dirty enforcer word", context([enc_delegation(salt, [(dirty, b"", b"")], sig)])),
        ("no caveats, an empty signature", context([enc_delegation(salt, [], b"")])),
        ("trailing words", context([one], trailing=bytes(64))),
        ("a signature of 8 KiB", context([enc_delegation(salt, [], b"\x01" * 8192)])),
        ("a signature over 8 KiB", context([enc_delegation(salt, [], b"\x01" * 8193)])),
    ]
    # Non-canonical: the array offset points past a spare word.
    body = enc_array([one])
    cases.append(("the array after a spare word", "0x" + (word(64) + bytes(32) + body).hex()))
    # A count word past the input.
    cases.append(("a count past the input", "0x" + (word(32) + word(2**255)).hex()))
    # The leaf's signature length past the input.
    broken = bytearray(bytes.fromhex(context([one])[2:]))
    broken[-32 * 4 : -32 * 3] = word(4096)
    cases.append(("a signature length past the input", "0x" + bytes(broken).hex()))
    # Unpadded: the signature's last word cut short is not a multiple of 32.
    cases.append(("not a multiple of 32 bytes", context([one])[:-2]))
    return cases


def bound_cases():
    long = "0x" + "1" * 255
    cases = []
    per_file = {
        "exact-permit2": [
            ("x402Version 2.0", [["/x402Version", 2.0]]),
            ("x402Version a string", [["/x402Version", "2"]]),
            ("x402Version true", [["/x402Version", True]]),
            ("accepted a string", [["/accepted", "x"]]),
            ("accepted absent", [["/accepted"]]),
            ("accepted another scheme", [["/accepted/scheme", "upto"]]),
            ("accepted amount 0", [["/accepted/amount", "0"]]),
            ("payload a list", [["/payload", []]]),
            ("a refused member", [["/refused", True]]),
            ("signature absent", [["/payload/signature"]]),
            ("signature 0x", [["/payload/signature", "0x"]]),
            ("signature one byte", [["/payload/signature", "0x11"]]),
            ("signature odd", [["/payload/signature", "0x111"]]),
            ("signature 8193 bytes", [["/payload/signature", ["0x", {"$repeat": ["11", 8193]}]]]),
            ("signature a number", [["/payload/signature", 5]]),
            ("authorization absent", [["/payload/permit2Authorization"]]),
            ("from absent", [["/payload/permit2Authorization/from"]]),
            ("from not an address", [["/payload/permit2Authorization/from", "nope"]]),
            ("from 257 characters", [["/payload/permit2Authorization/from", long + "12"]]),
            ("deadline a number", [["/payload/permit2Authorization/deadline", 1790000060]]),
            ("deadline not decimal", [["/payload/permit2Authorization/deadline", "soon"]]),
            ("permitted absent", [["/payload/permit2Authorization/permitted"]]),
            ("permitted amount a number", [["/payload/permit2Authorization/permitted/amount", 10000]]),
            ("witness absent", [["/payload/permit2Authorization/witness"]]),
            ("witness to a number", [["/payload/permit2Authorization/witness/to", 1]]),
            ("spender a number", [["/payload/permit2Authorization/spender", 1]]),
            ("spender upper case", [["/payload/permit2Authorization/spender", "0x402085C248EEA27D92E8B30B2C58ED07F9E20001"]]),
            ("nonce upper-case hex", [["/payload/permit2Authorization/nonce", H.upper().replace("0X", "0x")]]),
            ("nonce 0X", [["/payload/permit2Authorization/nonce", H.replace("0x", "0X")]]),
            ("nonce 2^256", [["/payload/permit2Authorization/nonce", str(2**256)]]),
            ("nonce 79 digits", [["/payload/permit2Authorization/nonce", "0" + str(2**255)]]),
            ("nonce 78 digits with leading zeros", [["/payload/permit2Authorization/nonce", "00" + "84342368487090800366523834928142263660104883695016514377462985829716817089965"[:76]]]),
            ("nonce 0", [["/payload/permit2Authorization/nonce", "0"]]),
            ("nonce empty", [["/payload/permit2Authorization/nonce", ""]]),
            ("nonce signed", [["/payload/permit2Authorization/nonce", "-1"]]),
        ],
        "upto-permit2": [
            ("facilitator a number", [["/payload/permit2Authorization/witness/facilitator", 1]]),
            ("facilitator any string", [["/payload/permit2Authorization/witness/facilitator", "x"]]),
            ("nonce decimal", [["/payload/permit2Authorization/nonce", "84342368487090800366523834928142263660104883695016514377462985829716817089965"]]),
            ("accepted without facilitator", [["/accepted/extra/facilitatorAddress"]]),
        ],
        "erc7710": [
            ("manager absent", [["/payload/delegationManager"]]),
            ("manager 257 characters", [["/payload/delegationManager", long + "12"]]),
            ("delegator a number", [["/payload/delegator", 5]]),
            ("context a number", [["/payload/permissionContext", 5]]),
            ("context over 32 KiB", [["/payload/permissionContext", ["0x", {"$repeat": ["00", 32769]}]]]),
            ("context not hex", [["/payload/permissionContext", "zz"]]),
            ("legal context info null", [["/extensions/legalContext/info", None]]),
            ("legal context http link", [["/extensions/legalContext/info/legalContextUrl", "http://atr.seller.example/x"]]),
            ("legal context upper-case hash", [["/extensions/legalContext/info/value", H.upper().replace("0X", "0x")]]),
            ("legal context both spellings, different", [["/extensions/legalContext/info/legal_context_url", "https://atr.seller.example/other"]]),
            ("legal context snake spelling only", [["/extensions/legalContext/info/legal_context_url", "https://atr.seller.example/x"], ["/extensions/legalContext/info/legalContextUrl"]]),
            ("extensions a list", [["/extensions", []]]),
            ("accepted assetTransferMethod permit2", [["/accepted/extra/assetTransferMethod", "permit2"]]),
        ],
        "erc7710-salt": [
            ("manager lower case", [["/payload/delegationManager", "0xdb9b1e94b5b69df7e401ddbede43491141047db3"]]),
            ("network not a manager chain", [["/accepted/network", "eip155:7"]]),
            ("network mainnet", [["/accepted/network", "eip155:1"]]),
            ("context 0x", [["/payload/permissionContext", "0x"]]),
            ("context one word", [["/payload/permissionContext", "0x" + "00" * 31 + "20"]]),
            ("no extensions", [["/extensions"]]),
        ],
        "auth-capture-eip3009": [
            ("signature one byte", [["/payload/signature", "0x11"]]),
            ("signature empty", [["/payload/signature", "0x"]]),
            ("salt absent", [["/payload/salt"]]),
            ("salt upper case", [["/payload/salt", "0x4A7DDC17918C33F6CE173013C74426AED304994DB838AF82ACB19AEC125D1BE2"]]),
            ("saltNonce absent", [["/payload/saltNonce"]]),
            ("saltNonce upper case", [["/payload/saltNonce", H.upper().replace("0X", "0x")]]),
            ("saltNonce short", [["/payload/saltNonce", "0x12"]]),
            ("authorization absent", [["/payload/authorization"]]),
            ("authorization value a number", [["/payload/authorization/value", 10000]]),
            ("from not an address", [["/payload/authorization/from", "nope"]]),
            ("validBefore 2^48", [["/payload/authorization/validBefore", str(2**48)]]),
            ("validBefore not decimal", [["/payload/authorization/validBefore", "0x10"]]),
            ("nonce short", [["/payload/authorization/nonce", "0x12"]]),
            ("nonce upper case", [["/payload/authorization/nonce", "0x1CD00894A1A6148FD21C97D4A90A8E8A5F99E6160AF7A4E3B78132271E6D4928"]]),
            ("accepted escrow v1.0", [["/accepted/extra/authCaptureEscrow", "0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff"]]),
            ("accepted policy set", [["/accepted/extra/policy", OTHER]]),
            ("accepted paymentFlow escrow", [["/accepted/extra/paymentFlow", "escrow"]]),
            ("accepted method permit2", [["/accepted/extra/assetTransferMethod", "permit2"]]),
            ("accepted captureAuthorizer other", [["/accepted/extra/captureAuthorizer", OTHER]]),
        ],
        "auth-capture-permit2": [
            ("nonce hex short", [["/payload/permit2Authorization/nonce", "0x12"]]),
            ("deadline 2^48", [["/payload/permit2Authorization/deadline", str(2**48)]]),
            ("spender a number", [["/payload/permit2Authorization/spender", 1]]),
            ("no permitted (not read)", [["/payload/permit2Authorization/permitted"]]),
            ("accepted method eip3009", [["/accepted/extra/assetTransferMethod", "eip3009"]]),
        ],
    }
    per_file["erc7710-salt"] += [
        (f"context: {name}", [["/payload/permissionContext", ctx]]) for name, ctx in context_cases()
    ]
    for key, variants in per_file.items():
        file = load(FILES[key])
        presented = [r for r in file["buyer"]["rows"] if r["name"] == "B6"][0]["input"]["presented"]
        for name, changes in variants:
            changed = apply(presented, changes)
            expect = [bound_result(b, changed) for b in BINDINGS.values()]
            cases.append({"case": f"{key}: {name}", "file": FILES[key], "changes": changes, "expect": expect})
    return cases


def main():
    out = {
        "about": "Generated by scripts/peer-x402-evm-cases.py from integraledger-terms 0.4.0: build and bound of each "
        "of the six pairings over option and payment variants of the vector files. Not an upstream vector file.",
        "build": build_cases(),
        "bound": bound_cases(),
    }
    line = lambda v: json.dumps(v, separators=(",", ":"))
    text = "{\n" + f' "about": {line(out["about"])},\n' + f' "pairings": {line(list(BINDINGS))},\n'
    for key in ("build", "bound"):
        text += f' "{key}": [\n' + ",\n".join("  " + line(c) for c in out[key]) + "\n ]" + (",\n" if key == "build" else "\n")
    text += "}\n"
    json.loads(text)
    OUT.write_text(text)
    print(f"{len(out['build'])} build cases, {len(out['bound'])} bound cases -> {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
