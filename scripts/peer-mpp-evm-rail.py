#!/usr/bin/env python3
"""Writes tests/mpp_evm_rail/peer.json: what the reference (integraledger-terms 0.4.0, with eth-account) builds and
signs for the MPP EVM charge vectors (typed data with the message's integers as decimal strings), so tests/mpp_evm_rail.rs can check the EVM rail against the reference where the
vector files predate a rule change (the challenge hash framed as the JSON array [id, realm], mppx 0.13.1 on: the
files' MV2, MV5, MV6, MV6b, Permit2 plant and B6 rows still hash id and realm concatenated), and compare the
signing requests the reference writes. Run it with the peer's Python:

    target/peer-venv/bin/python scripts/peer-mpp-evm-rail.py

Every value comes from the reference's own functions (challenge_hash, the pairings' build) and eth-account's
sign_typed_data / sign_transaction with the files' payer key; nothing is typed in."""

import base64
import json
import pathlib

from eth_account import Account
from integraledger_terms.bindings import mpp_charge_evm as evm
from integraledger_terms.bindings import mpp_charge_usdc as usdc
from integraledger_terms.bindings._mpp import challenge_hash

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"
OUT = ROOT / "tests" / "mpp_evm_rail" / "peer.json"


def load(name):
    return json.loads((VECTORS / name).read_text())


def b64u(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def signed(typed_data, key):
    s = Account.sign_typed_data(key, full_message=typed_data)
    return {
        "typedData": as_strings(typed_data),
        "digest": "0x" + s.message_hash.hex(),
        "signature": "0x" + s.signature.hex(),
    }


def as_strings(typed_data):
    """The typed data with its message's integers as decimal strings, the crate's form of uint256 values (a JSON
    reader without big numbers would round a 256-bit nonce)."""

    def strings(v):
        if isinstance(v, bool) or not isinstance(v, (int, dict, list)):
            return v
        if isinstance(v, int):
            return str(v)
        if isinstance(v, list):
            return [strings(x) for x in v]
        return {k: strings(x) for k, x in v.items()}

    return dict(typed_data, message=strings(typed_data["message"]))


def main():
    auth = load("mpp-charge-evm-authorization.json")
    permit2 = load("mpp-charge-evm-permit2.json")
    tx = load("mpp-charge-evm-transaction.json")
    u = load("mpp-charge-usdc-evm.json")
    g = load("mpp-charge-usdc-gateway.json")
    key = auth["fixed"]["payerKey"]
    payer = auth["fixed"]["payer"]
    h = auth["buyer"]["rows"][0]["advertised"]
    challenge = auth["buyer"]["rows"][1]["input"]["presented"]["challenge"]
    cid, realm = challenge["id"], challenge["realm"]
    out = {
        "about": "Written by scripts/peer-mpp-evm-rail.py from integraledger-terms 0.4.0 and eth-account; do not edit.",
        "challengeHash": challenge_hash(cid, realm),
        "challengeHashOtherRealm": challenge_hash(cid, auth["fixed"]["otherRealm"]),
        "challengeHashOfPosition1": challenge_hash(cid[: cid.rindex(".")] + ".1", realm),
    }

    choice = {"challenge": challenge, "from": payer, "now": auth["fixed"]["now"], "tokenDomain": auth["fixed"]["tokenDomain"]}
    td = evm.MppChargeEvmAuthorization().build(choice, h).request["typedData"]
    out["MV5"] = signed(td, key)

    p_challenge = permit2["buyer"]["rows"][1]["input"]["presented"]["challenge"]
    p_choice = {"challenge": p_challenge, "from": payer, "now": permit2["fixed"]["now"], "spender": permit2["fixed"]["spender"]}
    td = evm.MppChargeEvmPermit2().build(p_choice, h).request["typedData"]
    out["MV6"] = signed(td, key)
    batch = dict(p_challenge, request=b64u(permit2["fixed"]["R_E6b"]))
    td = evm.MppChargeEvmPermit2().build(dict(p_choice, challenge=batch), h).request["typedData"]
    out["MV6b"] = signed(td, key)

    t_challenge = tx["buyer"]["rows"][0]["input"]["doc"][0]
    t_choice = {"challenge": t_challenge, "from": payer, "now": tx["fixed"]["now"]}
    out["MV11"] = {
        "transaction": evm.MppChargeEvmTransaction().build(t_choice, h).request,
        "hash": evm.MppChargeEvmHash().build(t_choice, h).request,
    }

    u_challenge = u["buyer"]["rows"][1]["input"]["presented"]["challenge"]
    u_choice = {"challenge": u_challenge, "from": payer, "tokenDomain": u["fixed"]["tokenDomain"]}
    td = usdc.MppChargeUsdcEvm().build(u_choice, h).request["typedData"]
    out["M3"] = signed(td, key)

    g_challenge = g["buyer"]["rows"][1]["input"]["presented"]["challenge"]
    out["M5"] = {"request": usdc.MppChargeUsdcGateway().build({"challenge": g_challenge, "from": payer}, h).request}

    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
