#!/usr/bin/env python3
"""Writes tests/mpp_evm/gateway_solana.json: the reference's (integraledger-terms 0.4.0) Circle Gateway payments with
a `solana:` account, made from mpp-charge-usdc-gateway.json's M5 row, so tests/mpp_evm/gateway.rs can check that the
crate reads a `solana:` TransferSpec word as the reference does (base58 of its 32 bytes). Two cases: the recipient on
Solana devnet (destinationNetwork and destinationRecipient) and the burn from Solana devnet (an accepted source, the
depositor and signer a Solana key). Each holds the challenge (M5's request with those values), the account that
chooses it, the Gateway client's answer (M5's burn intent with the accounts set and the salt the reference derives
over them), the credential the reference's build completes from that answer, and the reference's bound of it. Run it
with the peer's Python:

    /tmp/peer/bin/python scripts/peer-gateway-solana.py      # or target/peer-venv/bin/python

The Solana keys are the usdc-solana file's recipient and fee payer; every other value is the file's or the reference's
own (gateway_account, usdc_request_hash, usdc_gateway_salt, the pairing's build and bound); nothing is typed in."""

import base64
import copy
import json
import pathlib

from integraledger_terms.bindings import mpp_charge_usdc as usdc
from integraledger_terms.bindings._codec import b58_decode, canonical_json

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"
OUT = ROOT / "tests" / "mpp_evm" / "gateway_solana.json"
DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"


def load(name):
    return json.loads((VECTORS / name).read_text())


def b64u(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def word(base58):
    return "0x" + b58_decode(base58).hex()


def case(g, request, account, source, source_network, destination_network, signer_word, recipient_word):
    m5 = g["M5"]
    b6 = next(r for r in g["buyer"]["rows"] if r["name"] == "B6")
    h = b6["input"]["presented"]["challenge"]
    challenge = dict(h, request=b64u(canonical_json(request)))
    intent = copy.deepcopy(m5["payload"]["authorization"]["transfer"]["burnIntent"])
    intent["spec"]["sourceSigner"] = signer_word
    intent["spec"]["sourceDepositor"] = signer_word
    intent["spec"]["destinationRecipient"] = recipient_word
    salt_input = {
        "id": challenge["id"],
        "realm": challenge["realm"],
        "requestHash": usdc.usdc_request_hash(challenge["request"]),
        "sourceNetwork": source_network,
        "destinationNetwork": destination_network,
        "sourceDepositor": source,
        "sourceSigner": usdc.gateway_account(source_network, signer_word),
        "recipient": request["recipient"],
        "destinationRecipient": usdc.gateway_account(destination_network, recipient_word),
        "amount": intent["spec"]["value"],
        "maxFee": intent["maxFee"],
    }
    intent["spec"]["salt"] = usdc.usdc_gateway_salt(salt_input)
    answer = {
        "source": source,
        "sourceNetwork": source_network,
        "destinationNetwork": destination_network,
        "maxFee": m5["payload"]["maxFee"],
        "burnIntent": intent,
        "signature": b6["input"]["presented"]["payload"]["authorization"]["transfer"]["signature"],
    }
    pairing = usdc.MppChargeUsdcGateway()
    unsigned = pairing.build({"challenge": challenge, "from": account.rsplit(":", 1)[1]}, g["fixed"]["H"])
    presented = unsigned.complete(answer)
    return {
        "challenge": challenge,
        "account": account,
        "saltInput": salt_input,
        "answer": answer,
        "presented": presented,
        "bound": str(pairing.bound(presented)),
    }


def main():
    g = load("mpp-charge-usdc-gateway.json")
    sol = load("mpp-charge-usdc-solana.json")["fixed"]["request"]
    recipient, payer = sol["recipient"], sol["methodDetails"]["solana"]["feePayerKey"]
    m5 = g["M5"]
    base = json.loads(m5["requestJson"])
    evm_account = m5["source"]
    evm_word = m5["payload"]["authorization"]["transfer"]["burnIntent"]["spec"]["sourceSigner"]
    evm_network = m5["saltInput"]["sourceNetwork"]
    to_solana = copy.deepcopy(base)
    to_solana["recipient"] = recipient
    to_solana["methodDetails"]["gateway"]["destinationNetwork"] = DEVNET
    from_solana = copy.deepcopy(base)
    from_solana["methodDetails"]["gateway"]["acceptedSources"] = [DEVNET]
    evm_recipient = m5["payload"]["authorization"]["transfer"]["burnIntent"]["spec"]["destinationRecipient"]
    out = {
        "about": "Written by scripts/peer-gateway-solana.py from integraledger-terms 0.4.0 and mpp-charge-usdc-gateway.json's"
        " M5; do not edit.",
        "toSolana": case(g, to_solana, evm_account, evm_account, evm_network, DEVNET, evm_word, word(recipient)),
        "fromSolana": case(
            g, from_solana, f"{DEVNET}:{payer}", f"{DEVNET}:{payer}", DEVNET, m5["saltInput"]["destinationNetwork"],
            word(payer), evm_recipient,
        ),
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
