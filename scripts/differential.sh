#!/usr/bin/env bash
# Differential test against the Python reference (integraledger-terms 0.4.0): generates mutated offers, ATRs, accounts,
# inputs and signer answers for every built pairing from the vector files (x402: scripts/differential/generate.py;
# MPP: its mpp.py, challenges as JSON lists and as WWW-Authenticate values; cards: its card.py), runs each case through the reference and
# through the crate, and fails on any difference in outcome (decline code and detail, signing request, signed payment
# byte for byte, and the whole Chosen each side records) that compare.py does not explain by a named rule; then the
# cross-language round trip (cross.py): each side finishes the Chosen the other wrote, and must finish it as it
# finishes its own. Not part of `cargo test`; .ci/run runs it when python3 is present.
#
#   scripts/differential.sh                                  # the fixed default seed and counts, so a CI failure reproduces
#   scripts/differential.sh --seed 7 --cases 6000 --mpp-cases 4000 --card-cases 2000 --checkout-cases 1600
#
# The reference is installed (with eth-account, for the wallet's signatures) into target/peer-venv on first use, as
# scripts/bench-peer does. The files of the last run are kept in target/differential/ (cases, both outcomes, report).
set -euo pipefail
cd "$(dirname "$0")/.."

seed=1
cases=3600      # x402, split over its fifteen fixtures
mpp_cases=4000  # MPP, split over its twenty pairings
card_cases=800  # cards, split over the four card pairings
checkout_cases=800  # the checkouts (ACP, ACK, AP2, UCP), split over their eight pairings
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --mpp-cases) mpp_cases=$2; shift 2 ;;
    --card-cases) card_cases=$2; shift 2 ;;
    --checkout-cases) checkout_cases=$2; shift 2 ;;
    *) echo "usage: $0 [--seed S] [--cases N] [--mpp-cases M] [--card-cases C] [--checkout-cases K]" >&2; exit 2 ;;
  esac
done

start=$(date +%s)
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ beside the scripts
target=${CARGO_TARGET_DIR:-target}
venv=target/peer-venv
out=target/differential
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import integraledger_terms, eth_account" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet integraledger-terms==0.4.0 eth-account
fi
"$venv/bin/python" - <<'PY'
import importlib.metadata as m, sys
v = m.version("integraledger-terms")
if v != "0.4.0":
    sys.exit(f"the reference in target/peer-venv is integraledger-terms {v}, not 0.4.0")
PY
mkdir -p "$out"

# The secp256k1 XRPL keys tests/xrpl.rs compares with the crate: derived and signed again by the reference's own curve
# code, they must be the file's bytes (no vector row holds such a key).
"$venv/bin/python" scripts/differential/xrpl_keys.py | diff -u tests/xrpl/secp256k1.json - \
  || { echo "tests/xrpl/secp256k1.json is not what the reference derives and signs" >&2; exit 1; }

# The crate's runner (the dev profile, which `cargo test` has already built), and the pairings this build has: the
# generator must cover exactly those.
cargo build --quiet --features local-signer --example differential
runner="$target/debug/examples/differential"
built=$(printf '{"builtIds":true}\n' | "$runner")
python3 - "$built" <<'PY'
import json, sys
sys.path.insert(0, "scripts/differential")
from generate import PAIRINGS, NOT_YET
built = json.loads(sys.argv[1])["builtIds"]
for pairing, why in sorted(NOT_YET.items()):
    print(f"not covered yet: {pairing}: {why}")
built = [b for b in built if b not in NOT_YET]
if sorted(built) != sorted(PAIRINGS):
    sys.exit(f"the generator covers {sorted(PAIRINGS)} but the crate builds {sorted(built)}")
PY

python3 scripts/differential/generate.py --seed "$seed" --cases "$cases" --mpp-cases "$mpp_cases" \
  --card-cases "$card_cases" --checkout-cases "$checkout_cases" > "$out/cases.jsonl"

# The reference on two processes and the crate beside them (the machine has two cores).
split -n l/2 -d "$out/cases.jsonl" "$out/part."
"$venv/bin/python" scripts/differential/peer.py < "$out/part.00" > "$out/peer.00" &
first=$!
"$venv/bin/python" scripts/differential/peer.py < "$out/part.01" > "$out/peer.01" &
second=$!
"$runner" < "$out/cases.jsonl" > "$out/ours.jsonl"
wait "$first"
wait "$second"
cat "$out/peer.00" "$out/peer.01" > "$out/peer.jsonl"
rm -f "$out"/part.0? "$out"/peer.0?

status=0
python3 scripts/differential/compare.py "$out/cases.jsonl" "$out/peer.jsonl" "$out/ours.jsonl" | tee "$out/report.txt" || status=$?

# The cross-language round trip (cross.py): each side finishes the Chosen the other wrote, and must finish it exactly
# as it finishes its own (the reference: its own read back from JSON).
python3 scripts/differential/cross.py make "$out/cases.jsonl" "$out/peer.jsonl" "$out/ours.jsonl" \
  "$out/for-ours.jsonl" "$out/for-peer.jsonl" "$out/for-peer-self.jsonl"
"$venv/bin/python" scripts/differential/peer.py < "$out/for-peer.jsonl" > "$out/cross-peer.jsonl" &
first=$!
"$venv/bin/python" scripts/differential/peer.py < "$out/for-peer-self.jsonl" > "$out/peer-self.jsonl" &
second=$!
"$runner" < "$out/for-ours.jsonl" > "$out/cross-ours.jsonl"
wait "$first"
wait "$second"
python3 scripts/differential/cross.py compare "$out/cases.jsonl" "$out/peer.jsonl" "$out/ours.jsonl" \
  "$out/cross-ours.jsonl" "$out/cross-peer.jsonl" "$out/peer-self.jsonl" | tee -a "$out/report.txt" || status=$?
echo "seed $seed, $cases x402, $mpp_cases MPP, $card_cases card and $checkout_cases checkout cases: $(( $(date +%s) - start )) s"
exit "$status"
