"""compare.py's excluded classes for the XRPL pairings (its docstring says why each is excluded): the signed blob
held to the transaction built (`xrpl/tx-mismatch`), and an address whose base58check checksum fails."""

import base64
import hashlib
import json
import re


XRPL_ALPHABET = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz"
XRPL_FORM = re.compile(r"r[1-9A-HJ-NP-Za-km-z]{24,34}")


def xrpl_checksum_fails(text):
    """Whether a text of a classic address's form fails its base58check (version 0, 20 bytes, 4 of checksum)."""
    if not isinstance(text, str) or XRPL_FORM.fullmatch(text) is None:
        return False
    n = 0
    for ch in text:
        n = n * 58 + XRPL_ALPHABET.index(ch)
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    raw = b"\x00" * (len(text) - len(text.lstrip("r"))) + raw
    if len(raw) != 25 or raw[0] != 0:
        return True
    return hashlib.sha256(hashlib.sha256(raw[:21]).digest()).digest()[:4] != raw[21:]


def xrpl_bad_address(case, ours):
    """Whether an MPP XRPL case's challenges name an address of the classic form whose checksum fails and the crate's
    confirm declined `offer-unreadable` `mpp/request-malformed` for it."""
    if case.get("pairing") != "mpp/charge/xrpl":
        return False
    d = (ours.get("confirm") or {}).get("declined") or {}
    if d.get("code") != "offer-unreadable" or d.get("detail") != "mpp/request-malformed":
        return False
    for c in case.get("doc") or []:
        try:
            text = c["request"]
            r = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        except (KeyError, TypeError, ValueError):
            continue
        currency = r.get("currency") if isinstance(r, dict) else None
        issuer = currency.get("issuer") if isinstance(currency, dict) else None
        if isinstance(r, dict) and (xrpl_checksum_fails(r.get("recipient")) or xrpl_checksum_fails(issuer)):
            return True
    return False


XRPL_PAIRINGS = {"x402/exact/xrpl", "mpp/charge/xrpl", "mpp/session/xrpl"}


def xrpl_tx_mismatch(case, path, peer, ours):
    """Whether the crate's decline at path is its own check that the wallet's XRPL blob is the transaction built,
    with both sides' confirm handing the wallet the same request."""
    if case.get("pairing") not in XRPL_PAIRINGS or path[0] not in ("finish", "transact"):
        return False
    from compare import ours_declined  # noqa: PLC0415 (compare.py imports this module)

    d = ours_declined(ours, path)
    if not (isinstance(d, dict) and d.get("code") == "signed-not-bound" and d.get("detail") == "xrpl/tx-mismatch"):
        return False
    request = lambda o: ((o.get("confirm") or {}).get("confirmed") or {}).get("request")  # noqa: E731
    return request(peer) is not None and request(peer) == request(ours)
