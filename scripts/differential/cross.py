"""The cross-language round trip of a `Chosen` (driven by scripts/differential.sh after the main comparison).

    python3 cross.py make cases.jsonl peer.jsonl ours.jsonl for-ours.jsonl for-peer.jsonl for-peer-self.jsonl
    python3 cross.py compare cases.jsonl peer.jsonl ours.jsonl cross-ours.jsonl cross-peer.jsonl peer-self.jsonl

`make` writes, for every case both sides confirmed and then finish, the case again with the other side's `Chosen`
(`confirmed.chosen`, the JSON each side records): for-ours.jsonl carries the reference's, which the crate's runner
finishes in place of its own; for-peer.jsonl carries the crate's, which the reference's finishes. `compare` then asks
of each such case that finishing the other side's `Chosen` gives exactly what finishing one's own gave (each finish
call's decline or payment, byte for byte, and the checks of that payment): the crate finishes a `Chosen` the reference
wrote, and the reference's rules accept a `Chosen` the crate wrote. Exits 1 on any difference not explained below.

What is explained (nothing else is):
 - The reference is held to its own `Chosen` read back from JSON (for-peer-self.jsonl, the case with the reference's
   own `Chosen` through JSON), not to the one it holds in memory: its x402 build finds the chosen option in the
   document by identity first and by a bounded comparison after (`is_offered`), so an option nested past that bound
   is found only in memory; such cases are counted, as the reference's own, not the crate's.
 - `mpp/charge/evm/transaction` with the buyer's `accountNonce` input: the crate's choice keeps it (ours, for its
   nonce check of the signed transaction), the reference's does not, so the crate finishing the reference's `Chosen`
   makes no nonce check; excluded where the case gives `accountNonce`.
 - An MPP challenge that has expired (compare.py's class of the same name, ours): the reference chose it, the crate
   skipped it and chose another, so the two Chosens name different challenges and each finishes what it names.
"""

import json
import sys
from collections import Counter

from compare import expired_choice


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def chosen_of(outcome):
    confirmed = ((outcome or {}).get("confirm") or {}).get("confirmed") or {}
    text = confirmed.get("chosen")
    return json.loads(text) if isinstance(text, str) else None


def crossed(cases, peer, ours):
    """(case, the reference's Chosen, the crate's Chosen) for each case both confirmed and then finish."""
    for case in cases:
        p, o = peer.get(case["id"]), ours.get(case["id"])
        theirs, mine = chosen_of(p), chosen_of(o)
        if theirs is not None and mine is not None and case.get("finish"):
            yield case, theirs, mine


def make(cases, peer, ours, for_ours, for_peer, for_peer_self):
    with (
        open(for_ours, "w", encoding="utf-8") as fo,
        open(for_peer, "w", encoding="utf-8") as fp,
        open(for_peer_self, "w", encoding="utf-8") as fs,
    ):
        for case, theirs, mine in crossed(cases, peer, ours):
            fo.write(json.dumps(dict(case, chosen=theirs), ensure_ascii=True) + "\n")
            fp.write(json.dumps(dict(case, chosen=mine), ensure_ascii=True) + "\n")
            fs.write(json.dumps(dict(case, chosen=theirs), ensure_ascii=True) + "\n")


def after_confirm(outcome):
    """What the finish of a Chosen decides: the finish calls and the checks of the payment they made."""
    return json.dumps({"finish": outcome.get("finish"), "checks": outcome.get("checks")}, sort_keys=False)


def account_nonce(case):
    """Whether the crate's choice keeps an input the reference's does not (see the module's note)."""
    return case.get("pairing") == "mpp/charge/evm/transaction" and "accountNonce" in (case.get("inputs") or {})


def compare(cases, peer, ours, cross_ours, cross_peer, peer_self):
    per_pairing, differing, explained = Counter(), [], Counter()
    for case, _, _ in crossed(cases, peer, ours):
        cid = case["id"]
        per_pairing[case["pairing"]] += 1
        own_self = peer_self.get(cid)
        if own_self is not None and after_confirm(own_self) != after_confirm(peer[cid]):
            explained["the reference's own Chosen read back from JSON finishes otherwise (its is_offered)"] += 1
        for side, own, other in (("ours", ours, cross_ours), ("peer", peer_self, cross_peer)):
            got, mine = other.get(cid), own.get(cid)
            if got is not None and mine is not None and after_confirm(got) == after_confirm(mine):
                continue
            if str(case["pairing"]).startswith("mpp/") and expired_choice(case, peer[cid], ours[cid]):
                explained["an MPP challenge that has expired (the crate skips it, ours)"] += 1
                continue
            if side == "ours" and got is not None and account_nonce(case):
                explained["the accountNonce input the crate's choice keeps (ours)"] += 1
                continue
            differing.append((cid, case["pairing"], side, mine or {}, got))
    total = sum(per_pairing.values())
    print(f"cross-language round trip: {total} cases, each finished by both sides from the other's Chosen")
    for pairing, n in sorted(per_pairing.items()):
        print(f"  {n:5d}  {pairing}")
    for why, n in sorted(explained.items()):
        print(f"explained ({why}): {n} cases")
    for cid, pairing, side, own, got in differing:
        who = "the crate, from the reference's Chosen" if side == "ours" else "the reference, from the crate's Chosen"
        print(f"\nROUND-TRIP DIFFERENCE in case {cid} ({pairing}): {who}")
        print(f"    own Chosen:   {after_confirm(own)[:600]}")
        print(f"    other Chosen: {(after_confirm(got) if got else '<no outcome>')[:600]}")
    print(f"\n{len(differing)} of {2 * total} round trips differ")
    return 1 if differing else 0


def main():
    mode, cases_path, peer_path, ours_path, a, b, c = sys.argv[1:8]
    cases = read_lines(cases_path)
    peer = {o["id"]: o for o in read_lines(peer_path)}
    ours = {o["id"]: o for o in read_lines(ours_path)}
    if mode == "make":
        make(cases, peer, ours, a, b, c)
        sys.exit(0)
    cross_ours = {o["id"]: o for o in read_lines(a)}
    cross_peer = {o["id"]: o for o in read_lines(b)}
    peer_self = {o["id"]: o for o in read_lines(c)}
    sys.exit(compare(cases, peer, ours, cross_ours, cross_peer, peer_self))


if __name__ == "__main__":
    main()
