"""secp256k1 XRPL keys from the Python reference's own curve code (integraledger-terms 0.4.0,
bindings/_secp256k1.py: the curve, its group order and point multiplication; bindings/_xrpl_codec.py: the classic
address of an AccountID), for tests/xrpl/secp256k1.json, which tests/xrpl_rail.rs compares with the crate's
XrplKey byte for byte. No vector row holds a secp256k1 XRPL key, so the peer is the reference here.

For each secret: the compressed public key, the account (RIPEMD-160 of SHA-256 of the key, in the XRPL alphabet),
the signature of XS3's claim bytes and the signed blob of x402-exact-xrpl.json's V2 Payment with this key, each an
ECDSA signature over SHA-512Half of the message with the nonce of RFC 6979 (HMAC-SHA256), S made low, DER-encoded,
as rippled and xrpl.js sign. The blob is V2's with its SigningPubKey replaced by this key and its TxnSignature by
this signature: the fields keep their canonical order, so the bytes are spliced, not re-encoded.

    target/peer-venv/bin/python scripts/differential/xrpl_keys.py > tests/xrpl/secp256k1.json   # or /tmp/peer
"""

import hashlib
import hmac
import json
import pathlib
import sys

from integraledger_terms.bindings import _secp256k1 as curve
from integraledger_terms.bindings._xrpl_codec import encode_account

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "vectors"
SECRETS = ["01" * 32, "2f" * 32, "c0ffee" * 10 + "beef", "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364140"]


def sha512_half(data: bytes) -> bytes:
    return hashlib.sha512(data).digest()[:32]


def compressed(secret: int) -> bytes:
    x, y = curve._mul(secret, curve._G)
    return bytes([2 + (y & 1)]) + x.to_bytes(32, "big")


def rfc6979_k(secret: int, digest: bytes) -> int:
    """RFC 6979 section 3.2 with HMAC-SHA256, qlen = 256: the digest is the message hash h1."""
    x = secret.to_bytes(32, "big")
    h = (int.from_bytes(digest, "big") % curve.N).to_bytes(32, "big")
    v, k = b"\x01" * 32, b"\x00" * 32
    k = hmac.new(k, v + b"\x00" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    k = hmac.new(k, v + b"\x01" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    while True:
        v = hmac.new(k, v, hashlib.sha256).digest()
        candidate = int.from_bytes(v, "big")
        if 0 < candidate < curve.N:
            return candidate
        k = hmac.new(k, v + b"\x00", hashlib.sha256).digest()
        v = hmac.new(k, v, hashlib.sha256).digest()


def der_int(n: int) -> bytes:
    b = n.to_bytes((n.bit_length() + 7) // 8 or 1, "big")
    if b[0] & 0x80:
        b = b"\x00" + b
    return b"\x02" + bytes([len(b)]) + b


def sign(secret: int, message: bytes) -> bytes:
    digest = sha512_half(message)
    e = int.from_bytes(digest, "big") % curve.N
    k = rfc6979_k(secret, digest)
    r = curve._mul(k, curve._G)[0] % curve.N
    s = pow(k, -1, curve.N) * (e + r * secret) % curve.N
    if s > curve.N // 2:
        s = curve.N - s
    body = der_int(r) + der_int(s)
    return b"\x30" + bytes([len(body)]) + body


def splice_signed(blob: bytes, key: bytes, signature: bytes | None) -> bytes:
    """V2's blob with SigningPubKey (73 21 ...) set to key and TxnSignature (74 40 ...) to signature, or dropped."""
    at = blob.index(b"\x73\x21")
    assert blob[at + 35 : at + 37] == b"\x74\x40"
    tail = blob[at + 35 + 2 + 64 :]
    middle = b"\x73\x21" + key
    if signature is not None:
        middle += b"\x74" + bytes([len(signature)]) + signature
    return blob[:at] + middle + tail


def main() -> None:
    x402 = json.loads((VECTORS / "x402-exact-xrpl.json").read_text())
    session = json.loads((VECTORS / "mpp-session-hedera-solana-xrpl.json").read_text())
    v2 = bytes.fromhex(x402["V2"]["blob"])
    claim = bytes.fromhex(session["XS3"]["expect"])
    rows = []
    for text in SECRETS:
        secret = int(text, 16)
        key = compressed(secret)
        account = encode_account(hashlib.new("ripemd160", hashlib.sha256(key).digest()).digest())
        unsigned = splice_signed(v2, key, None)
        signature = sign(secret, b"STX\x00" + unsigned)
        rows.append({
            "secret": text,
            "publicKey": key.hex().upper(),
            "address": account,
            "claimSignature": sign(secret, claim).hex().upper(),
            "signedV2": splice_signed(v2, key, signature).hex().upper(),
        })
    about = (
        "secp256k1 XRPL keys from the Python reference's curve code (integraledger-terms 0.4.0), written by "
        "scripts/differential/xrpl_keys.py: the compressed key, the classic address, the signature of "
        "mpp-session-hedera-solana-xrpl.json's XS3 claim bytes, and x402-exact-xrpl.json's V2 Payment signed by the key."
    )
    json.dump({"about": about, "rows": rows}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
