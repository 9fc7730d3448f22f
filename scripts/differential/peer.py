"""The reference's side of the differential test: reads cases as JSON lines on stdin, runs each through the Python
reference (integraledger-terms 0.4.0) -- confirm, finish, check, transact -- and writes one JSON line of outcomes per
case on stdout, in the form examples/differential/ writes the crate's. Run it with the venv scripts/differential.sh
makes (the peer and eth-account installed).

The clock is fixed (`_gate._now` returns the case's `now`) and the payment ids come from a per-case counter
(`_gate._ref` is patched to `r<seq>x<n>`, n from 1, as the crate's runner does), so both sides write the same bytes.
The fetch is an httpx.MockTransport answering each URL from the case's routes, with the status, headers and body as
given: the body is handed over as a stream, so httpx adds no Content-Length the case did not give.

MPP cases: a case with `headers` has its document read from those `WWW-Authenticate` values by mpp_header.py (the
reference has no header reader); the signer's answers may be `$tx` (an EIP-1559 transaction of an evm-call request,
signed by eth-account), `$gateway` (a Gateway client's answer, its salt the reference's usdc_gateway_salt), `$tempo` or
`$pushed` (peer_tempo.py: a signed 0x76 transaction, a broadcasting signer's hash and landed read), and a
later answer of a finish call answers the request the answers before it lead to (the session's voucher); a
confirmed choice writes its challenge, a finished credential its `Authorization: Payment` value.

Every confirmed case writes its whole Chosen (`confirmed.chosen`, compact JSON in the crate's serde form); a case that
carries a `chosen` (scripts/differential/cross.py: the crate's) is finished from that Chosen instead of its own."""

import asyncio
import dataclasses
import hashlib
import json
import pathlib
import sys

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import to_checksum_address

import integraledger_terms as t
from integraledger_terms import _gate
from integraledger_terms.bindings._codec import b58_encode, b64u_encode, js_json
from integraledger_terms.bindings.mpp_charge_usdc import gateway_account, usdc_gateway_salt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mpp_header  # noqa: E402  (the reference has no WWW-Authenticate reader: see mpp_header.py)
import peer_tempo  # noqa: E402

BINDINGS = {
    "x402/exact/eip155/eip3009": t.X402_EXACT_EIP155_EIP3009,
    "x402/exact/eip155/permit2": t.X402_EXACT_EIP155_PERMIT2,
    "x402/upto/eip155/permit2": t.X402_UPTO_EIP155_PERMIT2,
    "x402/exact/eip155/erc7710": t.X402_EXACT_EIP155_ERC7710,
    "x402/exact/eip155/erc7710-salt": t.X402_EXACT_EIP155_ERC7710_SALT,
    "x402/exact/lnbtc": t.X402_EXACT_LNBTC,
    "x402/exact/lnbtc/invoice-named": t.X402_EXACT_LNBTC_INVOICE_NAMED,
    "x402/exact/solana": t.X402_EXACT_SOLANA,
    "x402/exact/stellar": t.X402_EXACT_STELLAR,
    "x402/upto/solana": t.X402_UPTO_SOLANA,
    "x402/batch-settlement/solana": t.X402_BATCH_SETTLEMENT_SOLANA,
    "x402/exact/xrpl": t.X402_EXACT_XRPL,
    "mpp/charge/xrpl": t.MPP_CHARGE_XRPL,
    "mpp/session/xrpl": t.MPP_SESSION_XRPL,
    "x402/auth-capture/eip155/eip3009": t.X402_AUTH_CAPTURE_EIP155_EIP3009,
    "x402/auth-capture/eip155/permit2": t.X402_AUTH_CAPTURE_EIP155_PERMIT2,
    "x402/batch-settlement/eip155": t.X402BatchSettlementEip155(),
    "x402/batch-settlement/cloudflare": t.X402BatchSettlementCloudflare(),
    "mpp/charge/card": t.MPP_CHARGE_CARD,
    "mpp/charge/evm/authorization": t.MPP_CHARGE_EVM_AUTHORIZATION,
    "mpp/charge/evm/hash": t.MPP_CHARGE_EVM_HASH,
    "mpp/charge/evm/permit2": t.MPP_CHARGE_EVM_PERMIT2,
    "mpp/charge/evm/transaction": t.MPP_CHARGE_EVM_TRANSACTION,
    "mpp/charge/lightning": t.MPP_CHARGE_LIGHTNING,
    "mpp/charge/nearintents": t.MPP_CHARGE_NEARINTENTS,
    "mpp/charge/solana": t.MPP_CHARGE_SOLANA,
    "mpp/charge/stellar": t.MPP_CHARGE_STELLAR,
    "mpp/charge/stripe": t.MPP_CHARGE_STRIPE,
    "mpp/charge/tempo/memo": t.MPP_CHARGE_TEMPO_MEMO,
    "mpp/charge/tempo/push": t.MPP_CHARGE_TEMPO_PUSH,
    "mpp/charge/usdc/evm": t.MPP_CHARGE_USDC_EVM,
    "mpp/charge/usdc/gateway": t.MPP_CHARGE_USDC_GATEWAY,
    "mpp/charge/usdc/solana": t.MPP_CHARGE_USDC_SOLANA,
    "mpp/session/evm": t.MPP_SESSION_EVM,
    "mpp/session/lightning": t.MPP_SESSION_LIGHTNING,
    "mpp/session/solana": t.MPP_SESSION_SOLANA,
    "mpp/session/tempo": t.MPP_SESSION_TEMPO,
    "mpp/subscription/stripe": t.MPP_SUBSCRIPTION_STRIPE,
    "mpp/subscription/tempo": t.MPP_SUBSCRIPTION_TEMPO,
    "acp/checkout/delegated": t.ACP_CHECKOUT_DELEGATED,
    "acp/checkout/undelegated": t.ACP_CHECKOUT_UNDELEGATED,
    "ack/payment-request": t.ACK_PAYMENT_REQUEST,
    "ap2/checkout-mandate": t.AP2_CHECKOUT_MANDATE,
    "ucp/checkout/ap2-mandate": t.UCP_CHECKOUT_AP2_MANDATE,
    "ucp/checkout/unsigned": t.UCP_CHECKOUT_UNSIGNED,
    "ucp/booking/ap2-mandate": t.UCP_BOOKING_AP2_MANDATE,
    "ucp/booking/unsigned": t.UCP_BOOKING_UNSIGNED,
    "card/visa-tap": t.CARD_VISA_TAP,
    "card/mastercard-vi/immediate": t.CARD_MASTERCARD_VI_IMMEDIATE,
    "card/mastercard-vi/autonomous": t.CARD_MASTERCARD_VI_AUTONOMOUS,
    "card/seller-reference": t.CARD_SELLER_REFERENCE,
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


def solana_batch(request):
    """Whether the request is a batch of solana-message and ed25519-raw requests."""
    requests = request.get("requests") if isinstance(request, dict) and request.get("kind") == "batch" else None
    return isinstance(requests, list) and len(requests) > 0 and all(
        isinstance(r, dict) and r.get("kind") in ("solana-message", "ed25519-raw") for r in requests
    )


def ed25519_signature(seed, message):
    """The ed25519 signature (the `cryptography` package, which eth-account's venv holds) of a `0x` hex message by the
    key whose seed is the `0x` hex `seed`, as `0x` hex; None where either is not hex of its form."""
    try:
        key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed.removeprefix("0x")))
        return "0x" + key.sign(bytes.fromhex(message.removeprefix("0x"))).hex()
    except (AttributeError, TypeError, ValueError):
        return None


def stellar_preimage(value):
    """A stellar-auth request's preimage: the reference's bytes, or `0x` hex as a request written to JSON holds it."""
    if isinstance(value, bytes):
        return value
    try:
        return bytes.fromhex(value.removeprefix("0x"))
    except (AttributeError, TypeError, ValueError):
        return None


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
    """The edits examples/differential/ makes the same way, on one signature."""
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
    if edit == "type-1":
        return "0x01" + h[2:]
    if edit == "as-list":
        return [s]
    if edit == "as-object":
        return {"signature": s}
    return s


def edit_list(items, edit):
    """The edits examples/differential/ makes the same way, on a batch's list of signatures."""
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


HEX = frozenset("0123456789abcdefABCDEF")


def word(value):
    return f"{value:064x}"


def signed_transaction(spec, request):
    """An EIP-1559 transaction of an evm-call request's call, eth-account's signature with the spec's key: the
    request's chain id, token and calldata unless the spec names another chain id, `to`, recipient or amount; then
    the spec's edit of its hex. None for any other request."""
    if not isinstance(request, dict) or request.get("kind") != "evm-call":
        return None
    call = request.get("call", {})
    data = call.get("data", "0x")
    if "recipient" in spec:
        data = data[:10] + word(int(spec["recipient"], 16)) + data[74:]
    if "amount" in spec:
        data = data[:74] + word(int(spec["amount"]))
    to = spec.get("to", call.get("to"))
    if isinstance(to, str) and len(to) == 42 and to.startswith("0x") and all(c in HEX for c in to[2:]):
        # eth-account signs a `to` only in its checksum form; the address is the same 20 bytes in any case, as the
        # crate's side (examples/differential/answers.rs) reads it.
        to = to_checksum_address(to)
    tx = {
        "type": 2, "chainId": spec.get("chainId", request.get("chainId")), "nonce": spec["nonce"],
        "maxPriorityFeePerGas": int(spec["maxPriorityFeePerGas"]), "maxFeePerGas": int(spec["maxFeePerGas"]),
        "gas": spec["gas"], "to": to, "value": 0, "data": data, "accessList": [],
    }
    raw = "0x" + bytes(Account.sign_transaction(tx, spec["key"]).raw_transaction).hex()
    return edit_signature(raw, spec.get("edit", "none"))


def gateway_decimal(v):
    return str(int(v)) if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) <= 78 else None


def gateway_answer(spec, request):
    """The Gateway client's answer: the spec's answer with its burn intent's salt set to the reference's usdc
    derivation over the request's preimage and the answer's own values (unless keepSalt, or a value is missing)."""
    a = json.loads(json.dumps(spec["answer"]))
    preimage = request.get("preimage") if isinstance(request, dict) else None
    intent = a.get("burnIntent") if isinstance(a, dict) else None
    tspec = intent.get("spec") if isinstance(intent, dict) else None
    if spec.get("keepSalt") or not isinstance(preimage, dict) or not isinstance(tspec, dict):
        return a
    source_network, destination_network = a.get("sourceNetwork"), a.get("destinationNetwork")
    if not isinstance(source_network, str) or not isinstance(destination_network, str):
        return a
    salt = usdc_gateway_salt({
        "id": preimage.get("id"), "realm": preimage.get("realm"), "requestHash": preimage.get("requestHash"),
        "sourceNetwork": source_network, "destinationNetwork": destination_network, "sourceDepositor": a.get("source"),
        "sourceSigner": gateway_account(source_network, tspec.get("sourceSigner")),
        "recipient": preimage.get("recipient"),
        "destinationRecipient": gateway_account(destination_network, tspec.get("destinationRecipient")),
        "amount": gateway_decimal(tspec.get("value")), "maxFee": gateway_decimal(intent.get("maxFee")),
    })
    if isinstance(salt, str):
        tspec["salt"] = salt
    return a


def answer_of(spec, request):
    if isinstance(spec, dict) and len(spec) == 1 and "$sign" in spec:
        sign = spec["$sign"]
        if isinstance(request, dict) and request.get("kind") == "solana-message":
            got = ed25519_signature(sign["key"], request.get("message"))  # the key as an ed25519 seed
        elif isinstance(request, dict) and request.get("kind") == "stellar-auth":
            # A Soroban authorization entry: the key as an ed25519 seed signs SHA-256 of the preimage.
            preimage = stellar_preimage(request.get("preimage"))
            got = None if preimage is None else ed25519_signature(sign["key"], "0x" + hashlib.sha256(preimage).hexdigest())
        elif isinstance(request, dict) and request.get("kind") == "ed25519-raw":
            # The Solana session's proof: the key as an ed25519 seed, in base58.
            sig = ed25519_signature(sign["key"], request.get("message"))
            got = None if sig is None else b58_encode(bytes.fromhex(sig[2:]))
        elif solana_batch(request):
            # A Solana batch-settlement opening: each request signed with the key as an ed25519 seed, in base58.
            sigs = [ed25519_signature(sign["key"], r.get("message")) for r in request["requests"]]
            got = None if None in sigs else [b58_encode(bytes.fromhex(s[2:])) for s in sigs]
        else:
            got = sign_local(sign["key"], request)
        return None if got is None else edited(got, sign.get("edit", "none"))
    if isinstance(spec, dict) and len(spec) == 1 and "$tx" in spec:
        return signed_transaction(spec["$tx"], request)
    if isinstance(spec, dict) and len(spec) == 1 and "$gateway" in spec:
        return gateway_answer(spec["$gateway"], request)
    if isinstance(spec, dict) and len(spec) == 1 and "$tempo" in spec:
        return peer_tempo.signed_tempo(spec["$tempo"], request, edit_signature)
    if isinstance(spec, dict) and len(spec) == 1 and "$pushed" in spec:
        return peer_tempo.pushed(spec["$pushed"], request)
    if isinstance(spec, dict) and len(spec) == 1 and "$digest" in spec:
        return peer_tempo.signed_digest(spec["$digest"], request, edit_signature)
    return spec


def authorization(pairing, signed):
    """MPP's Authorization value for a credential: `Payment `, then base64url of JSON.stringify's text of it."""
    if not str(pairing).startswith("mpp/") or not isinstance(signed, dict):
        return None
    try:
        return "Payment " + b64u_encode(js_json(signed).encode())
    except (TypeError, ValueError):
        return None


class Wallet:
    """The case's wallet for transact: its account as given, eip712 (and batch) requests signed with its key and
    then edited, erc7710 requests answered with the case's delegation, anything else refused."""

    def __init__(self, account, key, edit, erc7710, answers=None):
        self.account = account
        self.key = key
        self.edit = edit
        self.erc7710 = erc7710
        self.answers = answers or {}

    async def sign(self, request):
        if isinstance(request, dict) and request.get("kind") == "erc7710" and self.erc7710 is not None:
            return self.erc7710
        if isinstance(request, dict) and request.get("kind") in self.answers:
            return answer_of(self.answers[request["kind"]], request)
        got = sign_local(self.key, request) if self.key else None
        if got is None:
            raise RuntimeError("the wallet does not sign this request")
        return edited(got, self.edit)


# --- outcomes ------------------------------------------------------------------------------------------------------


def declined(d):
    moved = None if d.moved is None else {"signed": compact(d.moved.signed), "h": d.moved.h}
    return {"declined": {"code": d.code, "detail": d.detail, "moved": moved}}


def transaction(r, pairing=None):
    if isinstance(r, t.Declined):
        return declined(r)
    if isinstance(r, t.Transacted):
        receipt = None
        if r.agreement is not None:
            a = r.agreement
            receipt = {"atrHash": a.atr_hash, "agreed": a.agreed, "network": a.network, "transaction": a.transaction}
        out = {"signed": {
            "signed": None if r.signed is None else compact(r.signed),
            "h": r.h,
            "agreement": receipt,
            "landed": None if r.landed is None else compact(r.landed),
        }}
        if str(pairing).startswith("mpp/"):
            out["signed"]["authorization"] = authorization(pairing, r.signed)
        return out
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
    """The changes examples/differential/ makes the same way to the approved agreement payment before the second
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
    wallet = Wallet(spec.get("account"), spec.get("key"), spec.get("edit"), spec.get("erc7710"), spec.get("answers"))
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
        second = transaction(again, case.get("pairing"))
    return {"first": transaction(first, case.get("pairing")), "second": second, "paid": list(STATE["paid"])}


def chosen_json(chosen):
    """The Chosen as the crate writes it (serde): pairing, choice, ref, and agreement only when there is one."""
    out = {"pairing": chosen.pairing, "choice": chosen.choice, "ref": chosen.ref}
    if chosen.agreement is not None:
        out["agreement"] = chosen.agreement
    return compact(out)


async def run_case(case):
    binding = BINDINGS.get(case.get("pairing"))
    if binding is None:
        return {"id": case.get("id"), "error": "pairing not built"}
    STATE.update(now=case.get("now", 0), seq=case.get("seq", 0), n=0, routes=routes_of(case), paid=[])
    mpp = str(case.get("pairing")).startswith("mpp/")
    headers = None
    if "headers" in case:
        try:
            case = dict(case, doc=mpp_header.read_challenges(case["headers"]))
        except mpp_header.Refused as e:
            return {"id": case.get("id"), "headers": {"refused": e.code}}
        headers = {"list": compact(case["doc"])}
    confirmed = await t.confirm(case.get("doc"), binding, case.get("account"), CLIENT, case.get("inputs"))
    if "chosen" in case and not isinstance(confirmed, t.Declined):
        # The cross-language round trip: finish the Chosen the crate wrote for this case instead of our own.
        confirmed = dataclasses.replace(confirmed, chosen=t.Chosen(**case["chosen"]))
    if isinstance(confirmed, t.Declined):
        confirm_out = declined(confirmed)
    else:
        confirm_out = {"confirmed": {
            "request": confirmed.request,
            "h": confirmed.h,
            "agreement": confirmed.chosen.agreement,
            "ref": confirmed.chosen.ref,
            "chosen": chosen_json(confirmed.chosen),
        }}
        if mpp:
            confirm_out["confirmed"]["challenge"] = compact(confirmed.chosen.choice.get("challenge"))

    finished = None
    finishes = []
    for spec in case.get("finish", []):
        if isinstance(confirmed, t.Declined):
            finishes.append(None)
            continue
        atr = bytes.fromhex(spec["bytesHex"]) if "bytesHex" in spec else confirmed.atr_bytes
        as_binding = BINDINGS.get(spec.get("as"), binding)
        # The reference's form of the crate's answers slice: none, one answer bare, several as a list.
        form = lambda answers: None if not answers else answers[0] if len(answers) == 1 else list(answers)  # noqa: E731
        answers = []
        for i, a in enumerate(spec.get("answers", [])):
            # A later answer answers the request the answers before it lead to (a payment signed in steps), or,
            # where they lead to none, the first request.
            request = confirmed.request
            if i > 0:
                step = t.finish(atr, confirmed.chosen, form(answers), as_binding)
                if isinstance(step, t.Next):
                    request = step.next
            answers.append(answer_of(a, request))
        signature = form(answers)
        r = t.finish(atr, confirmed.chosen, signature, as_binding)
        if isinstance(r, t.Declined):
            finishes.append(declined(r))
        elif isinstance(r, t.Finished):
            if finished is None:
                finished = r.signed
            landed = None if r.landed is None else compact(r.landed)
            done = {"signed": compact(r.signed), "h": r.h, "landed": landed}
            if mpp:
                done["authorization"] = authorization(case.get("pairing"), r.signed)
            finishes.append({"finished": done})
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
    out = {"id": case.get("id"), "confirm": confirm_out, "finish": finishes, "checks": checks, "transact": transacted}
    if headers is not None:
        out["headers"] = headers
    return out


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
