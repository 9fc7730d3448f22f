//! Purchases: a dry run shows what would be signed and signs nothing; a repeat says it re-sent the payment made
//! before and paid nothing new; `--new` is a new purchase (declined where the seller's static ATR makes its nonce one
//! the payer used) and cannot be combined with an explicit key; the execution of a purchase answered 2xx with its
//! body reads `completed`.

use super::{CONFIG, Run, json, said, seller};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_shows_what_would_be_signed_and_a_repeat_says_it_paid_nothing_new() {
    let run = Run::new(CONFIG).await;
    let url = run.url("/report");
    let dry = run.terms(&["pay", &url, "--dry-run"]).await;
    assert_eq!(dry.status.code(), Some(0), "{}", said(&dry));
    let text = said(&dry);
    assert!(text.contains(&format!("would sign a payment of 0.01 USDC (10000) to {}", seller::PAY_TO)), "{text}");
    assert!(text.contains("valid     from signing to 60 s later"), "{text}");
    let key = text.lines().find_map(|l| l.strip_prefix("purchase  ")).unwrap().to_owned();
    assert_eq!(run.seller.paid("/report"), 0, "a dry run signs and sends nothing");

    let first = run.terms(&["pay", &url]).await;
    assert_eq!(first.status.code(), Some(0), "{}", said(&first));
    assert!(said(&first).contains(&format!("purchase {key}")), "the dry run named the key: {}", said(&first));
    let again = run.terms(&["pay", &url]).await;
    assert_eq!(again.status.code(), Some(0), "{}", said(&again));
    let said_again = said(&again);
    let at = said_again.split("re-sent the payment made at ").nth(1).unwrap_or_else(|| panic!("{said_again}"));
    assert!(at.starts_with("20") && at.contains("; no new payment"), "{said_again}");
    assert_eq!(run.seller.payments().len(), 2);
    assert_eq!(run.seller.payments()[0], run.seller.payments()[1], "the same payment, re-sent");
    let receipt = run.terms(&["receipt", &key]).await;
    assert!(said(&receipt).contains("execution completed"), "{}", said(&receipt));
    assert_eq!(json(&run.terms(&["receipt", &key, "--json"]).await)["execution"], "completed");

    // --new: another purchase. This stand-in serves one static ATR, so the new authorization's nonce would be H
    // again, which the payer already used: declined before anything is signed, with that cause.
    let new = run.terms(&["pay", &url, "--new", "--json"]).await;
    assert_eq!(new.status.code(), Some(3), "{}", said(&new));
    let outcome = json(&new);
    assert_eq!(outcome["outcome"], "refused", "{outcome}");
    assert_eq!(outcome["declined"]["detail"], "journal/nonce-used", "{outcome}");
    assert!(outcome["declined"]["cause"].as_str().unwrap().contains("static ATR"), "{outcome}");
    assert_eq!(run.seller.payments().len(), 2, "nothing new signed or sent");
    // --new beside an explicit key: a usage error, nothing sent.
    let both = run.terms(&["pay", &url, "--new", "-H", "Idempotency-Key: mine"]).await;
    assert_eq!(both.status.code(), Some(2), "{}", said(&both));
    assert_eq!(run.seller.payments().len(), 2);
    let help = String::from_utf8_lossy(&run.terms(&["pay", "--help"]).await.stdout).into_owned();
    assert!(help.contains("The purchase key") && help.contains("--new"), "{help}");
}

/// A 202 leaves the execution queued; `check` needs no key: `--account` names the payer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_job_is_not_completed_and_check_needs_no_key() {
    let run =
        Run::new("journal = \"journal.db\"\npolicy = \"policy.toml\"\nkey_env = \"NO_SUCH_KEY_VARIABLE\"\n").await;
    let url = run.url("/report");
    let keyless = run.terms(&["check", &url]).await;
    assert_eq!(keyless.status.code(), Some(2), "{}", said(&keyless));
    assert!(said(&keyless).contains("--account"), "{}", said(&keyless));
    let account = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    let check = run.terms(&["check", &url, "--account", account]).await;
    assert_eq!(check.status.code(), Some(0), "{}", said(&check));
    assert!(said(&check).contains(&format!("payer     eip155:84532:{account}")), "{}", said(&check));
    assert!(!run.dir.path().join("journal.db").exists(), "check writes no journal");
    let bad = run.terms(&["check", &url, "--account", "0x1234"]).await;
    assert_eq!(bad.status.code(), Some(2), "{}", said(&bad));

    let run = Run::new(CONFIG).await;
    let job = json(&run.terms(&["pay", &run.url("/job"), "--json"]).await);
    let key = job["paid"]["key"].as_str().unwrap();
    assert_eq!(json(&run.terms(&["receipt", key, "--json"]).await)["execution"], "queued");
}
