"""Compares the reference's outcomes (scripts/differential/peer.py) with the crate's (examples/differential/), case
by case, and prints the number of cases per pairing and every difference: the case id, where it differs, and both
outcomes. Exits 1 on any difference that is not one of the excluded classes below, 0 otherwise.

    python3 compare.py cases.jsonl peer.jsonl ours.jsonl

What is compared: confirm's decline (code and detail) or its signing request, the agreement URL it chose, the
payment id and the whole `Chosen` each side records (compact JSON with member order: the choice member for member); each finish's decline (code, detail, and what moved) or the payment, byte for byte as compact JSON with
member order; each check's decline or hash, and the pairing's own bound of the same payment (the hash, or the refusal
code check hides behind its fixed sentence); transact's outcome on the same terms, and the agreement payments it sent
(the PAYMENT-SIGNATURE values, byte for byte).

What is normalised, and why (nothing else is):
 1. The reference writes the integer members of an EIP-712 message (uint256 and the other integer types) as Python
    ints; the crate writes them as decimal strings, the wallet convention (eth_signTypedData_v4 takes both, and a JSON
    number loses precision past 2^53 in most wallets). This is the crate's one documented difference in the request
    form. Before comparing, each int the reference wrote in a typedData.message member whose declared EIP-712 type is
    an integer type becomes its decimal string; so does the erc7710 request's `amount` (its uint256), and a Tempo key
    authorization's `limit` (a uint256) at or past 2^64, which the crate writes as a decimal string because no JSON
    number it writes holds it exactly (below 2^64 both write a number). Nothing else in a request is touched: a
    chainId, a string, a member order that differ are differences.
 2. The spelling of a JSON number with a fraction or an exponent (a float) inside the payments and documents the
    outcomes carry as compact JSON text. Python's float repr and serde_json's writer (ryu) both write the shortest
    digits that round-trip to the same double, but choose the plain or the exponent form at different thresholds and
    spell the exponent differently: Python writes 1.5e-07, 1e-05 and 1e+16, serde_json 1.5e-7, 0.00001 and 1e+16.
    So each float token (one with a `.`, `e` or `E`) is rewritten on both sides as Python's repr of the double it
    denotes, and only when the two texts differ as written; the normalised count says how often that was needed.
    Integer tokens are never touched (an integer written differently, or as a float on one side, is a difference),
    except as normalisation 3 says.
 3. An integer at or past 2^64, or at or below -2^63, that the reference read from JSON text the gate parsed itself
    (an agreement URL's PAYMENT-REQUIRED): the reference holds the double nearest the literal as a Python int
    (JSON.parse's value, kept an integer) and writes its digits; serde_json's Value holds no integer outside the u64
    and i64 ranges (the crate does not enable arbitrary_precision), so such a literal reaches the crate as a float,
    and the crate holds that same double as a float. (-2^63 itself is included: a literal just below it reads as that
    double, which the crate, handed a float by serde_json, cannot tell from a float literal.) Inside the ranges the
    crate holds it as an integer too (src/json/read.rs parse). Such integer tokens, on either side, are rewritten as
    Python's repr of their double, as in 2, and only when the texts differ as written.
 4. A non-finite number: the reference reads a number literal past the double range in JSON text the gate parses
    itself as an infinity (JSON.parse's value) and Python's json.dumps writes it as the non-JSON token Infinity; no
    JSON value holds an infinity, JSON.stringify (and the reference's own wire writer, js_json) writes it as null, and
    the crate holds it as null. So Infinity, -Infinity and NaN tokens become null, only when the texts differ.

 5. The MPP sessions' voucher request (`mpp/session/evm` and `mpp/session/tempo`, the second step's typed data,
    primaryType Voucher): the crate's `types` list `EIP712Domain`, the reference's leave it out
    (eth_signTypedData_v4 derives it from the domain either way: the same digest). Where the reference's voucher
    has no `EIP712Domain` and the crate's is exactly the one its domain's members make (name, version, chainId,
    verifyingContract, in EIP-712's order), it is dropped and the typed data's members are read in the reference's
    order; nothing else in it is touched.

MPP outcomes carry, beside the x402 ones: `headers`, the challenge list each side read from the case's
`WWW-Authenticate` values (the crate with terms::mpp::decode_challenges, the reference side with mpp_header.py, the
reference having no header reader) or the refusal code, and for values the generator wrote from a list keeping its
meaning (`headersRead`), both sides must read exactly that list; the chosen challenge (`confirmed.challenge`); and each
finished credential's `Authorization: Payment` value (the crate's only once decode_credential reads it back).

Excluded classes (each a documented deliberate difference of the crate, counted and listed but not failed):
 - A finish given several answers: the crate's `finish` takes `answers: &[Answer]`, one per step, where the
   reference takes one answer bare or a list. The reference cannot tell a batch's one answer (a list) from two step
   answers; the crate can, so a case handing the crate several answers where the built pairings take one is not
   comparable. Only a difference in such a finish call is excluded, and never for the MPP session, whose two steps
   take two answers on both sides (the reference's list [funded, voucher]).
 - A lone surrogate escape (\\ud800 with no partner) in JSON text the gate parses itself (an agreement URL's
   PAYMENT-REQUIRED or receipt): JSON.parse reads it and a Python string holds it, but no Rust string can, so the crate
   reads such a text as not JSON and declines it (src/json/read.rs parse, README "Differences from the reference"). Only a
   difference in transact, where the agreement exchange reads that text, is excluded.
 - An MPP challenge that has expired: the crate does not choose a challenge whose `expires` is at or before the
   clock, and declines `no-payable-option` (`mpp/challenge-expired`) where only such challenges offer the pairing;
   the reference chooses it and signs for a time past. Excluded only where the reference's chosen challenge has
   expired by the case's clock (its RFC 3339 `expires` read here) and the crate either declined with exactly that
   code or chose another challenge that has not expired, or where the crate declined with that code, the document
   holds an expired challenge and the reference declined after its choice (its build, fetch or comparison: the
   challenge it chose was one of those the crate skipped, as the reference chooses by the same filter but for
   `expires`), or where the reference so declined and the crate chose a challenge that has not expired after an
   expired one in the document; then the case's confirm, finish, transact and the checks of the payment finish made differ with it.
 - A `did:pkh` source naming another chain than the echoed challenge's: the crate's bound refuses it (the EVM
   charges `mpp/chain-mismatch`, the session `mpp/credential-malformed` or `mpp/source-required`), the reference
   reads no chain from a source. Excluded only in a check of a presented credential whose source is
   `did:pkh:eip155:<chain>:...` with a chain other than its echoed request's chain id, where the crate's bound gave
   one of those codes (and its check declined `signed-not-bound`).
 - `mpp/charge/evm/transaction`'s signed transaction held to the request's call and the buyer's `accountNonce`
   input (both ours; the reference reads the chain id only): the crate declines `signed-not-bound`
   `evm/call-mismatch` or `evm/nonce-mismatch`, or, for an `accountNonce` that is not a non-negative safe integer,
   `no-payable-option` `mpp/input-missing`, where the reference goes on. Excluded only where the case's answer is a
   transaction of another call (`to`, recipient or amount named) for call-mismatch, one whose nonce is not the
   case's `accountNonce` for nonce-mismatch, or the case's `accountNonce` is malformed for input-missing (and,
   where the crate's confirm so declined, the finish calls and the checks of their payment it then has none of).
   For the same reason the crate's `Chosen` of such a case keeps the `accountNonce` input the reference's does not:
   excluded only where the two are the same once that one member is taken from the crate's choice.
 - The no-proof MPP pairings that sign nothing (card, Stripe, NEAR Intents) hold the choice as bound holds a
   credential's challenge before their build refuses (ours, as every MPP build does; README "Differences from the
   reference"); the reference's build refuses `mpp/no-signed-place` (`mpp/nothing-to-sign`) unread. Excluded only
   in a finish over other bytes than the chosen challenge's H, where both decline `offer-unreadable`, the reference
   with that code and the crate with `mpp/id-not-ours`.
 - A Circle Gateway burn whose `destinationNetwork` is not a network the crate's bound reads accounts of (a string
   `eip155:<chain>` or `solana:<...>`): the crate offers no payable option for it (`no-payable-option`, never asking
   a wallet to sign what its bound cannot read back; README "Differences from the reference"), where the reference
   signs the burn. Excluded only where every challenge of the case's document is such a burn and the crate's confirm
   declined `no-payable-option`; then its finish, transact and the checks of the payment finish made differ with it.
 - A Stellar simulated envelope that `decoder-caps.json` refuses (its SE2 and SE4 rows: an authorization entry that is
   not the payer's nesting one past the cap): the crate holds every value of the envelope to the caps and declines
   `offer-unreadable` `stellar/tx-malformed` (ours; docs/differences.md), where the reference bounds only the
   operation's arguments and the payer's entry and signs. Excluded only where the case's `simulatedXdr` is such a row
   and the crate's confirm (or transact) so declined; then its finish and the checks of that payment differ with it.
 - The XRPL pairings' signed blob held to the transaction built (ours; the reference reads the blob's network
   only): the crate declines `signed-not-bound` `xrpl/tx-mismatch` where the wallet's blob is not the build (the
   cases answer with the vector file's signed blobs, which no runner can re-sign: the reference has no XRPL
   encoder), where the reference returns the payment or declines `signed-not-bound` at its own bound. Excluded only
   in a finish or transact the crate so declined, with the reference's confirm request the crate's, and in the
   checks of a payment the reference's finish made and the crate's did not.
 - An XRPL address of a classic address's form whose base58check checksum fails, as an MPP XRPL request's
   `recipient` or issuer: the crate's build refuses it (`offer-unreadable`, `mpp/request-malformed`: the binary codec
   cannot write it, so no wallet is asked to sign it; ours), where the reference's filter reads the form only and hands
   the wallet a transaction no XRPL encoder writes. Excluded only where the case's chosen request holds such an address
   and the crate's confirm declined so; then its finish, transact and the checks of the payment differ with it."""

import base64
import calendar
import hashlib
import json
import os
import re
import sys
from collections import Counter, OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_xrpl import XRPL_PAIRINGS, xrpl_bad_address, xrpl_tx_mismatch  # noqa: E402

INTEGER_TYPE = re.compile(r"u?int(?:[1-9][0-9]*)?")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def norm_struct(value, type_name, types):
    """An EIP-712 struct value with the ints of its integer members as decimal strings (normalisation 1)."""
    fields = types.get(type_name) if isinstance(types, dict) else None
    if not isinstance(value, dict) or not isinstance(fields, list):
        return value
    declared = {f.get("name"): f.get("type") for f in fields if isinstance(f, dict)}
    out = {}
    for k, v in value.items():
        out[k] = norm_member(v, declared.get(k), types)
    return out


def norm_member(v, ty, types):
    if not isinstance(ty, str):
        return v
    if ty.endswith("]"):
        inner = ty[: ty.rindex("[")]
        return [norm_member(x, inner, types) for x in v] if isinstance(v, list) else v
    if INTEGER_TYPE.fullmatch(ty) and is_int(v):
        return str(v)
    if ty in types:
        return norm_struct(v, ty, types)
    return v


def norm_request(request):
    """The reference's request in the crate's form (normalisation 1)."""
    if not isinstance(request, dict):
        return request
    kind = request.get("kind")
    if kind == "eip712" and isinstance(request.get("typedData"), dict):
        typed = dict(request["typedData"])
        if "message" in typed:
            typed["message"] = norm_struct(typed["message"], typed.get("primaryType"), typed.get("types"))
        return dict(request, typedData=typed)
    if kind == "batch" and isinstance(request.get("requests"), list):
        return dict(request, requests=[norm_request(r) for r in request["requests"]])
    if kind == "erc7710" and is_int(request.get("amount")):
        return dict(request, amount=str(request["amount"]))
    if kind == "tempo-key-authorization" and isinstance(request.get("authorization"), dict):
        a = request["authorization"]
        limits = a.get("limits")
        if isinstance(limits, list):
            wide = lambda v: is_int(v) and v >= 2**64  # noqa: E731
            limits = [dict(x, limit=str(x["limit"])) if isinstance(x, dict) and wide(x.get("limit")) else x
                      for x in limits]
            return dict(request, authorization=dict(a, limits=limits))
    return request


_NUMBER_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')


def float_spelling(text):
    """Compact JSON with each float token, and each integer token outside the u64 and i64 ranges, written as Python's
    repr of its double (normalisations 2 and 3); strings and every other integer token untouched."""

    def fix(m):
        token = m.group(0)
        if token.startswith('"'):
            return token
        if token in ("Infinity", "-Infinity", "NaN"):
            return "null"
        if any(c in token for c in ".eE"):
            return repr(float(token))
        wide = int(token) >= 2**64 or int(token) <= -(2**63)
        return repr(float(token)) if wide else token

    return _NUMBER_OR_STRING.sub(fix, text)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# Outcome members that hold compact JSON text: compared as text, with normalisation 2.
JSON_TEXT = {"signed", "option", "required", "landed", "chosen"}


DOMAIN_FIELDS = [("name", "string"), ("version", "string"), ("chainId", "uint256"), ("verifyingContract", "address"),
                 ("salt", "bytes32")]


def voucher_domain(peer, ours):
    """The crate's voucher request in the reference's form (normalisation 5), or ours unchanged."""
    pt, ot = (peer or {}).get("typedData"), (ours or {}).get("typedData") if isinstance(ours, dict) else None
    if not isinstance(pt, dict) or not isinstance(ot, dict) or pt.get("primaryType") != "Voucher":
        return ours
    ptypes, otypes, domain = pt.get("types"), ot.get("types"), ot.get("domain")
    if not isinstance(ptypes, dict) or not isinstance(otypes, dict) or not isinstance(domain, dict):
        return ours
    if "EIP712Domain" in ptypes or "EIP712Domain" not in otypes:
        return ours
    derived = [{"name": k, "type": t} for k, t in DOMAIN_FIELDS if k in domain]
    if otypes["EIP712Domain"] != derived:
        return ours
    types = {k: v for k, v in otypes.items() if k != "EIP712Domain"}
    types = {k: types[k] for k in ptypes if k in types} | {k: v for k, v in types.items() if k not in ptypes}
    typed = dict(ot, types=types)
    typed = {k: typed[k] for k in pt if k in typed} | {k: v for k, v in typed.items() if k not in pt}
    return dict(ours, typedData=typed)


def diff(peer, ours, path, out, normalised):
    """Appends (path, peer, ours) for each place the two outcomes differ."""
    if path and path[-1] == "request":
        formed = voucher_domain(peer, ours)
        p, o = compact(norm_request(peer)), compact(formed)
        if p != o:
            out.append((path, p, compact(ours)))
        else:
            if formed is not ours:
                normalised["the voucher's EIP712Domain"] += 1
            if compact(peer) != o:
                normalised["uint256 strings in the request"] += 1
        return
    if isinstance(peer, dict) and isinstance(ours, dict):
        for k in OrderedDict.fromkeys(list(peer) + list(ours)):
            if k not in peer or k not in ours:
                out.append((path + [k], peer.get(k, "<absent>"), ours.get(k, "<absent>")))
            else:
                diff(peer[k], ours[k], path + [k], out, normalised)
        return
    if isinstance(peer, list) and isinstance(ours, list) and not (path and path[-1] == "paid"):
        if len(peer) != len(ours):
            out.append((path, peer, ours))
            return
        for i, (p, o) in enumerate(zip(peer, ours)):
            diff(p, o, path + [i], out, normalised)
        return
    if isinstance(peer, str) and isinstance(ours, str) and path and path[-1] in JSON_TEXT and peer != ours:
        if float_spelling(peer) == float_spelling(ours):
            normalised["number spelling"] += 1
            return
    if isinstance(peer, list) and isinstance(ours, list):  # the PAYMENT-SIGNATURE values sent, byte for byte
        if peer != ours:
            out.append((path, peer, ours))
        return
    if type(peer) is not type(ours) or peer != ours:
        out.append((path, peer, ours))


_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<![89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def parsed_texts(case):
    """The JSON texts of a case that the gate parses itself: the agreement URL's PAYMENT-REQUIRED and its bodies."""
    for route in case.get("routes", {}).values():
        for reply in (route.get("unpaid"), route.get("paid")):
            if not isinstance(reply, dict):
                continue
            for name, value in reply.get("headers", []):
                if name.lower() == "payment-required":
                    try:
                        yield base64.b64decode(value, validate=True).decode("utf-8", "replace")
                    except ValueError:
                        pass
            body = reply.get("body", {})
            if isinstance(body, dict) and "hex" in body:
                yield bytes.fromhex(body["hex"]).decode("utf-8", "replace")


_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):(\d{2}))")


def unix_of(text):
    """An RFC 3339 date-time as Unix seconds, or None (the forms the MPP challenge checks take)."""
    m = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        return None
    y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
    try:
        at = calendar.timegm((y, mo, d, hh, mm, ss, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    if m.group(7):
        at -= (1 if m.group(7) == "+" else -1) * (int(m.group(8)) * 3600 + int(m.group(9)) * 60)
    return at


def chosen_challenge(outcome):
    c = (outcome.get("confirm") or {}).get("confirmed") if isinstance(outcome, dict) else None
    try:
        return json.loads(c["challenge"]) if isinstance(c, dict) and isinstance(c.get("challenge"), str) else None
    except ValueError:
        return None


def expired_choice(case, peer, ours):
    """Whether the reference chose a challenge expired by the case's clock, and the crate, skipping it, declined
    mpp/challenge-expired or chose one that has not expired."""
    now = case.get("now", 0)
    d = (ours.get("confirm") or {}).get("declined")
    p = chosen_challenge(peer)
    if p is None and isinstance(d, dict) and d.get("detail") == "mpp/challenge-expired":
        # The crate found only expired challenges offering the pairing; the reference, which reads no expires when it
        # chooses, chose the first of them and declined later (its build of a deadline before 1970, a fetch, the
        # hash): never at its own choice.
        pd = (peer.get("confirm") or {}).get("declined") or {}
        doc = case.get("headersRead") or case.get("doc")
        expired = isinstance(doc, list) and any(
            isinstance(c, dict) and (unix_of(c.get("expires")) is not None) and unix_of(c.get("expires")) <= now
            for c in doc)
        return expired and d.get("code") == "no-payable-option" and pd.get("code") not in (None, "no-payable-option")
    if p is None and d is None:
        # The reference chose the first challenge its filter passes, expired, and declined after its choice (its build
        # of that challenge's request, as a Stellar charge of another amount than the buyer's simulated envelope
        # pays); the crate, skipping it, chose a later one that has not expired.
        pd = (peer.get("confirm") or {}).get("declined") or {}
        doc = case.get("headersRead") or case.get("doc")
        o = chosen_challenge(ours)
        if not isinstance(doc, list) or o not in doc or pd.get("code") in (None, "no-payable-option"):
            return False
        o_at = unix_of(o.get("expires"))
        earlier = doc[: doc.index(o)]
        return (o_at is None or o_at > now) and any(
            isinstance(c, dict) and unix_of(c.get("expires")) is not None and unix_of(c.get("expires")) <= now
            for c in earlier)
    at = unix_of(p.get("expires")) if isinstance(p, dict) else None
    if at is None or at > now:
        return False
    if isinstance(d, dict):
        return d.get("code") == "no-payable-option" and d.get("detail") == "mpp/challenge-expired"
    o = chosen_challenge(ours)
    o_at = unix_of(o.get("expires")) if isinstance(o, dict) else None
    return o is not None and o != p and (o_at is None or o_at > now)


def request_chain(challenge):
    """The chain id an echoed EVM challenge's request names (methodDetails.chainId, or the usdc EVM profile's)."""
    try:
        raw = challenge["request"]
        r = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        d = r.get("methodDetails") or {}
        chain = d.get("chainId", (d.get("evm") or {}).get("chainId") if isinstance(d.get("evm"), dict) else None)
        return chain if isinstance(chain, int) and not isinstance(chain, bool) else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


_DID_PKH = re.compile(r"did:pkh:eip155:([1-9][0-9]{0,15}):0x[0-9a-fA-F]{40}")
SOURCE_REFUSALS = {"mpp/chain-mismatch", "mpp/credential-malformed", "mpp/source-required"}


def other_chain_source(case, index, ours):
    """Whether check index presents a credential whose did:pkh source names another chain than its challenge's,
    which the crate refused with one of its source codes."""
    spec = case.get("checks", [])[index] if index < len(case.get("checks", [])) else None
    presented = spec.get("presented") if isinstance(spec, dict) else None
    if not isinstance(presented, dict) or not isinstance(presented.get("challenge"), dict):
        return False
    m = _DID_PKH.fullmatch(presented.get("source")) if isinstance(presented.get("source"), str) else None
    chain = request_chain(presented["challenge"])
    if m is None or chain is None or int(m.group(1)) == chain:
        return False
    got = ours.get("checks", [])[index] if index < len(ours.get("checks", [])) else None
    bound = (got or {}).get("bound") or {}
    checked = (got or {}).get("check") or {}
    return bound.get("refused") in SOURCE_REFUSALS and (checked.get("declined") or {}).get("code") == "signed-not-bound"


def tx_specs(case, path):
    """The $tx answer specs of the finish call or the transact wallet a path is in."""
    if path[0] == "finish" and len(path) > 1 and isinstance(path[1], int):
        answers = case.get("finish", [])[path[1]].get("answers", [])
    elif path[0] == "transact":
        answers = [((case.get("transact") or {}).get("answers") or {}).get("evm-call")]
    else:
        return []
    return [a["$tx"] for a in answers if isinstance(a, dict) and isinstance(a.get("$tx"), dict)]


def safe_nonce(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 2**53 - 1


def ours_declined(ours, path):
    at = ours
    for k in path[:2] if path[0] == "finish" else path[:1]:
        at = at[k] if isinstance(at, (dict, list)) and (isinstance(at, list) or k in at) else None
    if path[0] == "transact" and isinstance(at, dict):
        at = at.get("second") or at.get("first")
    return at.get("declined") if isinstance(at, dict) else None


def transaction_check(case, path, ours):
    """Whether the crate's decline at path is its own check of the signed transaction's call or nonce, or of the
    accountNonce input, for an answer or input of the case that fails it."""
    if case.get("pairing") != "mpp/charge/evm/transaction" or path[0] not in ("finish", "transact", "confirm"):
        return False
    nonce = (case.get("inputs") or {}).get("accountNonce", None)
    d = ours_declined(ours, path)
    if not isinstance(d, dict):
        return False
    if d.get("code") == "no-payable-option" and d.get("detail") == "mpp/input-missing":
        return "accountNonce" in (case.get("inputs") or {}) and not safe_nonce(nonce)
    if d.get("code") != "signed-not-bound":
        return False
    specs = tx_specs(case, path)
    if d.get("detail") == "evm/call-mismatch":
        return any(k in s for s in specs for k in ("to", "recipient", "amount"))
    if d.get("detail") == "evm/nonce-mismatch":
        return safe_nonce(nonce) and any(s.get("nonce") != nonce for s in specs)
    return False


def kept_account_nonce(case, peer, ours):
    """Whether the crate's Chosen is the reference's but for the accountNonce input the crate's
    mpp/charge/evm/transaction choice keeps, after the challenge, the payer and the time (ours)."""
    if case.get("pairing") != "mpp/charge/evm/transaction" or "accountNonce" not in (case.get("inputs") or {}):
        return False
    texts = [((o.get("confirm") or {}).get("confirmed") or {}).get("chosen") for o in (peer, ours)]
    if not all(isinstance(t, str) for t in texts):
        return False
    theirs, mine = (json.loads(t) for t in texts)
    choice = dict(mine.get("choice") or {})
    choice.pop("accountNonce", None)
    return json.dumps(dict(mine, choice=choice)) == json.dumps(theirs)


CONFIRM_ONLY = {"mpp/charge/card", "mpp/charge/stripe", "mpp/subscription/stripe", "mpp/charge/nearintents"}


def held_choice(case, path, peer, ours):
    """Whether a confirm-only pairing's finish over other bytes declined with the crate's hold of the choice."""
    if case.get("pairing") not in CONFIRM_ONLY or path[0] != "finish" or len(path) < 2 or not isinstance(path[1], int):
        return False
    spec = case.get("finish", [])[path[1]]
    confirmed = (peer.get("confirm") or {}).get("confirmed") or {}
    if "bytesHex" not in spec or "0x" + hashlib.sha256(bytes.fromhex(spec["bytesHex"])).hexdigest() == confirmed.get("h"):
        return False
    p = (peer.get("finish", [])[path[1]] or {}).get("declined") or {}
    o = (ours.get("finish", [])[path[1]] or {}).get("declined") or {}
    return (p.get("code"), o.get("code")) == ("offer-unreadable", "offer-unreadable") and p.get("detail") in (
        "mpp/no-signed-place", "mpp/nothing-to-sign") and o.get("detail") == "mpp/id-not-ours"


def challenge_requests(case, keep_unread=False):
    """The decoded `request` of each challenge of the case's document; one that does not decode is None where
    keep_unread, left out otherwise."""
    doc = case.get("headersRead") or case.get("doc")
    out = []
    for c in doc if isinstance(doc, list) else []:
        try:
            raw = c["request"]
            out.append(json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))))
        except (KeyError, TypeError, ValueError, AttributeError):
            if keep_unread:
                out.append(None)
    return out


def huge_slot(case, path, ours):
    """Whether the Solana session's first challenge names a recentSlot past 2^64 - 1 and the crate declined at the
    difference's place (or made no payment to check) with svm/input-malformed."""
    if case.get("pairing") != "mpp/session/solana" or not path:
        return False
    slots = []
    for r in challenge_requests(case):
        try:
            slots.append(r["methodDetails"]["recentSlot"])
        except (KeyError, TypeError):
            continue
    huge = [s for s in slots if isinstance(s, str) and s.isdigit() and len(s) <= 78 and int(s) >= 2**64]
    if not huge:
        return False

    def ours_at(where):
        at = ours
        for k in where:
            if isinstance(at, dict):
                at = at.get(k)
            elif isinstance(at, list) and isinstance(k, int) and k < len(at):
                at = at[k]
            else:
                return None
        return at

    declined = lambda o: isinstance(o, dict) and (o.get("declined") or {}).get("detail") == "svm/input-malformed"  # noqa: E731
    if path[0] == "confirm":
        return declined(ours_at(["confirm"]))
    if path[0] == "finish" and len(path) > 1:
        return declined(ours_at(["finish", path[1]])) or declined(ours_at(["confirm"]))
    if path[0] == "transact":
        return declined(ours_at(["transact", "first"]))
    if path[0] == "checks" and len(path) > 1 and case["checks"][path[1]].get("presented") == "$signed":
        made_none = declined(ours_at(["confirm"])) or any(declined(f) for f in (ours.get("finish") or []))
        return ours_at(["checks", path[1]]) is None and made_none
    return False


_GATEWAY_NETWORK = re.compile(r"(eip155:[0-9]+|solana:[1-9A-HJ-NP-Za-km-z]+)")


def unreadable_gateway(case, ours):
    """Whether every challenge of the case is a Gateway burn to a destinationNetwork the crate's bound cannot read
    accounts of, and the crate's confirm declined no-payable-option."""
    if case.get("pairing") != "mpp/charge/usdc/gateway":
        return False
    declined = (ours.get("confirm") or {}).get("declined") if isinstance(ours.get("confirm"), dict) else None
    if not isinstance(declined, dict) or declined.get("code") != "no-payable-option":
        return False
    networks = []
    for r in challenge_requests(case, keep_unread=True):
        try:
            networks.append(r["methodDetails"]["gateway"]["destinationNetwork"])
        except (KeyError, TypeError):
            return False
    return bool(networks) and all(
        not (isinstance(n, str) and _GATEWAY_NETWORK.fullmatch(n)) for n in networks)


_CAPS = json.loads((__import__("pathlib").Path(__file__).resolve().parents[2] / "tests/vectors/decoder-caps.json").read_text())
_REFUSED_ENVELOPES = {r["xdr"] for r in _CAPS["scval"]["envelopes"] if r["accept"] is False}


def stellar_past_caps(case, ours):
    """Whether the case's simulated envelope is one decoder-caps.json refuses and the crate declined it so."""
    inputs = case.get("inputs") if isinstance(case.get("inputs"), dict) else {}
    if case.get("pairing") not in ("x402/exact/stellar", "mpp/charge/stellar"):
        return False
    if inputs.get("simulatedXdr") not in _REFUSED_ENVELOPES:
        return False
    outcomes = [(ours.get("confirm") or {}).get("declined")] if isinstance(ours.get("confirm"), dict) else []
    first = ((ours.get("transact") or {}).get("first") or {}) if isinstance(ours.get("transact"), dict) else {}
    outcomes.append(first.get("declined") if isinstance(first, dict) else None)
    return any(isinstance(d, dict) and d.get("detail") == "stellar/tx-malformed" for d in outcomes)


def excluded(case, path, peer=None, ours=None):
    """The class a difference belongs to, when it is one of the excluded ones; None otherwise."""
    peer, ours = peer or {}, ours or {}
    if path and stellar_past_caps(case, ours):
        return "a Stellar envelope past decoder-caps.json's caps outside the payer's entry (the crate refuses it, ours)"
    if path and path[0] == "transact" and any(_LONE_SURROGATE.search(t) for t in parsed_texts(case)):
        return "a lone surrogate escape in JSON text the gate parses (no Rust string holds one)"
    mpp = str(case.get("pairing")).startswith("mpp/")
    if mpp and path and expired_choice(case, peer, ours):
        after = path[0] in ("confirm", "finish", "transact")
        of_finish = path[0] == "checks" and len(path) > 1 and case["checks"][path[1]].get("presented") == "$signed"
        if after or of_finish:
            return "an MPP challenge that has expired (the crate skips it: mpp/challenge-expired, ours)"
    if mpp and len(path) > 1 and path[0] == "checks" and isinstance(path[1], int) and other_chain_source(case, path[1], ours):
        return "a did:pkh source naming another chain (the crate refuses it, ours)"
    if path == ["confirm", "confirmed", "chosen"] and kept_account_nonce(case, peer, ours):
        return "the accountNonce input the crate's choice keeps (ours)"
    if mpp and path and transaction_check(case, path, ours):
        return "the signed transaction's call and nonce, and the accountNonce input (ours)"
    # Where the crate's confirm declined for that reason, it made no choice to finish.
    unconfirmed = transaction_check(case, ["confirm"], ours)
    if mpp and len(path) > 1 and path[0] == "finish" and unconfirmed:
        if (ours.get("finish") or [None] * (path[1] + 1))[path[1]] is None:
            return "the signed transaction's call and nonce, and the accountNonce input (ours)"
    if mpp and len(path) > 1 and path[0] == "checks" and case["checks"][path[1]].get("presented") == "$signed":
        # A check of the payment finish made, where the crate made none: its finish declined for that reason.
        finishes = range(len(case.get("finish", [])))
        declined = unconfirmed or any(transaction_check(case, ["finish", j], ours) for j in finishes)
        if ours.get("checks", [None])[path[1]] is None and declined:
            return "the signed transaction's call and nonce, and the accountNonce input (ours)"
    if path and path[0] in ("confirm", "finish", "transact", "checks") and xrpl_bad_address(case, ours):
        return "an XRPL address whose checksum fails (the crate's build refuses it, ours)"
    if path and xrpl_tx_mismatch(case, path, peer, ours):
        return "the XRPL blob held to the transaction built (xrpl/tx-mismatch, ours)"
    if len(path) > 1 and path[0] == "checks" and case.get("pairing") in XRPL_PAIRINGS:
        finishes = range(len(case.get("finish", [])))
        declined = any(xrpl_tx_mismatch(case, ["finish", j], peer, ours) for j in finishes)
        if case["checks"][path[1]].get("presented") == "$signed" and declined and ours.get("checks", [None])[path[1]] is None:
            return "the XRPL blob held to the transaction built (xrpl/tx-mismatch, ours)"
    if mpp and path and unreadable_gateway(case, ours):
        return "a Gateway burn to a network the crate's bound cannot read (no payable option, ours)"
    if mpp and huge_slot(case, path, ours):
        return "a Solana session's recentSlot past 2^64 - 1 (the crate's request holds a u64, ours)"
    if mpp and path and held_choice(case, path, peer, ours):
        return "a confirm-only MPP build holds the choice before it refuses (ours)"
    if path and path[0] == "finish" and len(path) > 1 and isinstance(path[1], int):
        call = case.get("finish", [])[path[1]]
        if len(call.get("answers", [])) >= 2 and case.get("pairing") not in (
            "mpp/session/evm", "mpp/session/tempo", "mpp/session/solana"):
            return "finish given several answers (the crate's answers: &[Answer] typed form)"
    return None


def short(value, limit=600):
    text = value if isinstance(value, str) else compact(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def kinds(outcome):
    """What each step of an outcome came to, for the coverage lines: confirmed, finished, or the decline code."""

    def one(x):
        if not isinstance(x, dict):
            return None
        if "declined" in x:
            return x["declined"]["code"]
        return next(iter(x), None)

    h = outcome.get("headers")
    out = [("headers", "read" if "list" in h else h.get("refused"))] if isinstance(h, dict) else []
    out += [("confirm", one(outcome.get("confirm")))]
    out += [("finish", one(f)) for f in outcome.get("finish", [])]
    out += [("check", one(c.get("check"))) for c in outcome.get("checks", []) if isinstance(c, dict)]
    for c in outcome.get("checks", []):
        b = c.get("bound") if isinstance(c, dict) else None
        if isinstance(b, dict):
            out.append(("bound", "h" if "h" in b else b.get("refused")))
    t = outcome.get("transact")
    if isinstance(t, dict):
        out.append(("transact", one(t.get("second") or t.get("first"))))
    return [(step, k) for step, k in out if k is not None]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    # A reference outcome may hold a lone surrogate (JSON text escapes one; Python strings hold it): print it escaped.
    sys.stdout.reconfigure(errors="backslashreplace")
    cases_path, peer_path, ours_path = sys.argv[1:4]
    cases = read_lines(cases_path)
    peer = {o["id"]: o for o in read_lines(peer_path)}
    ours = {o["id"]: o for o in read_lines(ours_path)}
    per_pairing = Counter()
    differing, excluded_by = [], Counter()
    normalised = Counter()
    coverage = Counter()
    for case in cases:
        cid = case["id"]
        per_pairing[case["pairing"]] += 1
        p, o = peer.get(cid), ours.get(cid)
        if p is None or o is None:
            differing.append((cid, [(["missing"], p is not None, o is not None)]))
            continue
        for step, k in kinds(p):
            coverage[(step, k)] += 1
        found = []
        diff(p, o, [], found, normalised)
        if "headersRead" in case:
            # Values written from a list, their meaning kept: each side must read them as that list.
            want = compact(case["headersRead"])
            for side, got in (("peer", p), ("ours", o)):
                read = (got.get("headers") or {}).get("list")
                if read != want:
                    found.append((["headers", "list", f"{side} against the list written"], want, read))
        kept = []
        for d in found:
            why = excluded(case, d[0], p, o)
            if why is None:
                kept.append(d)
            else:
                excluded_by[why] += 1
        if kept:
            differing.append((cid, kept))
    total = sum(per_pairing.values())
    print(f"{total} cases")
    for pairing, n in sorted(per_pairing.items()):
        print(f"  {n:5d}  {pairing}")
    steps = sorted({step for step, _ in coverage}, key=["headers", "confirm", "finish", "check", "bound", "transact"].index)
    for step in steps:
        counts = sorted(((k, n) for (s, k), n in coverage.items() if s == step), key=lambda x: -x[1])
        print(f"{step} outcomes (the reference's): " + ", ".join(f"{k} {n}" for k, n in counts))
    for what, n in sorted(normalised.items()):
        print(f"normalised ({what}): {n} values")
    for why, n in sorted(excluded_by.items()):
        print(f"excluded ({why}): {n} differences")
    for cid, found in differing:
        print(f"\nDIFFERENCE in case {cid}")
        for path, p, o in found:
            print(f"  at {'/'.join(str(x) for x in path) or '(outcome)'}")
            print(f"    peer: {short(p)}")
            print(f"    ours: {short(o)}")
    print(f"\n{len(differing)} of {total} cases differ")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
