//! `terms approvals`, `terms approve ID`, `terms deny ID` as processes, on a SQLite file and on PostgreSQL: a payment
//! above the threshold exits 8 naming its approval id and how to approve; a person approves it and the same `terms
//! pay` pays it, once; an id approved twice, denied then approved, or unknown is refused with its exit code.

use super::{CONFIG, Run, json, said};

/// The configuration's policy with an approval threshold below the stand-in seller's price.
pub(super) async fn run_above_threshold(config: &str) -> Run {
    let run = Run::new(config).await;
    let policy = run.dir.path().join("policy.toml");
    let text = std::fs::read_to_string(&policy).unwrap();
    let approval =
        format!("approval_above = {{ \"{}/{}\" = \"5000\" }}\n", super::seller::NETWORK, super::seller::USDC);
    std::fs::write(&policy, approval + &text).unwrap();
    run
}

/// `terms pay` of the report at `path` (the report, its query telling purchases apart), which waits for a person:
/// its approval id, from what it said.
pub(super) async fn queued(run: &Run, path: &str) -> String {
    let out = run.terms(&["pay", &run.url(path)]).await;
    assert_eq!(out.status.code(), Some(8), "{}", said(&out));
    let text = said(&out);
    assert!(text.contains("nothing signed") && text.contains("terms approve ap_"), "{text}");
    let id = text.split("terms approve ").nth(1).unwrap().split('`').next().unwrap().to_owned();
    assert!(id.starts_with("ap_") && id.len() == 23, "{id}");
    assert_eq!(run.seller.paid("/report"), 0);
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_and_the_same_pay_pays_once() {
    approves_and_pays(CONFIG).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_and_the_same_pay_pays_once_on_postgres() {
    let Some(server) = super::backends::server(concat!(module_path!(), "::on_postgres")) else { return };
    let url = super::backends::fresh_schema(&server).await;
    approves_and_pays(&format!("journal = {url:?}\npolicy = \"policy.toml\"\nkey_env = \"TERMS_KEY\"\n")).await;
}

async fn approves_and_pays(config: &str) {
    let run = run_above_threshold(config).await;
    let id = queued(&run, "/report").await;
    // The same pay again before a person decided: the same approval, nothing signed.
    assert_eq!(queued(&run, "/report").await, id);

    let listed = run.terms(&["approvals", "--json"]).await;
    assert_eq!(listed.status.code(), Some(0), "{}", said(&listed));
    let pending = json(&listed)["pending"].as_array().unwrap().clone();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!((pending[0]["id"].as_str(), pending[0]["state"].as_str()), (Some(id.as_str()), Some("pending")));
    assert_eq!(pending[0]["quote"]["amount"], super::seller::AMOUNT);
    assert_eq!(pending[0]["h"], super::seller::h());
    assert!(pending[0]["rule"].as_str().unwrap().starts_with("approval_above."), "{}", pending[0]);
    let human = run.terms(&["approvals"]).await;
    let shown = String::from_utf8_lossy(&human.stdout).into_owned();
    assert!(shown.starts_with(&id) && shown.contains("0.01 USDC") && shown.contains("GET http://"), "{shown}");
    assert!(shown.contains(&super::seller::h()), "the terms' hash is shown: {shown}");

    let approved = run.terms(&["approve", &id, "--json"]).await;
    assert_eq!(approved.status.code(), Some(0), "{}", said(&approved));
    assert_eq!(json(&approved)["state"], "approved");
    assert_eq!(run.seller.paid("/report"), 0, "approving pays nothing");
    // Approved twice: refused, exit 3 (decided once).
    let twice = run.terms(&["approve", &id]).await;
    assert_eq!(twice.status.code(), Some(3), "{}", said(&twice));
    assert!(said(&twice).contains("decided once"), "{}", said(&twice));
    let nothing = run.terms(&["approvals"]).await;
    assert!(said(&nothing).contains("no payment waits for approval"), "{}", said(&nothing));

    let paid = run.terms(&["pay", &run.url("/report")]).await;
    assert_eq!(paid.status.code(), Some(0), "{}", said(&paid));
    assert_eq!(run.seller.paid("/report"), 1);
    // Once more: re-sent, never paid again, no approval asked for.
    let again = run.terms(&["pay", &run.url("/report")]).await;
    assert_eq!(again.status.code(), Some(0), "{}", said(&again));
    assert!(said(&again).contains("no new payment"), "{}", said(&again));
    let used = run.terms(&["deny", &id, "--json"]).await;
    assert_eq!(used.status.code(), Some(3), "{}", said(&used));
    assert!(said(&used).contains("is used"), "{}", said(&used));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_payment_is_never_paid_and_an_unknown_id_is_a_usage_error() {
    let run = run_above_threshold(CONFIG).await;
    let id = queued(&run, "/report").await;
    let denied = run.terms(&["deny", &id]).await;
    assert_eq!(denied.status.code(), Some(0), "{}", said(&denied));
    assert!(said(&denied).contains("never paid"), "{}", said(&denied));
    for verb in ["approve", "deny"] {
        let out = run.terms(&[verb, &id]).await;
        assert_eq!(out.status.code(), Some(3), "{verb}: {}", said(&out));
        assert!(said(&out).contains("is denied"), "{}", said(&out));
    }
    let out = run.terms(&["pay", &run.url("/report")]).await;
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
    assert!(said(&out).contains("policy/approval-denied"), "{}", said(&out));
    assert_eq!(run.seller.paid("/report"), 0);
    let unknown = run.terms(&["approve", "ap_nosuchapproval", "--json"]).await;
    assert_eq!(unknown.status.code(), Some(2), "{}", said(&unknown));
    assert!(json(&unknown)["error"].as_str().unwrap().contains("no approval has the id"), "{}", said(&unknown));
}
