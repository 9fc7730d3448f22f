"""The Tempo answers of the differential test on the reference's side (examples/differential/tempo.rs computes the
crate's the same way; scripts/differential/mpp_tempo.py names the edits): `$tempo`, a 0x76 transaction of a
tempo-call or tempo-calls request's calls, RLP by pyrlp and signed by eth-account (both come with eth-account);
`$pushed`, a broadcasting signer's `{hash, landed}`; `$digest`, the key's signature of a request's `digest`. Each
returns None for a request of another kind."""

import copy

import rlp
from eth_account import Account
from eth_utils import keccak

TEMPO_TX_TYPE = 0x76


def _calls(request):
    if not isinstance(request, dict):
        return None
    if request.get("kind") == "tempo-call":
        return [request.get("call")]
    if request.get("kind") == "tempo-calls":
        return list(request.get("calls") or [])
    return None


def _flip_last(text):
    """The text with its last hex digit changed (the same rule on both sides)."""
    return text[:-1] + ("1" if text[-1:] == "0" else "0")


def _address(text):
    if not isinstance(text, str) or not text.startswith("0x") or len(text) != 42:
        return None
    try:
        return bytes.fromhex(text[2:])
    except ValueError:
        return None


def _bytes(text):
    if not isinstance(text, str) or not text.startswith("0x"):
        return None
    try:
        return bytes.fromhex(text[2:])
    except ValueError:
        return None


def signed_tempo(spec, request, edit_signature):
    calls = _calls(request)
    chain, valid_before = request.get("chainId") if calls is not None else None, request.get("validBefore")
    if calls is None or not isinstance(chain, int) or not isinstance(valid_before, int):
        return None
    if not all(isinstance(c, dict) for c in calls):
        return None
    calls = [dict(c) for c in calls]
    fee_token = _address(calls[0].get("to")) if calls else None
    edit, fees = spec.get("edit", "none"), spec["fees"]
    if edit == "chain":
        chain += 1
    elif edit == "token":
        calls = [dict(c, to=spec["otherToken"]) for c in calls]
    elif edit == "memo" and calls:
        calls[0]["data"] = _flip_last(calls[0].get("data", ""))
    elif edit == "double" and calls:
        calls = calls + [calls[0]]
    elif edit == "no-calls":
        calls = []
    items = []
    for c in calls:
        to, data = _address(c.get("to")), _bytes(c.get("data"))
        if to is None or data is None:
            return None
        items.append([to, 0, data])
    fields = [chain, fees["maxPriorityFeePerGas"], fees["maxFeePerGas"], fees["gas"], items, [], 0, fees["nonce"],
              valid_before, b"", fee_token or b"", b"", []]
    digest = keccak(bytes([TEMPO_TX_TYPE]) + rlp.encode(fields))
    signature = bytes(Account.unsafe_sign_hash(digest, spec["key"]).signature)
    wire = bytes([TEMPO_TX_TYPE]) + rlp.encode(fields + [signature])
    if edit == "truncate":
        wire = wire[:-1]
    elif edit == "type":
        wire = b"\x02" + wire[1:]
    return edit_signature("0x" + wire.hex(), spec.get("hexEdit", "none"))


def pushed(spec, request):
    calls = _calls(request)
    if calls is None:
        return None
    first = calls[0] if calls and isinstance(calls[0], dict) else {}
    data = first.get("data") if isinstance(first.get("data"), str) else ""
    memo = "0x" + data[138:202] if len(data) >= 202 else None
    edit, receipt = spec.get("edit", "none"), spec["receipt"]
    logs = copy.deepcopy(receipt["logs"])
    memo_logs = [log for log in logs if len(log["topics"]) == 4]
    for log in memo_logs:
        if memo is not None:
            log["topics"][3] = memo
        if edit == "memo":
            log["topics"][3] = _flip_last(log["topics"][3])
        elif edit == "upper-memo":
            log["topics"][3] = "0x" + log["topics"][3][2:].upper()
        elif edit == "token":
            log["address"] = spec["otherToken"]
        elif edit == "three-topics":
            log["topics"] = log["topics"][:3]
    if edit == "double":
        logs += copy.deepcopy(memo_logs)
    elif edit == "no-logs":
        logs = []
    h = spec["hash"]
    landed = {"transaction": h, "blockNumber": receipt["blockNumber"], "logs": logs}
    if edit == "block-zeros":
        landed["blockNumber"] = "00" + landed["blockNumber"]
    elif edit == "block-hex":
        landed["blockNumber"] = "0x64"
    elif edit == "block-number":
        landed["blockNumber"] = int(landed["blockNumber"])
    elif edit == "transaction-number":
        landed["transaction"] = 5
    elif edit == "hash-short":
        h = h[:-2]
    elif edit == "hash-upper":
        h = "0x" + h[2:].upper()
    if edit == "no-landed":
        return {"hash": h}
    if edit == "landed-not-object":
        return {"hash": h, "landed": [landed]}
    return {"hash": h, "landed": landed}


def signed_digest(spec, request, edit_signature):
    """`$digest`: the key's signature of the request's `digest` (a key authorization's, which the root key signs),
    65 bytes r || s || v, v 27 or 28, then the edit; None for a request with no 32-byte `0x` hex digest."""
    d = request.get("digest") if isinstance(request, dict) else None
    raw = _bytes(d)
    if raw is None or len(raw) != 32:
        return None
    signature = "0x" + bytes(Account.unsafe_sign_hash(raw, spec["key"]).signature).hex()
    return edit_signature(signature, spec.get("edit", "none"))
