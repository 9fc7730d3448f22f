//! One test per exit code of `terms --help`'s table, each from what happened.

use super::{CONFIG, Run, said};

async fn pay(path: &str, extra: &[&str]) -> (Run, std::process::Output) {
    let run = Run::new(CONFIG).await;
    let url = run.url(path);
    let mut args = vec!["pay", url.as_str()];
    args.extend_from_slice(extra);
    let out = run.terms(&args).await;
    (run, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_0_paid_and_answered() {
    let (run, out) = pay("/report", &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(run.seller.paid("/report"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_1_the_journal_fails_in_the_middle_of_a_command() {
    // A journal whose first page (the header and the schema) is whole opens; the pages after it are garbage, so
    // reading the payments fails midway.
    let (run, paid) = pay("/report", &[]).await;
    assert_eq!(paid.status.code(), Some(0), "{}", said(&paid));
    let path = run.dir.path().join("journal.db");
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 4096, "{} bytes", bytes.len());
    bytes[4096..].fill(0x5a);
    std::fs::write(&path, bytes).unwrap();
    let out = run.terms(&["history"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_2_an_input_error_sends_nothing() {
    let run = Run::new(CONFIG).await;
    for url in ["htp//127.0.0.1/report", "report", "ftp://127.0.0.1/report"] {
        let out = run.terms(&["pay", url]).await;
        assert_eq!(out.status.code(), Some(2), "{url}: {}", said(&out));
        assert!(!said(&out).contains("did not answer"), "{url}: {}", said(&out));
    }
    assert!(run.seller.seen.lock().unwrap().requests.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_3_declined_nothing_charged() {
    let (run, out) = pay("/swap", &[]).await;
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
    assert!(said(&out).contains("hash-mismatch"), "{}", said(&out));
    assert_eq!(run.seller.paid("/swap"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_4_resend_the_same_payment() {
    let (run, out) = pay("/down", &[]).await;
    assert_eq!(out.status.code(), Some(4), "{}", said(&out));
    assert!(said(&out).contains("resend-same-payment"), "{}", said(&out));
    assert_eq!(run.seller.paid("/down"), 1, "a Retry-After past the longest wait is not waited for");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_5_query_first() {
    let (_run, out) = pay("/job", &[]).await;
    assert_eq!(out.status.code(), Some(5), "{}", said(&out));
    assert!(said(&out).contains("job job-1"), "{}", said(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_6_operator_review() {
    let (_run, out) = pay("/redirect", &[]).await;
    assert_eq!(out.status.code(), Some(6), "{}", said(&out));
    assert!(said(&out).contains("operator-review"), "{}", said(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_7_retry_after_the_quota_resets() {
    let (_run, out) = pay("/quota", &[]).await;
    assert_eq!(out.status.code(), Some(7), "{}", said(&out));
    assert!(said(&out).contains("retry-after-quota-reset"), "{}", said(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_8_a_person_approves_first() {
    let run = Run::new(CONFIG).await;
    let policy = run.dir.path().join("policy.toml");
    let text = std::fs::read_to_string(&policy).unwrap();
    let approval =
        format!("approval_above = {{ \"{}/{}\" = \"5000\" }}\n", super::seller::NETWORK, super::seller::USDC);
    std::fs::write(&policy, approval + &text).unwrap();
    let out = run.terms(&["pay", &run.url("/report")]).await;
    assert_eq!(out.status.code(), Some(8), "{}", said(&out));
    assert_eq!(run.seller.paid("/report"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_9_a_seller_that_is_down_was_not_paid_and_may_be_asked_again() {
    let run = Run::new(CONFIG).await;
    // A port nothing listens on: bound, then closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = run.terms(&["pay", &format!("http://{closed}/report")]).await;
    assert_eq!(out.status.code(), Some(9), "{}", said(&out));
    assert!(said(&out).contains("nothing was paid"), "{}", said(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_help_table_names_every_code_tested_here() {
    let run = Run::new(CONFIG).await;
    let help = String::from_utf8_lossy(&run.terms(&["--help"]).await.stdout).into_owned();
    let table = help.split("Exit codes").nth(1).unwrap();
    let codes: Vec<u8> = table.lines().filter_map(|l| l.split_whitespace().next()?.parse().ok()).collect();
    assert_eq!(codes, (0..=9).collect::<Vec<u8>>(), "{table}");
}

/// An `http://` terms link is `offer-unreadable` with `x402/link-not-https`, and the configured policy is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_terms_link_is_declined_as_documented() {
    let run = Run::new(CONFIG).await;
    let out = run.terms(&["check", &run.url("/http-link"), "--json"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
    let plan = super::json(&out);
    assert_eq!(
        (plan["declined"]["code"].as_str(), plan["declined"]["detail"].as_str()),
        (Some("offer-unreadable"), Some("x402/link-not-https")),
        "{plan}"
    );
    assert_eq!(plan["policy"]["verdict"], "not-asked", "a policy is configured");
    let out = run.terms(&["pay", &run.url("/http-link")]).await;
    assert_eq!(out.status.code(), Some(3), "{}", said(&out));
    assert!(said(&out).contains("declined offer-unreadable: x402/link-not-https"), "{}", said(&out));
    assert_eq!(run.seller.paid("/http-link"), 0);
}
