"""The reference's side of the differential test: reads cases as JSON lines on stdin, runs each through the Python
reference (integraledger-terms 0.4.0) -- confirm, finish, check, transact -- and writes one JSON line of outcomes per
case on stdout, in the form examples/differential.rs writes the crate's. Run it with the venv scripts/differential.sh
makes (the peer and eth-account installed).

The clock is fixed (`_gate._now` returns the case's `now`) and the payment ids come from a per-case counter
(`_gate._ref` is patched to `r<seq>x<n>`, n from 1, as the crate's runner does), so both sides write the same bytes.
The fetch is an httpx.MockTransport answering each URL from the case's routes, with the status, headers and body as
given: the body is handed over as a stream, so httpx adds no Content-Length the case did not give."""

import asyncio
import json
import sys

import httpx
from eth_account import Account
from eth_account.messages import encode_typed_data

import integraledger_terms as t
from integraledger_terms import _gate

BINDINGS = {
    "x402/exact/eip155/eip3009": t.X402_EXACT_EIP155_EIP3009,
    "x402/exact/eip155/permit2": t.X402_EXACT_EIP155_PERMIT2,
    "x402/upto/eip155/permit2": t.X402_UPTO_EIP155_PERMIT2,
    "x402/exact/eip155/erc7710": t.X402_EXACT_EIP155_ERC7710,
    "x402/exact/eip155/erc7710-salt": t.X402_EXACT_EIP155_ERC7710_SALT,
    "x402/auth-capture/eip155/eip3009": t.X402_AUTH_CAPTURE_EIP155_EIP3009,
    "x402/auth-capture/eip155/permit2": t.X402_AUTH_CAPTURE_EIP155_PERMIT2,
    "x402/batch-settlement/eip155": t.X402BatchSettlementEip155(),
    "x402/batch-settlement/cloudflare": t.X402BatchSettlementCloudflare(),
}


def compact(value):
    """The payment as the wire carries it: compact JSON, members in order, non-ASCII as written."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --- the deterministic environment -------------------------------------------------------------------------------

STATE = {"now": 0, "seq": 0, "n": 0, "routes": {}, "paid": []}


def _now():
    return STATE["now"]


def _ref():
    STATE["n"] += 1
    return f"r{STATE['seq']:010d}x{STATE['n']:020d}"


_gate._now = _now
_gate._ref = _ref


def body_of(spec):
    if not isinstance(spec, dict):
        return b""
    if "hex" in spec:
        return bytes.fromhex(spec["hex"])
    if "fill" in spec:
        byte, count = spec["fill"]
        return bytes.fromhex(byte) * count
    return b""


def handler(request):
    signature = request.headers.get("payment-signature")
    if signature is not None:
        STATE["paid"].append(signature)
    route = STATE["routes"].get(str(request.url))
    reply = route.get("paid" if signature is not None else "unpaid") if isinstance(route, dict) else None
    if not isinstance(reply, dict) or reply.get("error") is True or not isinstance(reply.get("status"), int):
        raise httpx.ConnectError("no route", request=request)
    headers = [(n, v) for n, v in reply.get("headers", [])]
    return httpx.Response(reply["status"], headers=headers, stream=httpx.ByteStream(body_of(reply.get("body"))))


def routes_of(case):
    """The case's routes keyed by the URL as httpx writes it (it drops a default port, for one), so a request reaches
    the route the crate's runner, which matches the link as written, reaches; a link httpx cannot read has no route,
    and its request fails in httpx before the handler is called, as it would with a real transport."""
    out = {}
    for url, route in case.get("routes", {}).items():
        try:
            out[str(httpx.URL(url))] = route
        except Exception:
            pass
    return out


CLIENT = httpx.AsyncClient(transport=httpx.MockTransport(handler))


# --- answers -------------------------------------------------------------------------------------------------------


def sign_local(key, request):
    """eth-account's signature over an eip712 request (a list of them for a batch), 65 bytes r || s || v, v 27 or 28;
    None for any other request."""
    if not isinstance(request, dict):
        return None
    if request.get("kind") == "eip712":
        try:
            message = encode_typed_data(full_message=request["typedData"])
            return "0x" + bytes(Account.sign_message(message, key).signature).hex()
        except Exception:
            return None
    if request.get("kind") == "batch":
        out = [sign_local(key, r) for r in request.get("requests", [])]
        return None if any(s is None for s in out) else out
    return None


def edit_signature(s, edit):
    """The edits examples/differential.rs makes the same way, on one signature."""
    h = s[2:] if s.startswith("0x") else s
    if edit == "upper":
        return "0x" + h.upper()
    if edit == "prefix-0X":
        return "0X" + h
    if edit == "no-prefix":
        return h
    if edit == "drop-byte":
        return "0x" + h[:-2]
    if edit == "extra-byte":
        return "0x" + h + "00"
    if edit == "odd":
        return "0x" + h[:-1]
    if edit == "v-low":
        return "0x" + h[:-2] + f"{(int(h[-2:], 16) - 27) % 256:02x}"
    if edit == "flip-r":
        return "0x" + f"{int(h[:2], 16) ^ 0xFF:02x}" + h[2:]
    if edit == "pad-8192":
        return "0x" + h + "00" * max(0, 8192 - len(h) // 2)
    if edit == "pad-8193":
        return "0x" + h + "00" * max(0, 8193 - len(h) // 2)
    if edit == "space":
        return " " + s
    if edit == "as-list":
        return [s]
    if edit == "as-object":
        return {"signature": s}
    return s


def edit_list(items, edit):
    """The edits examples/differential.rs makes the same way, on a batch's list of signatures."""
    items = list(items)
    if edit == "swap":
        items.reverse()
    elif edit == "drop-last":
        items = items[:-1]
    elif edit == "extra":
        items = items + items[:1]
    elif edit == "first-upper" and items and isinstance(items[0], str):
        items[0] = "0x" + (items[0][2:] if items[0].startswith("0x") else items[0]).upper()
    elif edit == "first-drop-byte" and items and isinstance(items[0], str):
        items[0] = items[0][:-2]
    elif edit == "nested" and items:
        items[0] = [items[0]]
    elif edit == "as-string":
        return items[0] if items else None
    elif edit == "second":
        return items[1] if len(items) > 1 else None
    return items


def edited(answer, edit):
    if isinstance(answer, str):
        return edit_signature(answer, edit)
    if isinstance(answer, list):
        return edit_list(answer, edit)
    return answer


def answer_of(spec, request):
    if isinstance(spec, dict) and len(spec) == 1 and "$sign" in spec:
        sign = spec["$sign"]
        got = sign_local(sign["key"], request)
        return None if got is None else edited(got, sign.get("edit", "none"))
    return spec


class Wallet:
    """The case's wallet for transact: its account as given, eip712 (and batch) requests signed with its key and
    then edited, erc7710 requests answered with the case's delegation, anything else refused."""

    def __init__(self, account, key, edit, erc7710):
        self.account = account
        self.key = key
        self.edit = edit
        self.erc7710 = erc7710

    async def sign(self, request):
        if isinstance(request, dict) and request.get("kind") == "erc7710" and self.erc7710 is not None:
            return self.erc7710
        got = sign_local(self.key, request) if self.key else None
        if got is None:
            raise RuntimeError("the wallet does not sign this request")
        return edited(got, self.edit)


# --- outcomes ------------------------------------------------------------------------------------------------------


def declined(d):
    moved = None if d.moved is None else {"signed": compact(d.moved.signed), "h": d.moved.h}
    return {"declined": {"code": d.code, "detail": d.detail, "moved": moved}}


def transaction(r):
    if isinstance(r, t.Declined):
        return declined(r)
    if isinstance(r, t.Transacted):
        receipt = None
        if r.agreement is not None:
            a = r.agreement
            receipt = {"atrHash": a.atr_hash, "agreed": a.agreed, "network": a.network, "transaction": a.transaction}
        return {"signed": {
            "signed": None if r.signed is None else compact(r.signed),
            "h": r.h,
            "agreement": receipt,
            "landed": None if r.landed is None else compact(r.landed),
        }}
    if isinstance(r, t.ToApprove):
        return {"toApprove": {
            "url": r.approve.url,
            "option": compact(r.approve.option),
            "required": compact(r.approve.required),
            "h": r.h,
        }}
    return {"other": True}


def bound_of(binding, presented):
    """The pairing's own read of a presented payment, which check turns into a fixed sentence: the hash, or the
    refusal code (bound-failed where it raises, as the gate's _bound reads a raise)."""
    try:
        got = binding.bound(presented)
    except Exception:
        return {"refused": "bound-failed"}
    return {"refused": got.code} if isinstance(got, t.Refusal) else {"h": got}


def approve_edit(approve, edit):
    """The changes examples/differential.rs makes the same way to the approved agreement payment before the second
    call: the agent handing back something other than what it was given."""
    option, required, url = approve.option, approve.required, approve.url
    if edit == "amount" and isinstance(option, dict):
        option = {**option, "amount": "2"}
    elif edit == "drop-extra" and isinstance(option, dict):
        option = {k: v for k, v in option.items() if k != "extra"}
    elif edit == "other-network" and isinstance(option, dict):
        option = {**option, "network": "eip155:1"}
    elif edit == "float-timeout" and isinstance(option, dict):
        option = {**option, "maxTimeoutSeconds": 60.0}
    elif edit == "reorder" and isinstance(option, dict):
        option = dict(reversed(list(option.items())))
    elif edit == "url":
        url = url + "/x"
    elif edit == "no-accepts" and isinstance(required, dict):
        required = {**required, "accepts": []}
    elif edit == "version-1" and isinstance(required, dict):
        required = {**required, "x402Version": 1}
    else:
        return approve
    return t.AgreementPayment(url=url, option=option, required=required)


async def run_transact(case, binding, spec):
    wallet = Wallet(spec.get("account"), spec.get("key"), spec.get("edit"), spec.get("erc7710"))
    other = spec.get("agreementSigner")
    payer = None if other is None else Wallet(other.get("account"), other.get("key"), "none", None)
    inputs = case.get("inputs")
    STATE["paid"] = []
    first = await t.transact(case.get("doc"), binding, wallet, CLIENT, inputs=inputs, agreement_signer=payer)
    second = None
    if isinstance(first, t.ToApprove) and spec.get("approve") is True:
        approve = approve_edit(first.approve, spec.get("approveEdit", "none"))
        again = await t.transact(
            case.get("doc"), binding, wallet, CLIENT, inputs=inputs, agreement_signer=payer, approved=approve
        )
        second = transaction(again)
    return {"first": transaction(first), "second": second, "paid": list(STATE["paid"])}


async def run_case(case):
    binding = BINDINGS.get(case.get("pairing"))
    if binding is None:
        return {"id": case.get("id"), "error": "pairing not built"}
    STATE.update(now=case.get("now", 0), seq=case.get("seq", 0), n=0, routes=routes_of(case), paid=[])
    confirmed = await t.confirm(case.get("doc"), binding, case.get("account"), CLIENT, case.get("inputs"))
    if isinstance(confirmed, t.Declined):
        confirm_out = declined(confirmed)
    else:
        confirm_out = {"confirmed": {
            "request": confirmed.request,
            "h": confirmed.h,
            "agreement": confirmed.chosen.agreement,
            "ref": confirmed.chosen.ref,
        }}

    finished = None
    finishes = []
    for spec in case.get("finish", []):
        if isinstance(confirmed, t.Declined):
            finishes.append(None)
            continue
        answers = [answer_of(a, confirmed.request) for a in spec.get("answers", [])]
        # The reference's form of the crate's answers slice: none, one answer bare, several as a list.
        signature = None if not answers else answers[0] if len(answers) == 1 else answers
        atr = bytes.fromhex(spec["bytesHex"]) if "bytesHex" in spec else confirmed.atr_bytes
        as_binding = BINDINGS.get(spec.get("as"), binding)
        r = t.finish(atr, confirmed.chosen, signature, as_binding)
        if isinstance(r, t.Declined):
            finishes.append(declined(r))
        elif isinstance(r, t.Finished):
            if finished is None:
                finished = r.signed
            landed = None if r.landed is None else compact(r.landed)
            finishes.append({"finished": {"signed": compact(r.signed), "h": r.h, "landed": landed}})
        else:
            finishes.append({"next": {"request": r.next, "h": r.h}})

    checks = []
    for spec in case.get("checks", []):
        presented = finished if spec.get("presented") == "$signed" else spec.get("presented")
        if presented is None and spec.get("presented") == "$signed":
            checks.append(None)
            continue
        atr = bytes.fromhex(spec.get("bytesHex", ""))
        if "landed" in spec:
            r, bound = t.check(atr, presented, binding, spec["landed"]), None
        else:
            r, bound = t.check(atr, presented, binding), bound_of(binding, presented)
        checked = {"checked": r.h} if isinstance(r, t.Checked) else declined(r)
        checks.append({"check": checked, "bound": bound})

    transacted = None
    if isinstance(case.get("transact"), dict):
        # The ids start again at 1, as the crate's runner starts transact with fresh Options; its second call (the
        # approved one) goes on counting, as the crate's clone of those Options does.
        STATE.update(n=0)
        transacted = await run_transact(case, binding, case["transact"])
    return {"id": case.get("id"), "confirm": confirm_out, "finish": finishes, "checks": checks, "transact": transacted}


async def main():
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        try:
            outcome = await run_case(case)
        except Exception as e:  # the reference raised: record it as its outcome, so the comparer shows it
            outcome = {"id": case.get("id"), "raised": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(outcome, ensure_ascii=True) + "\n")
    out.flush()


if __name__ == "__main__":
    asyncio.run(main())
