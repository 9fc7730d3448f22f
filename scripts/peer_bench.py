"""Times the Python reference (integraledger-terms 0.4.0) on the quickstart payment: transact with a local key,
confirm with an in-memory fetch, finish, and SHA-256 of 1 MiB; and on the same ATR paid by an MPP EVM charge
(mpp/charge/evm/authorization, the challenge benches/mpp.rs builds): transact, confirm, finish; and on x402/exact/solana
with the B2 row of tests/vectors/x402-exact-solana.json, as benches/solana.rs reads it: transact, confirm, finish.
Only the calls named after the seconds run (transact, confirm, finish, atr_hash_1mib, mpp_transact, mpp_confirm,
mpp_finish, sol_transact, sol_confirm, sol_finish). Prints one JSON object of median seconds per call."""

import asyncio
import base64
import hashlib
import json
import pathlib
import statistics
import sys
import time

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eth_account import Account
from eth_account.messages import encode_typed_data

import integraledger_terms as t
from integraledger_terms import _gate

ATR = bytes.fromhex(
    "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d3730383637373238"
    "39353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a"
    "22436166c3a920e280942033302064c3ad617320e29c93227d7d"
)
H = "0x" + hashlib.sha256(ATR).hexdigest()
KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
DOC = {
    "x402Version": 2,
    "resource": {"url": "https://api.seller.example/v1/quote"},
    "accepts": [{
        "scheme": "exact", "network": "eip155:84532", "amount": "10000",
        "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
        "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"},
    }],
    "extensions": {"legalContext": {"info": {
        "type": "sha256", "value": H, "legalContextUrl": f"https://atr.seller.example/{H}",
    }}},
}
_gate._now = lambda: 1790000000
PAIRING = t.X402_EXACT_EIP155_EIP3009


def b64url_jcs(value):
    """base64url (no padding) of the value's RFC 8785 form: sorted keys, no spaces (exact for these ASCII values)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


# The challenge of benches/mpp.rs: 0.01 USDC on Base Sepolia, the id carrying H at position 0, expiring at now + 60.
MPP_DOC = [{
    "id": base64.urlsafe_b64encode(bytes.fromhex(H[2:])).decode().rstrip("=") + ".0",
    "realm": "api.seller.example", "method": "evm", "intent": "charge",
    "request": b64url_jcs({
        "amount": "10000", "currency": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        "methodDetails": {"chainId": 84532, "credentialTypes": ["authorization"]},
        "recipient": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    }),
    "expires": "2026-09-21T14:14:20Z",
    "opaque": b64url_jcs({"legalContext": f"lcp:sha256:{H}", "legalContextUrl": f"https://atr.seller.example/{H}"}),
}]
MPP_INPUTS = {"tokenDomain": {"name": "USDC", "version": "2"}}
MPP = t.MPP_CHARGE_EVM_AUTHORIZATION


# The Solana exact payment of benches/solana.rs: the B2 row's document, inputs and account, the payer's seed, and the
# ATR `abc` (the file's own words: "Where the ATR is abc, H is its SHA-256").
SOL_FILE = json.loads((pathlib.Path(__file__).parent.parent / "tests/vectors/x402-exact-solana.json").read_text())
SOL_ROW = SOL_FILE["buyer"]["rows"][0]["input"]
SOL_ATR = b"abc"
assert "0x" + hashlib.sha256(SOL_ATR).hexdigest() == SOL_FILE["fixed"]["H"]
SOL = t.X402_EXACT_SOLANA


class SolanaSigner:
    """The payer's ed25519 key answering solana-message (the message as 0x hex) with its 64-byte signature in 0x hex,
    on the `cryptography` package the reference itself depends on."""

    account = SOL_ROW["account"]
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(SOL_FILE["fixed"]["payerSeed"]))

    async def sign(self, request):
        return "0x" + self.key.sign(bytes.fromhex(request["message"][2:])).hex()


class LocalSigner:
    account = "eip155:84532:" + Account.from_key(KEY).address

    async def sign(self, request):
        message = encode_typed_data(full_message=request["typedData"])
        return "0x" + Account.sign_message(message, KEY).signature.hex()


def fetch(atr=ATR):
    return httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200, content=atr)))


async def timed(make, seconds):
    """Median seconds per awaited call over batches of calls filling `seconds`: the median, like criterion's, so a
    burst of noise on a shared machine moves it less than it moves a mean."""
    for _ in range(5):
        await make()
    start = time.perf_counter()
    once = time.perf_counter()
    await make()
    batch = max(1, int(0.05 / max(time.perf_counter() - once, 1e-9)))
    samples = []
    while len(samples) < 10 or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        for _ in range(batch):
            await make()
        samples.append((time.perf_counter() - t0) / batch)
    return statistics.median(samples)


async def main(seconds, names):
    client, signer = fetch(), LocalSigner()
    out = {}

    async def transact():
        r = await t.transact(DOC, PAIRING, signer, client)
        assert not isinstance(r, t.Declined), r

    async def confirm():
        r = await t.confirm(DOC, PAIRING, signer.account, client)
        assert not isinstance(r, t.Declined), r

    confirmed = await t.confirm(DOC, PAIRING, signer.account, client)
    answer = await signer.sign(confirmed.request)

    async def finish():
        r = t.finish(ATR, confirmed.chosen, answer, PAIRING)
        assert not isinstance(r, t.Declined), r

    async def mpp_transact():
        r = await t.transact(MPP_DOC, MPP, signer, client, inputs=MPP_INPUTS)
        assert isinstance(r, t.Transacted), r

    async def mpp_confirm():
        r = await t.confirm(MPP_DOC, MPP, signer.account, client, MPP_INPUTS)
        assert isinstance(r, t.Confirmed), r

    mpp_confirmed = await t.confirm(MPP_DOC, MPP, signer.account, client, MPP_INPUTS)
    assert isinstance(mpp_confirmed, t.Confirmed), mpp_confirmed
    mpp_answer = await signer.sign(mpp_confirmed.request)

    async def mpp_finish():
        r = t.finish(ATR, mpp_confirmed.chosen, mpp_answer, MPP)
        assert isinstance(r, t.Finished), r

    sol_client, sol_signer, sol_inputs = fetch(SOL_ATR), SolanaSigner(), SOL_ROW["inputs"]

    async def sol_transact():
        r = await t.transact(SOL_ROW["doc"], SOL, sol_signer, sol_client, inputs=sol_inputs)
        assert isinstance(r, t.Transacted), r

    async def sol_confirm():
        r = await t.confirm(SOL_ROW["doc"], SOL, sol_signer.account, sol_client, sol_inputs)
        assert isinstance(r, t.Confirmed), r

    sol_confirmed = await t.confirm(SOL_ROW["doc"], SOL, sol_signer.account, sol_client, sol_inputs)
    assert isinstance(sol_confirmed, t.Confirmed), sol_confirmed
    sol_answer = await sol_signer.sign(sol_confirmed.request)

    async def sol_finish():
        r = t.finish(SOL_ATR, sol_confirmed.chosen, sol_answer, SOL)
        assert isinstance(r, t.Finished), r

    mib = b"\x5a" * t.MAX_ATR_BYTES

    async def sha():
        t.atr_hash(mib)

    calls = {"transact": transact, "confirm": confirm, "finish": finish, "atr_hash_1mib": sha,
             "mpp_transact": mpp_transact, "mpp_confirm": mpp_confirm, "mpp_finish": mpp_finish,
             "sol_transact": sol_transact, "sol_confirm": sol_confirm, "sol_finish": sol_finish}
    for name in names or list(calls):
        out[name] = await timed(calls[name], seconds)
    print(json.dumps(out))


asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0, sys.argv[2:]))
