//! The digests and keys `tests/vectors/card.json` prints (C4, `vi.printed`, `fixed.USER`, `fixed.AGENT`), recomputed
//! with the reader the pairings use.

use serde_json::Value;

use crate::jose::disclosure_digest;
use crate::jose::sd_jwt::{self, Bounds};

fn file() -> Value {
    serde_json::from_str(include_str!("../../tests/vectors/card.json")).unwrap()
}

#[test]
fn c4_disclosure_digests() {
    let f = file();
    let rows = f["C4"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(disclosure_digest(row["disclosure"].as_str().unwrap()), row["expect"].as_str().unwrap());
    }
}

#[test]
fn vi_printed_digests_are_of_the_files_layers() {
    let f = file();
    let vi = &f["vi"];
    let printed = vi["printed"].as_object().unwrap();
    let text = |k: &str| vi[k].as_str().unwrap();
    assert_eq!(printed["CH"].as_str().unwrap(), disclosure_digest(text("CJ")));
    assert_eq!(printed["D(L1)"].as_str().unwrap(), disclosure_digest(text("L1")));
    assert_eq!(printed["D(L2a)"].as_str().unwrap(), disclosure_digest(text("L2a")));
    // The disclosures: each printed D(…) but the undisclosed dpo is the digest of one of L2i's, L2a's or L3b's
    // disclosures; dpo is listed in L2a's signed `_sd`.
    let disclosures: Vec<String> = ["L2i", "L2a", "L3b"]
        .iter()
        .flat_map(|k| text(k).split('~').skip(1).filter(|d| !d.is_empty()).map(disclosure_digest).collect::<Vec<_>>())
        .collect();
    for name in ["D(dc)", "D(dp)", "D(dco)", "D(d3)"] {
        assert!(disclosures.iter().any(|d| d == printed[name].as_str().unwrap()), "{name}");
    }
    let l2a = sd_jwt::read(text("L2a"), Bounds::default()).unwrap();
    assert!(l2a.payload["_sd"].as_array().unwrap().contains(&printed["D(dpo)"]));
}

#[test]
fn fixed_keys_are_the_layers_keys() {
    let f = file();
    let vi = &f["vi"];
    let l1 = sd_jwt::read(vi["L1"].as_str().unwrap(), Bounds::default()).unwrap();
    let user = &l1.payload["cnf"]["jwk"];
    for k in ["kty", "crv", "x", "y"] {
        assert_eq!(user[k], f["fixed"]["USER"][k], "USER {k}");
    }
    let l2a = sd_jwt::read(vi["L2a"].as_str().unwrap(), Bounds::default()).unwrap();
    let open = l2a.resolved["delegate_payload"].as_array().unwrap();
    let agent = &open.iter().find(|m| m["vct"] == "mandate.checkout.open.1").unwrap()["cnf"]["jwk"];
    assert_eq!(agent, &f["fixed"]["AGENT"]);
}
