"""The Tempo charges' part of the MPP cases (mpp.py and mpp_mutations.py call it): the signer's answers of
`mpp/charge/tempo/memo` and `mpp/charge/tempo/push`, right and edited, and the request members their challenges are
mutated with. Stdlib only.

Each runner computes an answer against the request it answers (scripts/differential/peer_tempo.py for the reference,
examples/differential/tempo.rs for the crate):
- `{"$tempo": {key, fees, edit, hexEdit}}`: a 0x76 transaction of the `tempo-call` (or `tempo-calls`) request's calls
  on the request's chain, valid before its `validBefore`, the fees paid in the first call's token, signed by the key;
  the edit changes the transaction before it is signed (another chain, another token, the memo, a call twice, no
  calls) or its wire after (cut short, another type byte), the hexEdit its text as the EIP-712 edits do;
- `{"$pushed": {hash, receipt, edit}}`: a broadcasting signer's answer `{hash, landed}`, the landed read the file's
  receipt with every TransferWithMemo log's memo topic set to the memo of the request's first call; the edit drops
  the read, its logs or a topic, changes the memo or the token, writes the log twice, or the block number or hash in
  another form."""

import copy
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors"

MEMO = "mpp/charge/tempo/memo"
PUSH = "mpp/charge/tempo/push"
TEMPO = {MEMO, PUSH}
OTHER_TOKEN = "0x20c0000000000000000000000000000000000001"

PUSH_FILE = json.loads((VECTORS / "mpp-charge-tempo-push.json").read_text())
MEMO_FILE = json.loads((VECTORS / "mpp-charge-tempo-memo.json").read_text())


def _fees():
    """The fees, gas and nonce of the memo file's B6 transaction (as numbers: each runner writes them in RLP)."""
    return {"maxPriorityFeePerGas": 1, "maxFeePerGas": 2, "gas": 100000, "nonce": 0}


def tempo(key, edit="none", hex_edit="none"):
    return {"$tempo": {"key": key, "fees": _fees(), "edit": edit, "hexEdit": hex_edit, "otherToken": OTHER_TOKEN}}


def pushed(edit="none"):
    m = PUSH_FILE["MV13"]
    return {"$pushed": {"hash": m["T_P"], "receipt": copy.deepcopy(m["receipt"]), "edit": edit,
                        "otherToken": OTHER_TOKEN}}


def default_answers(pairing, key):
    return [tempo(key)] if pairing == MEMO else [pushed()]


def wallet_answers(pairing, key):
    a = default_answers(pairing, key)[0]
    return {"tempo-call": a, "tempo-calls": a}


def landed_check(base):
    """A check of the finished credential with the file's receipt as its landed read (push only): the read a
    signer would hand back for the fixture's challenge."""
    m = PUSH_FILE["MV13"]["receipt"]
    landed = {"transaction": PUSH_FILE["MV13"]["T_P"], "blockNumber": m["blockNumber"], "logs": m["logs"]}
    return {"bytesHex": base.atr.hex(), "presented": "$signed", "landed": landed}


TX_EDITS = ["none", "none", "chain", "token", "memo", "double", "no-calls", "truncate", "type", "other key"]
HEX_EDITS = ["upper", "no-prefix", "odd", "space", "as-list", "as-object"]
PUSH_EDITS = ["none", "none", "no-landed", "no-logs", "memo", "token", "double", "three-topics", "block-zeros",
              "block-hex", "block-number", "hash-short", "hash-upper", "landed-not-object", "transaction-number",
              "upper-memo"]


def answer_variants(rng, base, keys):
    """One finish call's answers for a Tempo charge: right, or edited as above, or literals."""
    payer, other = keys
    r = rng.random()
    if base.pairing == MEMO:
        if r < 0.7:
            e = rng.choice(TX_EDITS)
            if e == "other key":
                return [tempo(other)], "transaction by another key"
            return [tempo(payer, e)], f"transaction {e}"
        if r < 0.85:
            e = rng.choice(HEX_EDITS)
            return [tempo(payer, "none", e)], f"transaction text {e}"
        lit = rng.choice(["0x76", "0x76c0", "0x", "not hex", "0x" + "76" * 3, 5, None, [], {}, "0x" + "ab" * 65537])
        return [lit], f"transaction literal {json.dumps(lit)[:30]}"
    if r < 0.8:
        e = rng.choice(PUSH_EDITS)
        return [pushed(e)], f"pushed {e}"
    if r < 0.9:
        return [pushed(), pushed()], "two answers"
    lit = rng.choice(["0x" + "ab" * 32, {"hash": "0x" + "ab" * 32}, None, [], 5, {}])
    return [lit], f"pushed literal {json.dumps(lit)[:30]}"


# An EIP-55 (mixed-case) address: a charge's `call.to` keeps its token's as written, as the reference does.
CHECKSUMMED = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
ADDR = ["0x036C", "", None, 5, "0X20c0000000000000000000000000000000000000", "0x20c0000000000000000000000000000000000000",
        OTHER_TOKEN, "0x742d35cc6634c0532925a3b844bc9e7595f8fe00"]
AMOUNTS = ["0", "1", "010", "-1", "1.5", "1e3", " 1", "", str(2**256), str(2**256 - 1), "9" * 79, 10000, None]
SPLITS = [
    None, [], "x", [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "1"}],
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "1", "memo": "0x" + "ab" * 32}],
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "999999"}],
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "1000000"}],
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "0"}],
    [{"recipient": "0x12", "amount": "1"}],
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "1", "memo": "0x12"}],
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "1"}] * 11,
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": "1"}] * 10,
    [{"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "amount": str(2**256 - 1)}] * 2,
]
FIELDS = [
    (("amount",), AMOUNTS), (("currency",), ADDR + [CHECKSUMMED] * 4), (("recipient",), ADDR + [CHECKSUMMED]),
    (("methodDetails", "chainId"), [1, 42431, 4217, 0, -1, 1.5, "42431", 2**53, 2**53 - 1, None, True]),
    (("methodDetails", "supportedModes"), [["pull"], ["push"], ["pull", "push"], [], ["x"], "pull", None, [5]]),
    (("methodDetails", "feePayer"), [True, False, None, "true", 1]),
    (("methodDetails", "memo"), ["0x" + "ab" * 32, None, ""]),
    (("methodDetails", "splits"), SPLITS),
    (("methodDetails",), [None, [], {}, "x"]),
]
CLIENT_IDS = [None, "agent-1", "", 5, "x" * 300, "\u00e9"]


# --- mpp/session/tempo and mpp/subscription/tempo ------------------------------------------------------------------

SESSION = "mpp/session/tempo"
SUBSCRIPTION = "mpp/subscription/tempo"


def digest(key, edit="none"):
    """`{"$digest": {key, edit}}`: the key's secp256k1 signature of the request's `digest` (the key authorization's,
    which the payer's root key signs), 65 bytes r || s || v with v 27 or 28, then the EIP-712 edits' edit."""
    return {"$digest": {"key": key, "edit": edit}}


def session_answers(key, sign, funding_edit="none", voucher=None):
    """The session's two steps: the escrow open's 0x76 transaction, then the voucher's EIP-712 signature."""
    return [tempo(key, funding_edit), voucher if voucher is not None else sign()]


EIP712_EDITS = ["upper", "prefix-0X", "no-prefix", "drop-byte", "extra-byte", "odd", "v-low", "flip-r", "space",
                "as-list", "as-object"]


def channel_answer_variants(rng, base, keys, sign):
    """One finish call's answers for the Tempo session or subscription: right, edited, by another key, literals."""
    payer, other = keys
    if base.pairing == SUBSCRIPTION:
        r = rng.random()
        if r < 0.5:
            e = rng.choice(EIP712_EDITS)
            return [digest(payer, e)], f"root signature {e}"
        if r < 0.65:
            return [digest(other)], "root signature by another key"
        if r < 0.9:
            lit = rng.choice(["0x", "", None, 5, [], {}, "0x" + "11" * 65, "0x" + "zz" * 65, "0x" + "ab" * 9000])
            return [lit], f"root signature literal {json.dumps(lit)[:30]}"
        return rng.choice([[], [digest(payer), digest(payer)]]), "answers of another count"
    v = rng.choice(["funding edit", "funding edit", "voucher edit", "voucher other key", "funding only", "three",
                    "none", "funding literal", "funding other key"])
    if v == "funding edit":
        e = rng.choice(TX_EDITS)
        return session_answers(payer, sign, e), f"open transaction {e}"
    if v == "voucher edit":
        e = rng.choice(EIP712_EDITS)
        return session_answers(payer, sign, voucher=sign(e)), f"voucher {e}"
    if v == "voucher other key":
        return session_answers(payer, sign, voucher=sign("none", other)), "voucher by another key"
    if v == "funding only":
        return [tempo(payer)], "the open transaction alone"
    if v == "three":
        return session_answers(payer, sign) + [sign()], "three answers"
    if v == "none":
        return [], "no answer"
    if v == "funding other key":
        return [tempo(other), sign()], "open transaction by another key"
    lit = rng.choice(["0x76", "0x", None, 5, "0x" + "ab" * 32])
    return [lit, sign()], f"open literal {json.dumps(lit)[:30]}"


SESSION_FIELDS = [
    (("amount",), AMOUNTS), (("currency",), ADDR), (("recipient",), ADDR),
    (("methodDetails", "chainId"), [1, 42431, 4217, 0, -1, 1.5, "42431", 2**53, None]),
    (("methodDetails", "escrowContract"), ADDR + ["0x4D50500000000000000000000000000000000000"]),
    (("methodDetails", "sessionProtocol"), ["v1", "v2", "v3", "", None, 2]),
    (("methodDetails", "operator"), ADDR),
    (("methodDetails", "channelId"), ["0x" + "11" * 32, None, "x"]),
    (("methodDetails",), [None, [], {}, "x"]),
]
SUBSCRIPTION_FIELDS = [
    (("amount",), AMOUNTS), (("currency",), ADDR), (("recipient",), ADDR),
    (("subscriptionExpires",), ["2026-12-20T00:00:00Z", "2026-12-20T00:00:00", "2020-01-01T00:00:00Z", "", None, 5,
                                "2026-12-20T00:00:00.5Z", "9999-12-31T23:59:59Z"]),
    (("periodCount",), ["30", "1", "0", "-1", "1.5", str(2**64), "", None, 30]),
    (("periodUnit",), ["day", "week", "month", "", None, "DAY"]),
    (("methodDetails", "chainId"), [1, 42431, 0, -1, "42431", 2**53, None]),
    (("methodDetails", "accessKey", "accessKeyAddress"), ADDR + ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]),
    (("methodDetails", "accessKey", "keyType"), ["secp256k1", "p256", "webAuthn", "webauthn", "", None, 0]),
    (("methodDetails", "accessKey"), [None, {}, "x", []]),
    (("methodDetails",), [None, [], {}, "x"]),
]
DEPOSITS = [None, "0", "1", "10000000", str(2**96), str(2**96 - 1), str(2**128), "5e6", "", 5000000, "-1", "9" * 79]
