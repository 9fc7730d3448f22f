"""The mutations of the MPP cases (mpp.py draws them by weight): each takes the random source and a case's builder,
changes the case, and returns what it changed, for the case's id. Stdlib only."""

import base64
import copy
import hashlib
import json

import mpp_header
import mpp_tempo
from generate import stellar_envelopes
from mpp import (
    AGREEMENT_FIRST, ANVIL_1, BASES, ED25519, EIP712, LIGHTNING, ORDER, OTHER_KEY, PAIRINGS, PAYER, PAYER_KEY, SOL_SESSION,
    STELLAR_CHARGE,
    b64u,
    compact, default_answers,
    gateway, h_body, jcs, ok_reply, place, rfc3339, sha, sign, tx, unb64u, wallet_answers,
)


def header_form(rng, b):
    """The challenges as `WWW-Authenticate` field values, their meaning kept: one value each or all in one, beside
    other schemes, parameters as tokens or quoted-strings (some characters escaped), names in any case, whitespace
    around `=` and the commas, empty list elements, unknown parameters, the scheme's case, members in another order."""
    if rng.random() < 0.5:
        more = copy.deepcopy(b.specs[0])
        more["position"] = rng.choice([1, 2, 31])
        if rng.random() < 0.5:
            more["request"] = dict(more["request"], amount=rng.choice(["1", "999", more["request"].get("amount", "1")]))
        b.specs.append(more)
        if rng.random() < 0.5:
            b.specs.reverse()
    if rng.random() < 0.3:
        b.specs[0]["description"] = rng.choice(['say "hi", \\ then go', "caf\u00e9", "a,b;c=d", " spaced \t tab "])
    challenges = [place(s) for s in b.specs]
    if rng.random() < 0.3:
        # Parameters in another order: the list the values read as keeps the order written.
        for i, c in enumerate(challenges):
            items = list(c.items())
            rng.shuffle(items)
            challenges[i] = dict(items)
    style = {
        "scheme": rng.choice(["Payment", "payment", "PAYMENT", "PaYmEnT"]),
        "case": rng.choice(["lower", "lower", "upper", "mixed"]),
        "eq": rng.choice([["="], ["=", " = "], ["\t=\t", "= ", " ="]]),
        "token": rng.choice(["never", "some", "always"]),
        "escape": rng.random() < 0.3,
        "unknown": rng.random() < 0.3,
        "sep": rng.choice([", ", ",", " , ", ",\t", ", ,", ",  ,,", "\t,", "\t,\t", " \t, \t,\t"]),
        "spaces": rng.choice([1, 1, 1, 2, 3]),
        "others": rng.random() < 0.5,
        "layout": rng.choice(["each", "one", "groups"]),
        "join": rng.choice([", ", ",", " ,  ", ", , ", "\t, ", "\t,\t", " \t,\t, "]),
    }
    b.case["headers"] = mpp_header.write_headers(rng, challenges, style)
    # The list the values were written from, which both sides must read them as (compare.py checks it).
    b.case["headersRead"] = challenges
    b.doc = challenges
    return "header form " + compact({k: v for k, v in style.items() if v not in (False, None)})[:160]


def header_caps(rng, b):
    """Header values past the caps or off the grammar: 32 and 33 Payment challenges, a value of 8192 and 8193
    characters, a token over 16 KiB, CR, LF, a control or non-Latin-1 character in a quoted-string, an unterminated
    quote, a parameter repeated (MPP's or another), one missing or empty, a parameter before any scheme, a missing
    comma; and tabs as OWS around a bare scheme, which read as spaces do."""
    c = place(b.specs[0])
    v = rng.choice(["32 challenges", "33 challenges", "32 over two values", "33 over two values", "8192 chars",
                    "8193 chars", "token 17 KiB", "CR", "LF", "CRLF", "control", "DEL", "euro", "latin1",
                    "unterminated", "backslash end", "repeated", "repeated case", "missing", "empty", "param first",
                    "no comma", "tab after scheme", "token68 then param", "bare scheme", "escaped CR",
                    "repeated unknown", "repeated unknown case", "tab before comma", "tabs around bare schemes"])
    text = mpp_header.challenge_text(rng, c, {"scheme": "Payment"})
    values = [text]
    if v in ("32 challenges", "33 challenges"):
        n = 32 if v.startswith("32") else 33
        values = [", ".join([text] * n)]
    elif v in ("32 over two values", "33 over two values"):
        n = 32 if v.startswith("32") else 33
        values = [", ".join([text] * 16), ", ".join([text] * (n - 16)) + ", Bearer x"]
    elif v in ("8192 chars", "8193 chars", "token 17 KiB"):
        size = {"8192 chars": 8192, "8193 chars": 8193, "token 17 KiB": 17 * 1024 + 30}[v]
        pad = size - len(text) - len(', x-pad=""')
        values = [text + ', x-pad="' + "p" * max(pad, 0) + '"']
        if v == "token 17 KiB":
            values = [text + ', description="' + "d" * (17 * 1024) + '"']
    elif v in ("CR", "LF", "CRLF", "control", "DEL", "euro", "latin1", "escaped CR"):
        ch = {"CR": "\r", "LF": "\n", "CRLF": "\r\n", "control": "\x01", "DEL": "\x7f", "euro": "\u20ac",
              "latin1": "\u00e9\u00ff", "escaped CR": "\\\r"}[v]
        values = [text + ', description="a' + ch + 'b"']
    elif v == "unterminated":
        values = [text + ', description="never closed']
    elif v == "backslash end":
        values = [text + ', description="ends \\']
    elif v == "repeated":
        values = [text + ', realm="other.example"']
    elif v == "repeated case":
        values = [text + ', ID="' + c["id"] + '"']
    elif v == "repeated unknown":
        values = [text + ', foo="a", foo="b"']
    elif v == "repeated unknown case":
        values = [text + ', x-note=a, X-Note="a"']
    elif v == "tab before comma":
        values = ["Negotiate\t, " + text]
        b.case["headersRead"] = [c]
    elif v == "tabs around bare schemes":
        values = ["NTLM \t,\t" + text + ",\tBasic\t", "Negotiate\t"]
        b.case["headersRead"] = [c]
    elif v in ("missing", "empty"):
        key = rng.choice(["id", "realm", "method", "intent", "request"])
        c2 = dict(c)
        if v == "missing":
            del c2[key]
        else:
            c2[key] = ""
        values = [mpp_header.challenge_text(rng, c2, {"scheme": "Payment"})]
        v += " " + key
    elif v == "param first":
        values = ['realm="x", ' + text]
    elif v == "no comma":
        values = [text.replace('", ', '" ', 1)]
    elif v == "tab after scheme":
        values = [text.replace("Payment ", "Payment\t", 1)]
    elif v == "token68 then param":
        values = ["Bearer abc==, " + text]
    elif v == "bare scheme":
        values = ["Payment, " + text, "Payment"]
    b.case["headers"] = values
    b.doc = [c]
    return f"header caps: {v}"


def positions(rng, b):
    """The id's position: 0, 1, 9, 10, 31 (ours), 32, 99, 100, leading zeros, signs, letters, empty, none, two dots;
    or the id's body not base64url of 32 bytes."""
    s = b.specs[0]
    v = rng.choice([0, 1, 9, 10, 31, 32, 33, 99, 100, "00", "01", "031", "+1", "-1", " 1", "1 ", "a", "1a", "", "1.0",
                    "\u0661", "body padded", "body cut", "body hex", "bare body", "two dots", "body loose bits"])
    body = h_body(s["h"])
    if isinstance(v, int) or v in ("00", "01", "031", "+1", "-1", " 1", "1 ", "a", "1a", "", "1.0", "\u0661"):
        s["id"] = f"{body}.{v}"
    elif v == "body padded":
        s["id"] = body + "=.0"
    elif v == "body cut":
        s["id"] = body[:-1] + ".0"
    elif v == "body hex":
        s["id"] = s["h"] + ".0"
    elif v == "bare body":
        s["id"] = body
    elif v == "two dots":
        s["id"] = body + ".0.1"
    else:
        s["id"] = body[:-1] + ("B" if body[-1] == "A" else "A") + ".0"
    if rng.random() < 0.4:
        other = copy.deepcopy(b.base.spec)
        other["position"] = rng.choice([0, 1, 31])
        b.specs.insert(rng.randrange(2), other)
        return f"position {v!r} beside a well-formed one"
    return f"position {v!r}"


def expiry(rng, b):
    """`expires` around now: past, exactly now, a second either side, future, far future, absent, malformed; the
    clock at or past it; a second challenge with another expires beside it."""
    s = b.specs[0]
    e = b.base.expires_unix
    v = rng.choice(["now-1", "now", "now+1", "past", "far past", "future", "far future", "absent", "clock at",
                    "clock past", "no Z", "lower t z", "fraction", "fraction 10", "offset", "offset +24", "second 60",
                    "feb 30", "space", "epoch", "before epoch", "empty", "number", "expired first", "expired second"])
    now = b.case["now"]
    when = {"now-1": now - 1, "now": now, "now+1": now + 1, "past": now - 3600, "far past": 1,
            "future": now + 600, "far future": 4102444800, "epoch": 0}.get(v)
    if when is not None:
        s["expires"] = rfc3339(when)
    elif v == "absent":
        s["expires"] = None
    elif v == "clock at":
        b.case["now"] = e
    elif v == "clock past":
        b.case["now"] = e + rng.choice([1, 60, 86400])
    elif v == "expired first" or v == "expired second":
        other = copy.deepcopy(b.base.spec)
        other["position"] = 1
        other["expires"] = rfc3339(now - rng.choice([0, 1, 60]))
        if rng.random() < 0.5:
            other["request"] = dict(other["request"], amount="1")
        b.specs.insert(0 if v == "expired first" else 1, other)
    else:
        s["expires"] = {"no Z": "2026-09-21T14:14:20", "lower t z": "2026-09-21t14:14:20z",
                        "fraction": "2026-09-21T14:14:20.123456789Z", "fraction 10": "2026-09-21T14:14:20.1234567891Z",
                        "offset": "2026-09-21T16:14:20+02:00", "offset +24": "2026-09-21T14:14:20+24:00",
                        "second 60": "2026-09-21T14:14:60Z", "feb 30": "2026-02-30T00:00:00Z",
                        "space": "2026-09-21 14:14:20Z", "before epoch": "1969-12-31T23:59:59Z", "empty": "",
                        "number": "1790000060"}[v]
    return f"expires {v}"


# Solana keys: the payer of the Solana fixtures (seed 01), and Token-2022's program.
SOL_PAYER = "AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9"
SOL_TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
SOL_BLOCKHASH = "EZ3rST5dvHmbanh75jc4PuLfV96vp9fEYBVeNk4FfM1k"
# The fee payer's seed (02), another key's for a signature.
SOL_OTHER_KEY = "0x" + "02" * 32

# Per-pairing request changes: (path, values). A path is a tuple of keys into the request.
ADDR = ["0x036C", "0x036cbd53842c5426634e7929541ec2318f3dcf7e", "", None, 5, "0X036CbD53842c5426634e7929541eC2318f3dCF7e",
        "0x1111111111111111111111111111111111111111", PAYER]
AMOUNTS = ["0", "1", "010", "-1", "1.5", "1e3", " 1", "", str(2**256), str(2**256 - 1), "9" * 79, 10000, None, "\u0661"]
CHAINS = [1, 8453, 0, -1, 1.5, 84532.0, "84532", 2**53, 2**53 - 1, None, True]
FIELDS = {
    "evm": [
        (("amount",), AMOUNTS), (("currency",), ADDR), (("recipient",), ADDR),
        (("methodDetails", "chainId"), CHAINS),
        (("methodDetails", "credentialTypes"), [[], ["permit2"], ["authorization"], ["transaction"], ["hash"],
                                                ["transaction", "hash"], ["permit2", "permit2"], ["other"], "permit2",
                                                None, ["authorization", "permit2", "transaction", "hash"]]),
        (("methodDetails", "permit2Address"), ADDR),
        (("methodDetails", "splits"), [[], [{"amount": "500", "recipient": ANVIL_1}],
                                       [{"amount": "10000", "recipient": ANVIL_1}], [{"amount": "x", "recipient": ANVIL_1}],
                                       [{"amount": "1", "recipient": ANVIL_1}] * 11, "x", [{"recipient": ANVIL_1}]]),
        (("externalId",), ["order-1", "", 5, None, "lcp:sha256:0x" + "11" * 32]),
        (("methodDetails", "decimals"), [6, "6", -1]),
        (("methodDetails",), [None, [], "x", {}]),
    ],
    "session": [
        (("amount",), AMOUNTS), (("currency",), ADDR), (("recipient",), ADDR),
        (("methodDetails", "chainId"), CHAINS), (("methodDetails", "escrowContract"), ADDR),
        (("methodDetails", "credentialTypes"), [[], ["hash"], ["permit2"], ["authorization"], ["transaction"], "hash",
                                                None, ["permit2", "hash"]]),
        (("methodDetails", "channelId"), ["0x" + "11" * 32, None]),
        (("methodDetails", "sessionSnapshot"), [{}, "x"]),
        (("methodDetails", "permit2Contract"), ADDR),
        (("methodDetails",), [None, [], {}]),
    ],
    "usdc": [
        (("amount",), AMOUNTS), (("currency",), ADDR + ["usdc", "USDC"]), (("recipient",), ADDR),
        (("methodDetails", "type"), ["evm", "gateway", "solana", "stacks", "other", None, 1]),
        (("methodDetails", "evm", "chainId"), CHAINS), (("methodDetails", "evm", "credentialTypes"),
                                                         [["authorization"], [], ["permit2"], None]),
        (("methodDetails", "gateway", "acceptedSources"), [[], ["eip155:84532"], ["eip155:5042002", "eip155:1"],
                                                           "eip155:5042002", None, [5]]),
        (("methodDetails", "gateway", "destinationNetwork"), ["eip155:1", "", None, 5]),
        (("methodDetails", "gateway", "maxFee"), ["0", "x", None, 5]),
        (("methodDetails", "evm"), [None, {}, "x"]), (("methodDetails", "gateway"), [None, {}, "x"]),
    ],
    "card": [
        (("amount",), AMOUNTS), (("currency",), ["usd", "", None, 5]), (("recipient",), ["", None, 5]),
        (("externalId",), ["order-1", "", 5, None, [], "lcp:sha256:0x" + "11" * 32]),
        (("methodDetails",), [None, [], "x", {}]),
    ],
    "stripe": [
        (("amount",), AMOUNTS), (("currency",), ["usd", "", None, 5]),
        (("methodDetails", "metadata"), [{}, None, "x", [], {"k" * 41: "v"}, {"k" * 40: "v"}, {"": "v"}, {"a[b]": "v"},
                                         {"k": "v" * 501}, {"k": "v" * 500}, {"k": 5},
                                         {f"k{i}": "v" for i in range(51)}, {f"k{i}": "v" for i in range(50)}]),
        (("methodDetails", "networkId"), ["", None, 5]),
        (("methodDetails",), [None, [], "x", {}]),
    ],
    "nearintents": [
        (("amount",), AMOUNTS), (("currency",), ["", None, 5]), (("recipient",), ["", None, 5]),
        (("externalId",), ["order-1", "", 5, None, "lcp:sha256:0x" + "11" * 32, "lcp:sha256:" + "ab" * 32,
                           "LCP:SHA256:0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"]),
        (("methodDetails", "originNetwork"), ["eip155:1", "EIP155:42161", "eip155", "", None, 5, "near:mainnet",
                                              "eip155:" + "1" * 33]),
        (("methodDetails",), [None, [], {}]),
    ],
    "tempo": mpp_tempo.FIELDS,
    "lightning": [
        (("amount",), AMOUNTS), (("currency",), ["sat", "SAT", "msat", "", None, 5]),
        (("methodDetails", "network"), ["mainnet", "signet", "regtest", "testnet", "", None, 5]),
        (("methodDetails", "paymentHash"), ["0x" + "ab" * 32, "ab" * 32, "AB" * 32, "ab" * 31, None, 5]),
        (("methodDetails", "invoice"), ["lnbc1", "", None, 5, "x" * 9000]),
        (("paymentHash",), ["ab" * 32, None, 5]),
        (("description",), ["the terms", "", None]),
        (("depositInvoice",), ["lnbc1", "", None, 5]),
        (("methodDetails",), [None, [], {}, "x"]),
    ],
    "tempo-session": mpp_tempo.SESSION_FIELDS,
    "tempo-subscription": mpp_tempo.SUBSCRIPTION_FIELDS,
    "solana": [
        (("amount",), AMOUNTS + [str(2**64), str(2**64 - 1)]),
        (("currency",), ["sol", "SOL", "usdc", "", None, 5, SOL_PAYER, SOL_TOKEN_2022, "0" * 44]),
        (("recipient",), ["", None, 5, SOL_PAYER, PAYER, "1" * 32, "1" * 31]),
        (("externalId",), ["order_12345", "", 5, None, "lcp:sha256:0x" + "11" * 32, "x" * 567, "x" * 566,
                           "lcp:sha256:0xBA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"]),
        (("methodDetails", "network"), ["mainnet", "devnet", "localnet", "testnet", "", None, 5]),
        (("methodDetails", "feePayer"), [True, False, "true", None, 1]),
        (("methodDetails", "feePayerKey"), [None, "", "x", SOL_PAYER, 5]),
        (("methodDetails", "recentBlockhash"), [None, "", "x", 5, SOL_PAYER, "1" * 32]),
        (("methodDetails", "decimals"), [6, 6.0, "6", -1, 256, 255, 0, None, 1.5, True]),
        (("methodDetails", "tokenProgram"), [None, SOL_TOKEN_2022, "", "x", SOL_PAYER, 5]),
        (("methodDetails", "splits"), [[], None, [{"recipient": SOL_PAYER, "amount": "1"}]]),
        (("methodDetails", "confidential"), [True, False, None, "true"]),
        (("methodDetails",), [None, [], "x", {}]),
    ],
}

# The XRPL charge's request: what its filter and build read (the recipient, the currency in its three forms, the
# amount, the network, the invoiceId, the tags, memos).
XRPL_PAYEE = "rpjfAeE3DeeHPFnN2PgGFW5YxnZFAjrEyN"
XRPL_ISSUER = "rPPdduC9MRTrXZP1J7MQyEKKEYiFigWZ6Q"
FIELDS["xrpl"] = [
    (("amount",), AMOUNTS + ["1.5", "0.0", "1000000", str(2**64), str(2**64 - 1), "1" + "0" * 40, "1." + "1" * 41]),
    (("currency",), ["XRP", "xrp", "", None, 5, {"currency": "USD", "issuer": XRPL_ISSUER},
                     {"currency": "XRP", "issuer": XRPL_ISSUER}, {"currency": "USD"}, {"currency": "US", "issuer": XRPL_ISSUER},
                     {"currency": "0158415500000000C1F76FF6ECB0BAC600000000", "issuer": XRPL_ISSUER},
                     {"mpt_issuance_id": "00" * 24}, {"mpt_issuance_id": "00" * 23}, {"currency": "USD", "issuer": "r1"}]),
    (("recipient",), ["", None, 5, XRPL_ISSUER, "rpjfAeE3DeeHPFnN2PgGFW5YxnZFAjrEyM", "r" + "1" * 24, PAYER]),
    (("methodDetails", "network"), ["mainnet", "testnet", "devnet", "localnet", "", None, 5]),
    (("methodDetails", "invoiceId"), [None, "", "ab" * 32, "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD".lower(),
                                      "BA78", "gg" * 32, 5]),
    (("methodDetails", "destinationTag"), [7, 7.0, 7.5, -1, 2**32, 2**32 - 1, "7", None]),
    (("methodDetails", "sourceTag"), [7, 2**32, "7", None]),
    (("methodDetails", "memos"), [[], None, [{"Memo": {"MemoData": "00"}}]]),
    (("methodDetails",), [None, [], "x", {}]),
]

# The Stellar charge's request: the amount, the asset contract, the muxed recipient whose id must be H's first 8
# bytes (the seller's G account, its M account with a bad checksum, the payer's M account, a contract), the asset (another
# contract, a bad checksum, an account, none), the network and the fee payer flag.
STELLAR_ASSET = "CADAMBQGAYDAMBQGAYDAMBQGAYDAMBQGAYDAMBQGAYDAMBQGAYDAMSST"
STELLAR_PAYEE = "GDFJHLAXAUMHA4OWPOB4P7YO72AQR2HMIUYFOXLXE2DZGM633K7HZDQP"
FIELDS["stellar"] = [
    (("amount",), AMOUNTS + ["1.5", "0", "10000000", str(2**63 - 1), str(2**63), str(2**127), "-1"]),
    (("currency",), [STELLAR_ASSET, "", None, 5, "XLM", "native", STELLAR_PAYEE, STELLAR_ASSET[:-1] + "A",
                     "CADQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQP5KR"]),
    (("recipient",), ["", None, 5, STELLAR_PAYEE, "MDFJHLAXAUMHA4OWPOB4P7YO72AQR2HMIUYFOXLXE2DZGM633K7HZOTYC27Y6AOP5LJQN",
                      "MBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7DOTYC27Y6AOP5IO5G",
                      "CADQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQP5KR", PAYER]),
    (("methodDetails", "network"), ["stellar:testnet", "stellar:pubnet", "stellar:mainnet", "testnet", "", None, 5]),
    (("methodDetails", "feePayer"), [True, False, "true", None, 1]),
    (("methodDetails",), [None, [], "x", {}]),
]

FIELDS["xrpl-session"] = [
    (("amount",), AMOUNTS + ["0", "100", str(2**64), str(2**64 - 1), "1.5", 100]),
    (("currency",), ["XRP", "xrp", "", None, 5, {"currency": "USD", "issuer": XRPL_ISSUER}]),
    (("recipient",), ["", None, 5, XRPL_ISSUER, "rpjfAeE3DeeHPFnN2PgGFW5YxnZFAjrEyM", PAYER]),
    (("channelId",), ["", None, "7FEED84DE7A40383F2CE4FCFC272CDB1816F255374F9110A75C6133CF776F167", 5]),
    (("methodDetails", "network"), ["mainnet", "testnet", "devnet", "localnet", "", None, 5]),
    (("methodDetails", "channelId"), ["", None, "ab" * 32]),
    (("methodDetails",), [None, [], "x", {}]),
]

# The Solana session's request: the keys the filter reads, the network, the slot, the voucher signer and its operator
# (the fee payer's key, which SV5 names), and a channel named.
SOL_FEE_PAYER = "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu"
SOL_CHANNEL = "FHsU5w9q78JYgE6HbSDQimKJEBZRNLQxGAvE6b8DvdQH"
FIELDS["solana-session"] = [
    (("amount",), AMOUNTS),
    (("currency",), ["sol", "", None, 5, SOL_PAYER, SOL_TOKEN_2022, "0" * 44, "1" * 31]),
    (("recipient",), ["", None, 5, SOL_PAYER, PAYER, "1" * 32, "1" * 31]),
    (("methodDetails", "network"), ["mainnet", "devnet", "localnet", "testnet", "", None, 5]),
    (("methodDetails", "channelProgram"), [None, "", "x", 5, SOL_PAYER, SOL_TOKEN_2022]),
    (("methodDetails", "recentBlockhash"), [None, "", "x", 5, SOL_PAYER, "1" * 32]),
    (("methodDetails", "recentSlot"), [None, "0", "", 5, 352114093, "-1", "1.5", str(2**64 - 1), str(2**64),
                                       "9" * 78, "9" * 79, "01"]),
    (("methodDetails", "voucherSigner"), ["client", "operator", "operator", "server", "", None, 5]),
    (("methodDetails", "operator"), [SOL_FEE_PAYER, SOL_PAYER, "x", None, 5]),
    (("methodDetails", "channelId"), [SOL_CHANNEL, None, "", "x"]),
    (("methodDetails",), [None, [], "x", {}]),
]

# usdc's Solana profile: the request's own members, the profile's type and its neighbours, and the Solana details
# under methodDetails.solana.
FIELDS["usdc-solana"] = [f for f in FIELDS["solana"] if f[0][0] != "methodDetails"] + [
    (("methodDetails", "solana") + path[1:], pool) for path, pool in FIELDS["solana"] if len(path) > 1
] + [
    (("methodDetails", "type"), ["solana", "evm", "gateway", "stacks", "tron", None, 1]),
    (("methodDetails", "evm"), [None, {"chainId": 84532}]), (("methodDetails", "solana"), [None, {}, "x", []]),
]


def family(pairing):
    if pairing == SOL_SESSION:
        return "solana-session"
    if pairing == "mpp/charge/usdc/solana":
        return "usdc-solana"
    if pairing in ED25519:
        return "solana"
    if pairing.startswith("mpp/charge/evm/"):
        return "evm"
    if pairing == "mpp/session/evm":
        return "session"
    if pairing.startswith("mpp/charge/usdc/"):
        return "usdc"
    if pairing == "mpp/charge/card":
        return "card"
    if pairing == "mpp/charge/nearintents":
        return "nearintents"
    if pairing in mpp_tempo.TEMPO:
        return "tempo"
    if pairing in LIGHTNING:
        return "lightning"
    if pairing == mpp_tempo.SESSION:
        return "tempo-session"
    if pairing == mpp_tempo.SUBSCRIPTION:
        return "tempo-subscription"
    if pairing == "mpp/charge/xrpl":
        return "xrpl"
    if pairing == STELLAR_CHARGE:
        return "stellar"
    if pairing == "mpp/session/xrpl":
        return "xrpl-session"
    return "stripe"


def set_path(value, path, new):
    at = value
    for k in path[:-1]:
        if not isinstance(at.get(k), dict):
            at[k] = {}
        at = at[k]
    if new is None:  # None removes the member
        at.pop(path[-1], None)
    else:
        at[path[-1]] = new


def request_field(rng, b):
    """One or two members of the request changed or removed (the pairing's own pools, or any member at random), the
    challenge placed again with the same H."""
    s = b.specs[0]
    names = []
    for _ in range(rng.choice([1, 1, 2])):
        if rng.random() < 0.7:
            path, pool = rng.choice(FIELDS[family(b.base.pairing)])
            new = copy.deepcopy(rng.choice(pool))
            set_path(s["request"], path, new)
            names.append(f"{'/'.join(path)} = {compact(new)[:50] if new is not None else 'removed'}")
        else:
            name, s["request"] = b.g.random_mutation(rng, s["request"])
            names.append(name)
    return "request " + "; ".join(names)


def request_text(rng, b):
    """The request not base64url, not RFC 8785, not JSON, not an object, over 8 KiB, too deep."""
    s = b.specs[0]
    body = json.loads(unb64u(s["raw"])) if s.get("raw") else s["request"]
    text = jcs(body)
    v = rng.choice(["padded", "std base64", "bad char", "loose bits", "not jcs order", "not jcs space",
                    "not jcs escapes", "not json", "array", "string", "number", "empty", "8 KiB", "over 8 KiB",
                    "depth 16", "depth 17", "lone surrogate", "infinite", "duplicate key", "bom", "latin1 bytes",
                    "float amount", "big integer", "negative zero"])
    raw = None
    if v == "padded":
        raw = b64u(text.encode()) + "=" * (-len(b64u(text.encode())) % 4 or 2)
    elif v == "std base64":
        raw = base64.b64encode(text.encode() + b"\xfb\xff").decode()
    elif v == "bad char":
        raw = b64u(text.encode())[:-2] + "*" + b64u(text.encode())[-1:]
    elif v == "loose bits":
        r = b64u(text.encode())
        raw = r if len(r) % 4 == 0 else r[:-1] + ("B" if r[-1] == "A" else "A")
    elif v == "not jcs order":
        raw = b64u(compact(dict(reversed(list(body.items())))).encode())
    elif v == "not jcs space":
        raw = b64u(json.dumps(body, sort_keys=True).encode())
    elif v == "not jcs escapes":
        raw = b64u(jcs(body).replace('"amount"', '"\\u0061mount"').encode())
    elif v == "not json":
        raw = b64u(b"{amount:1}")
    elif v == "array":
        raw = b64u(b"[]")
    elif v == "string":
        raw = b64u(b'"x"')
    elif v == "number":
        raw = b64u(b"1")
    elif v == "empty":
        raw = ""
    elif v in ("8 KiB", "over 8 KiB"):
        pad = 8192 - len(text.encode()) - len(',"pad":""') + (1 if v == "over 8 KiB" else 0)
        raw = b64u((text[:-1] + ',"pad":"' + "p" * pad + '"}').encode())
    elif v in ("depth 16", "depth 17"):
        n = 14 if v == "depth 16" else 15
        raw = b64u((text[:-1] + ',"z":' + "[" * n + "]" * n + "}").encode())
    elif v == "lone surrogate":
        raw = b64u((text[:-1] + ',"z":"\\ud800"}').encode())
    elif v == "infinite":
        raw = b64u((text[:-1] + ',"z":1e400}').encode())
    elif v == "duplicate key":
        raw = b64u((text[:-1] + ',"amount":"1"}').encode())
    elif v == "bom":
        raw = b64u(b"\xef\xbb\xbf" + text.encode())
    elif v == "latin1 bytes":
        raw = b64u(text.encode()[:-1] + b',"z":"\xe9"}')
    elif v == "float amount":
        raw = b64u((text[:-1] + ',"z":1.5}').encode())
    elif v == "big integer":
        raw = b64u((text[:-1] + ',"z":' + str(2**70) + "}").encode())
    else:
        raw = b64u((text[:-1] + ',"z":-0}').encode())
    s["requestText"] = raw
    return f"request text: {v}"


def other_h(rng, b):
    """Another H: in the id only, in the opaque only, in both; the opaque's legalContext in other forms; no opaque,
    an opaque not a map of strings; the link and agreement URL changed; two challenges naming different H or links."""
    s = b.specs[0]
    h2 = sha(b"abd")
    v = rng.choice(["id", "opaque", "both", "upper", "no prefix", "no 0x", "no opaque", "opaque not flat",
                    "opaque not base64url", "opaque extra", "http link", "bad link", "no link", "agreement http",
                    "agreement bad", "no agreement", "agreement for public proof", "two H", "two links",
                    "two agreements", "served other", "second without opaque"])
    if v == "id":
        s["id"] = f"{h_body(h2)}.0"
    elif v == "opaque":
        s["opaqueH"] = h2
    elif v == "both":
        s["h"] = h2
    elif v == "upper":
        s["opaqueH"] = "0x" + s["h"][2:].upper()
    elif v == "no prefix":
        s["opaqueText"] = b64u(jcs({"legalContext": s["h"], "legalContextUrl": s["link"]}).encode())
    elif v == "no 0x":
        s["opaqueH"] = s["h"][2:]
    elif v == "no opaque":
        s["opaqueText"] = None
    elif v == "opaque not flat":
        s["opaqueExtra"] = {"n": {"x": "y"}}
    elif v == "opaque not base64url":
        s["opaqueText"] = "e30="
    elif v == "opaque extra":
        s["opaqueExtra"] = {"note": rng.choice(["x", "", "\u00e9"])}
    elif v == "http link":
        s["link"] = "http://atr.seller.example/x"
    elif v == "bad link":
        s["link"] = rng.choice(["https://", "", "atr.seller.example/x", "https://atr.seller.example/" + "x" * 2100])
    elif v == "no link":
        s["opaqueText"] = b64u(jcs({"legalContext": "lcp:sha256:" + s["h"]}).encode())
    elif v == "agreement http":
        s["agreement"] = "http://pay.seller.example/agreement"
    elif v == "agreement bad":
        s["agreement"] = rng.choice(["", "https://", "/agreement", "https://pay.seller.example/" + "x" * 2100])
    elif v == "no agreement":
        s["agreement"] = None
    elif v == "agreement for public proof":
        s["agreement"] = "https://pay.seller.example/agreement/x"
    elif v in ("two H", "two links", "two agreements", "second without opaque"):
        other = copy.deepcopy(s)
        other["position"] = 1
        if v == "two H":
            other["h"] = h2
        elif v == "two links":
            other["link"] = s["link"] + "/2"
        elif v == "two agreements":
            other["agreement"] = "https://pay.seller.example/agreement/2"
        else:
            other["opaqueText"] = None
        b.specs.insert(rng.randrange(2), other)
    else:
        b.case["routes"][b.base.link] = {"unpaid": ok_reply(b"abd")}
    return f"other H: {v}"


# Challenges of other methods and intents, each placed for H.
OTHER_METHODS = [
    ("tempo", "charge", {"amount": "1", "currency": "0x20c0000000000000000000000000000000000000",
                         "recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "methodDetails": {}}),
    ("card", "charge", {"amount": "4999", "currency": "usd", "recipient": "merch_abc123"}),
    ("stripe", "charge", {"amount": "5000", "currency": "usd", "methodDetails": {"networkId": "profile_1"}}),
    ("evm", "session", {"amount": "100", "currency": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
                        "recipient": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
                        "methodDetails": {"chainId": 84532, "escrowContract": "0x1234567890AbcdEF1234567890aBcdef12345678"}}),
    ("lightning", "charge", {"amount": "1000", "currency": "sat"}),
    ("unknown", "charge", {"amount": "1"}),
    ("evm", "unknown", {"amount": "1"}),
]


def methods(rng, b):
    """A challenge the account cannot pay (another chain, method or intent, or another pairing of the same method)
    beside one it can, in either order; or only such challenges."""
    base = b.base
    other = copy.deepcopy(base.spec)
    other["position"] = 1
    other.pop("raw", None)
    v = rng.choice(["other method", "other method", "other chain", "same method other pairing", "only others",
                    "many others"])
    if v in ("other method", "only others", "many others"):
        method, intent, request = copy.deepcopy(rng.choice(OTHER_METHODS))
        other.update(method=method, intent=intent, request=request)
    elif v == "other chain":
        r = other["request"]
        if isinstance(r.get("methodDetails"), dict):
            d = r["methodDetails"]
            if "chainId" in d:
                d["chainId"] = 8453
            elif isinstance(d.get("evm"), dict):
                d["evm"]["chainId"] = 8453
            elif "originNetwork" in d:
                d["originNetwork"] = "eip155:8453"
            elif isinstance(d.get("gateway"), dict):
                d["gateway"]["acceptedSources"] = ["eip155:8453"]
        r["amount"] = "7"
    else:
        r = other["request"]
        d = r.setdefault("methodDetails", {})
        if family(base.pairing) == "evm" and isinstance(d, dict):
            d["credentialTypes"] = rng.choice([["transaction"], ["permit2"], ["authorization"], ["hash"]])
        elif family(base.pairing) == "usdc" and isinstance(d, dict):
            d["type"] = "evm" if d.get("type") == "gateway" else "gateway"
        elif base.pairing == "mpp/charge/stripe":
            other["intent"] = "subscription"
        elif base.pairing == "mpp/subscription/stripe":
            other["intent"] = "charge"
        else:
            other["method"] = "card" if other["method"] != "card" else "stripe"
    if v == "only others":
        b.specs = [other]
    elif v == "many others":
        b.specs = [dict(copy.deepcopy(other), position=i) for i in range(1, rng.choice([3, 8, 31]))] + b.specs
    else:
        b.specs.insert(rng.randrange(2), other)
    return f"methods: {v} ({other['intent']}/{other['method']})"


def opaque_digest(rng, b):
    """digest, description and header present, changed or of another type; members the challenge does not define;
    the challenge's members in another order."""
    s = b.specs[0]
    v = rng.choice(["digest", "digest empty", "description", "header", "all three", "unknown member", "order",
                    "digest number", "realm changed", "realm empty", "realm non-ascii"])
    if v == "digest":
        s["digest"] = "sha-256=:" + base64.b64encode(hashlib.sha256(b"body").digest()).decode() + ":"
    elif v == "digest empty":
        s["digest"] = ""
    elif v == "description":
        s["description"] = rng.choice(["Premium data", "", "caf\u00e9 \U0001F600"])
    elif v == "header":
        s["header"] = rng.choice(["Payment-Authorization", "Authorization"])
    elif v == "all three":
        s.update(digest="sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:", description="d",
                 header="Authorization")
    elif v == "unknown member":
        s["members"] = {rng.choice(["note", "x", "method2"]): rng.choice(["y", 5, None, {}])}
    elif v == "order":
        keys = ORDER + ["digest"]
        rng.shuffle(keys)
        s["order"] = keys
    elif v == "digest number":
        s["members"] = {"digest": 5}
    elif v == "realm changed":
        s["realm"] = "api.other.example"
    elif v == "realm empty":
        s["realm"] = ""
    else:
        s["realm"] = "r\u00e9alm.example"
    return f"challenge members: {v}"


def list_caps(rng, b):
    """The JSON list itself: 32 and 33 challenges, not a list, a challenge not an object, a member not a string, the
    list empty, null or an object."""
    v = rng.choice(["32", "33", "object", "empty", "null", "string", "non-object first", "number member",
                    "null member", "list member", "nested list"])
    c = place(b.specs[0])
    if v in ("32", "33"):
        n = int(v)
        b.doc = [place(dict(copy.deepcopy(b.specs[0]), position=i % 32)) for i in range(n)]
    elif v == "object":
        b.doc = {"challenges": [c]}
    elif v == "empty":
        b.doc = []
    elif v == "null":
        b.doc = None
    elif v == "string":
        b.doc = mpp_header.challenge_text(rng, c, {"scheme": "Payment"})
    elif v == "non-object first":
        b.doc = [rng.choice(["x", 5, None, []]), c]
    elif v == "nested list":
        b.doc = [[c]]
    else:
        key = rng.choice(["id", "realm", "expires", "opaque", "request", "digest"])
        c = dict(c)
        c[key] = {"number member": 5, "null member": None, "list member": [c.get(key, "x")]}[v]
        b.doc = [c]
        v += " " + key
    return f"list: {v}"


ACCOUNTS = [
    "eip155:1:" + PAYER, "eip155:8453:" + PAYER, "eip155:84532:" + PAYER.lower(), "eip155:84532:" + PAYER[:-1],
    "eip155:84532:", "EIP155:84532:" + PAYER, "", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:" + PAYER,
    "eip155:42161:0x2527D02599Ba641c19FEa793cD0F9a6e8457C317", "eip155:5042002:" + PAYER.lower(),
    "eip155:5042002:" + PAYER, "near:mainnet:merchant.near", "eip155:84532:0x" + "0" * 40, "eip155:42161:x%20y",
    "eip155:42161:" + "a" * 129, "eip155:9007199254740992:" + PAYER,
]


SOLANA_ACCOUNTS = [
    "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:" + SOL_PAYER, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:" + SOL_PAYER,
    "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:" + "1" * 31, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:" + "1" * 45,
    "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:" + "0" * 44, "SOLANA:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:" + SOL_PAYER,
    "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:" + "1" * 32, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:" + "z" * 44,
    "eip155:84532:" + PAYER,
]


def account(rng, b):
    if b.base.pairing in ED25519 or b.base.pairing == SOL_SESSION:
        b.case["account"] = rng.choice(SOLANA_ACCOUNTS)
        return f"account {b.case['account']}"
    b.case["account"] = rng.choice(ACCOUNTS)
    return f"account {b.case['account']}"


INPUTS = {
    "tokenDomain": [None, {}, {"name": "USDC"}, {"name": "", "version": "2"}, {"name": "USDC", "version": 2}, "USDC",
                    {"name": "USD Coin", "version": "1"}, []],
    "spender": [None, "", "0x12", ANVIL_1.lower(), PAYER, 5, "0x" + "0" * 40],
    "deposit": [None, "0", "1", "5000000", str(2**128), str(2**128 - 1), "5e6", "", 5000000, "-1", "010", "9" * 79],
    "credentialType": [None, "hash", "permit2", "authorization", "transaction", "", 5, "HASH"],
    "authorizedSigner": [None, ANVIL_1, "0x12", "", 5, "0x" + "0" * 40],
    "accountNonce": [0, 7, -1, 1.5, "7", 2**53, 2**53 - 1, None],
    "x": [1, None, "y"],
    "xrpl": [None, {}, "x", {"publicKey": "ED06", "settleDelay": 3600, "fee": "12", "sequence": 7, "lastLedgerSequence": 1000},
             {"publicKey": "0xED06", "settleDelay": -1, "fee": "12", "sequence": 7, "lastLedgerSequence": 1000},
             {"publicKey": "0xED06", "settleDelay": 2**32, "fee": "12", "sequence": 7, "lastLedgerSequence": 1000},
             {"publicKey": "0xED06", "settleDelay": 1, "fee": "012", "sequence": 7, "lastLedgerSequence": 1000},
             {"publicKey": "0xED06", "settleDelay": 1, "fee": "12", "sequence": 7, "lastLedgerSequence": 1000,
              "cancelAfter": 533171558},
             {"publicKey": "0x", "settleDelay": 1, "fee": "12", "sequence": 7, "lastLedgerSequence": 1000},
             {"publicKey": "0xZZ", "settleDelay": 1, "fee": "12", "sequence": 7.5, "lastLedgerSequence": 1000}],
    "fee": [None, "12", "0", "012", "", 12, "-1", str(2**64), "1" * 20, "1.5"],
    "sequence": [None, 7, 0, -1, 2**32, 2**32 - 1, 7.0, 7.5, "7"],
    "lastLedgerSequence": [None, 1000, 0, -1, 2**32, 2**32 - 1, 1000.0, "1000"],
    "clientId": mpp_tempo.CLIENT_IDS,
    # The Stellar charge's simulated envelope: the files' others (another amount, recipient, contract, payer, a
    # sub-invocation; signed ones; decoder-caps.json's past the caps), none, or not XDR.
    "simulatedXdr": [None, "", 5, "AAAA", "not base64", *stellar_envelopes().values()],
    "currentLedger": [None, 988, 0, -1, 2**32 - 13, 2**32 - 12, 2**32, 1.5, 988.0, "988", 2**53],
    "decimals": [None, 6, 6.0, -1, "6", 256, 255, 1.5],
    "tokenProgram": [None, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", SOL_TOKEN_2022, "", 5, "x", SOL_PAYER],
    "recentBlockhash": [None, SOL_BLOCKHASH, "", 5, "x", "1" * 32],
    "computeUnitLimit": [None, 20000, 0, -1, 2**32, 2**32 - 1, 1.5, "20000", 2**53],
    "computeUnitPrice": [None, "1", "0", "", 1, str(2**64), str(2**64 - 1), "01", "9" * 79, "-1"],
    "returnInvoice": [None, "", 5, "lnbc1", "lnbc250n1p4tzwuq", "x" * 9000, [],
                      "lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygs"],
}
PAIRING_INPUTS = {
    mpp_tempo.MEMO: ["clientId", "clientId", "x"],
    mpp_tempo.PUSH: ["clientId", "clientId", "x"],
    mpp_tempo.SESSION: ["deposit", "deposit", "authorizedSigner", "credentialType", "tokenDomain", "x"],
    "mpp/session/lightning": ["returnInvoice", "returnInvoice", "x"],
    "mpp/charge/evm/authorization": ["tokenDomain", "x"],
    "mpp/charge/usdc/evm": ["tokenDomain", "x"],
    "mpp/charge/evm/permit2": ["spender", "x"],
    "mpp/charge/evm/transaction": ["accountNonce", "accountNonce", "x"],
    "mpp/session/evm": ["deposit", "credentialType", "authorizedSigner", "tokenDomain"],
    SOL_SESSION: ["deposit", "deposit", "x"],
    "mpp/charge/solana": ["decimals", "tokenProgram", "recentBlockhash", "computeUnitLimit", "computeUnitPrice", "x"],
    "mpp/charge/usdc/solana": ["decimals", "tokenProgram", "recentBlockhash", "computeUnitLimit", "computeUnitPrice",
                               "x"],
    "mpp/charge/xrpl": ["fee", "sequence", "lastLedgerSequence", "x"],
    STELLAR_CHARGE: ["simulatedXdr", "simulatedXdr", "currentLedger", "x"],
    "mpp/session/xrpl": ["deposit", "xrpl", "xrpl", "x"],
}


def inputs(rng, b):
    """The buyer's inputs: the pairing's own missing or malformed, and inputs it does not read."""
    names = PAIRING_INPUTS.get(b.base.pairing, ["x", "tokenDomain", "deposit"])
    key = rng.choice(names)
    v = copy.deepcopy(rng.choice(INPUTS[key]))
    given = b.case["inputs"]
    if v is None:
        given.pop(key, None)
    else:
        given[key] = v
    if b.base.pairing == "mpp/session/evm":
        b.case["finish"] = [{"answers": default_answers(b.base, given)}]
    return f"input {key} = {compact(v) if v is not None else 'removed'}"


EIP712_EDITS = ["upper", "prefix-0X", "no-prefix", "drop-byte", "extra-byte", "odd", "v-low", "flip-r", "pad-8192",
                "pad-8193", "space", "as-list", "as-object"]
LITERALS = ["0x", "", None, 0, 1.5, True, [], {}, "0x" + "11" * 65, "0x" + "zz" * 65, "0x00", "0x" + "ab" * 8192,
            "0x" + "ab" * 8193, "\u00e9"]
HASHES = ["0x" + "ab" * 32, "0x" + "AB" * 32, "0X" + "ab" * 32, "ab" * 32, "0x" + "ab" * 31, "0x" + "ab" * 33,
          "0x" + "ab" * 31 + "a", "0x" + "gg" * 32, " 0x" + "ab" * 32, 5, None, ["0x" + "ab" * 32],
          {"hash": "0x" + "ab" * 32}]


def answer_variants(rng, base):
    """One finish call's answers for the pairing: right, edited, by another key, or of another form."""
    p = base.pairing
    if p in mpp_tempo.TEMPO:
        return mpp_tempo.answer_variants(rng, base, (PAYER_KEY, OTHER_KEY))
    if p in (mpp_tempo.SESSION, mpp_tempo.SUBSCRIPTION):
        return mpp_tempo.channel_answer_variants(rng, base, (PAYER_KEY, OTHER_KEY), sign)
    r = rng.random()
    if p == SOL_SESSION:
        return sol_session_answers(rng, base)
    if p in ED25519 or p == STELLAR_CHARGE:
        if r < 0.5:
            e = rng.choice(EIP712_EDITS)
            return [sign(e, base.key)], f"signature {e}"
        if r < 0.65:
            return [sign("none", SOL_OTHER_KEY)], "another key's signature"
        if r < 0.9:
            lit = rng.choice(LITERALS + ["0x" + "11" * 64, "0x" + "11" * 63])
            return [lit], f"answer {compact(lit)[:40]}"
        return rng.choice([[], [sign(key=base.key), sign(key=base.key)]]), "answers of another count"
    if p in EIP712:
        if r < 0.5:
            e = rng.choice(EIP712_EDITS)
            return [sign(e)], f"signature {e}"
        if r < 0.65:
            return [sign("none", OTHER_KEY)], "another key's signature"
        if r < 0.9:
            lit = rng.choice(LITERALS)
            return [lit], f"answer {compact(lit)[:40]}"
        return rng.choice([[], [sign(), sign()]]), "answers of another count"
    if p == "mpp/charge/evm/transaction":
        v = rng.choice(["right", "chain", "chain 8453", "nonce", "recipient", "amount", "token", "upper", "no-prefix",
                        "odd", "space", "literal", "other key", "gas", "legacy"])
        if v == "right":
            return [tx(base)], "transaction right"
        if v in ("chain", "chain 8453"):
            return [tx(base, chainId=1 if v == "chain" else 8453)], f"transaction {v}"
        if v == "nonce":
            return [tx(base, nonce=rng.choice([1, 8, 2**32]))], "transaction nonce"
        if v == "recipient":
            return [tx(base, recipient=ANVIL_1)], "transaction for another recipient"
        if v == "amount":
            return [tx(base, amount="1")], "transaction for another amount"
        if v == "token":
            return [tx(base, to=ANVIL_1)], "transaction to another token"
        if v == "gas":
            return [tx(base, gas=21000, maxFeePerGas="1", maxPriorityFeePerGas="0")], "transaction other fees"
        if v in ("upper", "no-prefix", "odd", "space"):
            return [tx(base, edit=v)], f"transaction {v}"
        if v == "other key":
            return [tx(base, key=OTHER_KEY)], "transaction by another key"
        if v == "legacy":
            return [tx(base, edit="type-1")], "transaction of type 1"
        lit = rng.choice(["0x02c0", "0x02", "0x", "not hex", "0x" + "11" * 65, 5, None, "0x02" + "c0" * 3])
        return [lit], f"transaction literal {compact(lit)}"
    if p == "mpp/charge/evm/hash":
        lit = rng.choice(HASHES + [base.file["MV12"]["hash"]])
        return [lit], f"hash {compact(lit)[:30]}"
    if p == "mpp/charge/usdc/gateway":
        v = rng.choice(["right", "keep salt", "no signature", "signature not hex", "empty source", "no maxFee",
                        "other networks", "burn intent a list", "not an object", "other depositor"])
        if v == "right":
            return [gateway(base)], "gateway right"
        if v == "keep salt":
            return [gateway(base, keep_salt=True)], "gateway M5's salt"
        if v == "no signature":
            return [gateway(base, signature=None)], "gateway no signature"
        if v == "signature not hex":
            return [gateway(base, signature="0xzz")], "gateway signature not hex"
        if v == "empty source":
            return [gateway(base, source="")], "gateway empty source"
        if v == "no maxFee":
            return [gateway(base, maxFee=None)], "gateway no maxFee"
        if v == "other networks":
            return [gateway(base, sourceNetwork="eip155:1")], "gateway other source network"
        if v == "burn intent a list":
            return [gateway(base, burnIntent=[])], "gateway burn intent a list"
        if v == "other depositor":
            return [gateway(base, source="eip155:5042002:" + ANVIL_1.lower())], "gateway other depositor"
        return [rng.choice(["0x" + "11" * 65, None, []])], "gateway answer not an object"
    if p == "mpp/session/evm":
        funding = default_answers(base)[0]
        v = rng.choice(["funding only", "funding edit", "voucher edit", "voucher other key", "three", "none",
                        "funding literal", "voucher literal", "hash funding"])
        if v == "funding only":
            return [funding], "the funding alone"
        if v == "funding edit":
            e = rng.choice(EIP712_EDITS)
            return [sign(e) if isinstance(funding, dict) else funding, sign()], f"funding {e}"
        if v == "voucher edit":
            e = rng.choice(EIP712_EDITS)
            return [funding, sign(e)], f"voucher {e}"
        if v == "voucher other key":
            return [funding, sign("none", OTHER_KEY)], "voucher by another key"
        if v == "three":
            return [funding, sign(), sign()], "three answers"
        if v == "none":
            return [], "no answer"
        if v == "funding literal":
            lit = rng.choice(LITERALS + HASHES)
            return [lit, sign()], f"funding {compact(lit)[:30]}"
        if v == "voucher literal":
            lit = rng.choice(LITERALS)
            return [funding, lit], f"voucher {compact(lit)[:30]}"
        return [rng.choice(HASHES), sign()], "a hash funding"
    if p == "mpp/session/xrpl":
        f = base.file
        blob = base.presented["payload"]["transaction"]
        lit = rng.choice([
            [{"signedBlob": blob, "claimSignature": "00"}], [{"signedBlob": blob, "claimSignature": "AB" * 70}],
            [{"signedBlob": blob, "claimSignature": ""}], [{"signedBlob": blob, "claimSignature": "0x00"}],
            [{"signedBlob": blob}], [{"claimSignature": "00"}], [{"signedBlob": blob.lower(), "claimSignature": "00"}],
            [{"signedBlob": f["XS5"]["blob"], "claimSignature": "00"}], [{"signedBlob": blob[:-2], "claimSignature": "00"}],
            [{"signedBlob": 5, "claimSignature": "00"}], [blob], [None], [], [{"signedBlob": blob, "claimSignature": 5}],
        ])
        return lit, f"open answers {compact(lit)[:40]}"
    if p == "mpp/charge/xrpl":
        blob = base.presented["payload"]["blob"]
        f = base.file
        lit = rng.choice([[blob], [blob.lower()], ["0x" + blob], [blob[:-2]], [blob + "00"], [""], [None], [5],
                          [f["V4"]["blob"]], [f["plant"]["blob"]], [f["multisigned"]["rows"][0]["blob"]],
                          [{"blob": blob}], [blob, blob], []])
        return lit, f"blob answers {compact(lit)[:40]}"
    if p in LIGHTNING:
        pre = base.presented["payload"]["preimage"]
        lit = rng.choice([[pre], [pre.upper()], ["0x" + pre], [pre[:-1]], [pre + "0"], ["11" * 32], ["gg" * 32], [""],
                          [None], [5], [[pre]], [{"preimage": pre}], [pre, pre], []])
        return lit, f"preimage answers {compact(lit)[:40]}"
    lit = rng.choice([[], [None], ["0x" + "11" * 65], [{}]])
    return lit, f"answers {compact(lit)}"


def sol_session_answers(rng, base):
    """The Solana session's answers: the open payload (SV2's) right, edited or of another form, then, for the
    operator mode's proof, the payer's signature (or another key's, or a literal)."""
    open_ = copy.deepcopy(base.presented["payload"])
    v = rng.choice(["right", "channel", "channel not a key", "action", "no transaction", "transaction", "plant",
                    "authentication", "not an object", "with proof", "proof other key", "proof literal", "three",
                    "none"])
    if v == "right":
        return [open_], "the open"
    if v == "channel":
        open_["channelId"] = rng.choice([SOL_PAYER, SOL_FEE_PAYER, "1" * 32])
    elif v == "channel not a key":
        open_["channelId"] = rng.choice(["", "x", 5, None, "0" * 44])
    elif v == "action":
        open_["action"] = rng.choice(["voucher", "close", "use", "topUp", "OPEN", None, 5])
    elif v == "no transaction":
        del open_["transaction"]
    elif v == "transaction":
        open_["transaction"] = rng.choice(["", "AAAA", "x", 5, None, "A" * 2000, open_["transaction"][:-4],
                                           open_["transaction"].rstrip("=")])
    elif v == "plant":
        plant = base.file["plants"]["solana"]
        open_["transaction"], open_["channelId"] = plant["wireBase64"], plant["channel"]
    elif v == "authentication":
        open_["authentication"] = rng.choice([{}, "x", {"challengeId": "x"}, None])
    elif v == "not an object":
        return [rng.choice(LITERALS)], "the open not an object"
    elif v == "with proof":
        return [open_, sign(key=base.key)], "the open and the proof"
    elif v == "proof other key":
        return [open_, sign("none", SOL_OTHER_KEY)], "the open and another key's proof"
    elif v == "proof literal":
        lit = rng.choice(LITERALS + ["1" * 63, "1" * 64, "1" * 88, "1" * 89, "0" * 64])
        return [open_, lit], f"the open and the proof {compact(lit)[:30]}"
    elif v == "three":
        return [open_, sign(key=base.key), sign(key=base.key)], "three answers"
    else:
        return [], "no answer"
    return [open_], f"the open, {v}"


def sol_operator_open(base):
    """SV2's open with its open instruction's authorizedSigner (account 4) the message's static key 0, the fee payer's
    key, which SV5 names as the operator: one account index byte of the message changed (its signatures are empty)."""
    open_ = copy.deepcopy(base.presented["payload"])
    wire = bytearray(base64.b64decode(open_["transaction"]))
    # The open instruction: program index 13, 14 accounts, the payer (index 1) at account 4.
    at = wire.find(bytes([0x0d, 0x0e, 0x01, 0x00, 0x09, 0x0a, 0x01]))
    assert at >= 0, "SV2's open instruction"
    wire[at + 6] = 0
    open_["transaction"] = base64.b64encode(bytes(wire)).decode()
    return open_


def sol_operator(rng, b):
    """The Solana session in operator mode (SV5's methodDetails): the open, then the payer's session proof; the open's
    signer the operator, or SV2's own (the payer's, svm/signer-not-operator)."""
    md = b.specs[0]["request"].setdefault("methodDetails", {})
    md["voucherSigner"], md["operator"] = "operator", SOL_FEE_PAYER
    own = rng.random() < 0.25
    open_ = copy.deepcopy(b.base.presented["payload"]) if own else sol_operator_open(b.base)
    b.case["finish"] = [{"answers": [open_, sign(key=b.base.key)]}, {"answers": [open_]}]
    if rng.random() < 0.6:
        b.transact(answers={"solana-session-open": open_, "ed25519-raw": sign(key=b.base.key)})
    return "operator mode, " + ("SV2's open" if own else "the operator's open")


def answers(rng, b):
    """Several finish calls, each with other answers; one over other bytes; one as another MPP pairing."""
    calls, names = [], []
    if b.base.pairing == SOL_SESSION and rng.random() < 0.5:
        names.append(sol_operator(rng, b))
    if b.base.pairing == "mpp/session/evm" and rng.random() < 0.5:
        b.case["inputs"]["credentialType"] = rng.choice(["hash", "permit2", "authorization"])
        b.case["finish"] = [{"answers": default_answers(b.base, b.case["inputs"])}]
        names.append(f"credential type {b.case['inputs']['credentialType']}")
    if b.base.pairing == "mpp/charge/evm/transaction" and rng.random() < 0.5:
        b.case["inputs"]["accountNonce"] = b.base.file_tx["nonce"] if rng.random() < 0.5 else 7
        names.append(f"accountNonce {b.case['inputs']['accountNonce']}")
    for _ in range(rng.choice([2, 3])):
        ans, name = answer_variants(rng, b.base)
        calls.append({"answers": ans})
        names.append(name)
    r = rng.random()
    if r < 0.15:
        planted = b.base.atr[:-1] + bytes([b.base.atr[-1] ^ 1])
        calls.append({"answers": default_answers(b.base, b.case["inputs"]), "bytesHex": planted.hex()})
        names.append("finish with other bytes")
    elif r < 0.3:
        other = rng.choice([p for p in PAIRINGS if p != b.base.pairing])
        calls.append({"answers": default_answers(b.base, b.case["inputs"]), "as": other})
        names.append(f"finish as {other}")
    b.case["finish"] += calls
    return "; ".join(names)


def did_pkh(chain, address):
    return f"did:pkh:eip155:{chain}:{address}"


def presented_variants(rng, b, presented):
    """A presented credential changed: its source, its payload's type and members, its echoed challenge."""
    p = copy.deepcopy(presented)
    v = rng.choice(["random", "random", "random", "source other chain", "source other payer", "no source",
                    "source not did", "type", "position", "realm", "request", "opaque", "expires", "challenge member",
                    "payload a list", "extra member", "refused member"])
    c = p.get("challenge") if isinstance(p.get("challenge"), dict) else {}
    if v == "random":
        name, p = b.g.random_mutation(rng, p)
        return p, name
    if v == "source other chain":
        p["source"] = did_pkh(rng.choice([1, 8453, 5042002, 84532]), PAYER)
    elif v == "source other payer":
        p["source"] = did_pkh(84532, ANVIL_1)
    elif v == "no source":
        p.pop("source", None)
    elif v == "source not did":
        p["source"] = rng.choice([PAYER, "did:pkh:eip155:0x1:" + PAYER, 5, "eip155:5042002:" + PAYER.lower()])
    elif v == "type" and isinstance(p.get("payload"), dict):
        p["payload"]["type"] = rng.choice(["authorization", "permit2", "transaction", "hash", "transfer", "x", None])
    elif v == "position":
        c["id"] = c.get("id", ".0")[:-1] + rng.choice(["1", "31", "32"])
    elif v == "realm":
        c["realm"] = "api.other.example"
    elif v == "request":
        c["request"] = b64u(jcs(dict(json.loads(unb64u(c.get("request", "e30"))), amount="1")).encode())
    elif v == "opaque":
        c["opaque"] = b64u(jcs({"legalContext": "lcp:sha256:" + sha(b"abd"), "legalContextUrl": b.base.link}).encode())
    elif v == "expires":
        c["expires"] = rng.choice(["2026-09-21T14:14:20", rfc3339(1), None])
        if c["expires"] is None:
            del c["expires"]
    elif v == "challenge member":
        c[rng.choice(["note", "digest"])] = rng.choice(["x", 5])
    elif v == "payload a list":
        p["payload"] = [p.get("payload")]
    elif v == "extra member":
        p["extra"] = {"x": 1}
    else:
        p["refused"] = True
    return p, v


def checks(rng, b):
    """check over presented credentials changed: the fixture's B6 credential where the file has one, else one written
    for the pairing from its challenge."""
    base = b.base
    presented = base.presented or written_credential(base)
    planted = base.atr[:-1] + bytes([base.atr[-1] ^ 1])
    names = []
    for _ in range(rng.choice([3, 4])):
        p, name = presented_variants(rng, b, presented)
        b.case["checks"].append({"bytesHex": rng.choice([base.atr, base.atr, planted]).hex(), "presented": p})
        names.append(name)
    if rng.random() < 0.3:
        other = rng.choice([f for f in BASES.values() if f.pairing != base.pairing])
        b.case["checks"].append({"bytesHex": other.atr.hex(), "presented": other.presented or written_credential(other)})
        names.append(f"{other.pairing}'s credential")
    return "check: " + "; ".join(names)


def written_credential(base):
    """A credential for a pairing whose file holds none: the B2 challenge echoed with the payload its credential
    type takes."""
    payload = {
        "mpp/charge/evm/transaction": {"type": "transaction", "signature": "0x02c0"},
        "mpp/charge/evm/hash": {"type": "hash", "hash": base.file.get("MV12", {}).get("hash", "0x" + "ab" * 32)},
    }.get(base.pairing, {"type": "token", "token": "spt_123"})
    return {"challenge": place(base.spec), "source": did_pkh(84532, PAYER), "payload": payload}


def transact_only(rng, b):
    """transact, with the wallet's signatures edited, its other answers changed, or the approval withheld."""
    r = rng.random()
    if r < 0.5:
        b.transact()
        return "transact"
    if r < 0.75 and b.base.pairing not in AGREEMENT_FIRST:
        e = rng.choice(EIP712_EDITS)
        b.transact(edit=e)
        return f"transact, wallet edit {e}"
    if r < 0.9:
        ans = wallet_answers(b.base)
        kind = rng.choice(sorted(ans))
        alt, name = answer_variants(rng, b.base)
        if alt and not (isinstance(alt[0], dict) and "$sign" in alt[0]):
            ans[kind] = alt[0]
        b.transact(answers=ans)
        return f"transact, wallet answers {kind}: {name}"
    b.transact(approve=False)
    return "transact, approval withheld"


def serve(rng, b):
    """The ATR as served: other bytes, a status, a content coding."""
    route = b.case["routes"][b.base.link]
    atr = b.base.atr
    v = rng.choice(["flip", "append", "empty", "status 404", "status 302", "gzip", "error"])
    if v == "flip":
        route["unpaid"] = ok_reply(atr[:-1] + bytes([atr[-1] ^ 0x20]))
    elif v == "append":
        route["unpaid"] = ok_reply(atr + b"\n")
    elif v == "empty":
        route["unpaid"] = ok_reply(b"")
    elif v.startswith("status"):
        route["unpaid"] = {"status": int(v[-3:]), "headers": [], "body": {"hex": atr.hex()}}
    elif v == "gzip":
        route["unpaid"] = ok_reply(atr, [["Content-Encoding", "gzip"]])
    else:
        route["unpaid"] = {"error": True}
    return f"served: {v}"


MUTATIONS = [
    (header_form, 14), (header_caps, 8), (positions, 7), (expiry, 9), (request_field, 14), (request_text, 7),
    (other_h, 8), (methods, 9), (opaque_digest, 5), (list_caps, 4), (account, 4), (inputs, 6), (answers, 14),
    (checks, 10), (transact_only, 8), (serve, 2),
]
