"""Compares the reference's outcomes (scripts/differential/peer.py) with the crate's (examples/differential.rs), case
by case, and prints the number of cases per pairing and every difference: the case id, where it differs, and both
outcomes. Exits 1 on any difference that is not one of the excluded classes below, 0 otherwise.

    python3 compare.py cases.jsonl peer.jsonl ours.jsonl

What is compared: confirm's decline (code and detail) or its signing request, the agreement URL it chose and the
payment id; each finish's decline (code, detail, and what moved) or the payment, byte for byte as compact JSON with
member order; each check's decline or hash, and the pairing's own bound of the same payment (the hash, or the refusal
code check hides behind its fixed sentence); transact's outcome on the same terms, and the agreement payments it sent
(the PAYMENT-SIGNATURE values, byte for byte).

What is normalised, and why (nothing else is):
 1. The reference writes the integer members of an EIP-712 message (uint256 and the other integer types) as Python
    ints; the crate writes them as decimal strings, the wallet convention (eth_signTypedData_v4 takes both, and a JSON
    number loses precision past 2^53 in most wallets). This is the crate's one documented difference in the request
    form. Before comparing, each int the reference wrote in a typedData.message member whose declared EIP-712 type is
    an integer type becomes its decimal string; so does the erc7710 request's `amount` (its uint256). Nothing else in
    a request is touched: a chainId, a string, a member order that differ are differences.
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
    crate holds it as an integer too (src/json.rs parse). Such integer tokens, on either side, are rewritten as
    Python's repr of their double, as in 2, and only when the texts differ as written.
 4. A non-finite number: the reference reads a number literal past the double range in JSON text the gate parses
    itself as an infinity (JSON.parse's value) and Python's json.dumps writes it as the non-JSON token Infinity; no
    JSON value holds an infinity, JSON.stringify (and the reference's own wire writer, js_json) writes it as null, and
    the crate holds it as null. So Infinity, -Infinity and NaN tokens become null, only when the texts differ.

Excluded classes (each a documented deliberate difference of the crate, counted and listed but not failed):
 - A finish given several answers: the crate's `finish` takes `answers: &[Answer]`, one per step, where the
   reference takes one answer bare or a list. The reference cannot tell a batch's one answer (a list) from two step
   answers; the crate can, so a case handing the crate several answers where the built pairings take one is not
   comparable. Only a difference in such a finish call is excluded.
 - A lone surrogate escape (\\ud800 with no partner) in JSON text the gate parses itself (an agreement URL's
   PAYMENT-REQUIRED or receipt): JSON.parse reads it and a Python string holds it, but no Rust string can, so the crate
   reads such a text as not JSON and declines it (src/json.rs parse, README "Differences from the reference"). Only a
   difference in transact, where the agreement exchange reads that text, is excluded."""

import base64
import json
import re
import sys
from collections import Counter, OrderedDict

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
JSON_TEXT = {"signed", "option", "required", "landed"}


def diff(peer, ours, path, out, normalised):
    """Appends (path, peer, ours) for each place the two outcomes differ."""
    if path and path[-1] == "request":
        p, o = compact(norm_request(peer)), compact(ours)
        if p != o:
            out.append((path, p, o))
        elif compact(peer) != o:
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


def excluded(case, path):
    """The class a difference belongs to, when it is one of the excluded ones; None otherwise."""
    if path and path[0] == "transact" and any(_LONE_SURROGATE.search(t) for t in parsed_texts(case)):
        return "a lone surrogate escape in JSON text the gate parses (no Rust string holds one)"
    if path and path[0] == "finish" and len(path) > 1 and isinstance(path[1], int):
        call = case.get("finish", [])[path[1]]
        if len(call.get("answers", [])) >= 2:
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

    out = [("confirm", one(outcome.get("confirm")))]
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
        kept = []
        for d in found:
            why = excluded(case, d[0])
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
    steps = sorted({step for step, _ in coverage}, key=["confirm", "finish", "check", "bound", "transact"].index)
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
