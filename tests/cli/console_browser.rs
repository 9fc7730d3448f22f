//! The console in a real browser: headless Chromium from the distribution's package, driven over WebDriver. Two
//! `terms pay` wait for a person; in the console one is approved and one denied; the same `terms pay` then pays the
//! approved one, once, and the denied one is never signed. The history shows the payment settled with its receipt,
//! the purchase page its record, the budgets page its spend; terms carrying a script tag render as text; the
//! approvals page polls (a decision made elsewhere shows without the test reloading). Screenshots of each page go
//! to `target/console-screenshots/`. Skipped with a message where chromedriver is missing, failed instead under CI.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use terms::safety::Purchase;
use terms::safety::journal::{JournalConfig, JournalTarget};
use terms::safety::policy::Policy;
use terms::{Options, TransactOutcome, transact};

use super::approvals::{queued, run_above_threshold};
use super::console::{Console, Terms, offer, pairing, signer};
use super::webdriver::{Browser, chromedriver};
use super::{CONFIG, Run, said, seller};

/// Terms a hostile seller serves: markup that would run if the console wrote it as HTML.
const HOSTILE: &[u8] = b"<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">\nTerms: \
the seller may change these terms at any time.\n";

/// Where the screenshots go: `target/console-screenshots/`.
fn shots() -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().join("console-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An approval queued by an agent in this process, for terms that carry a script tag; its id.
async fn hostile_approval(run: &Run) -> String {
    let journal =
        JournalTarget::Sqlite(run.dir.path().join("journal.db")).open(JournalConfig::default()).await.unwrap();
    let policy = std::fs::read_to_string(run.dir.path().join("policy.toml")).unwrap();
    let options = Options::new()
        .policy(Arc::new(Policy::from_toml_str(&policy).unwrap()))
        .journal(journal.clone())
        .approvals(journal)
        .agent("<b>agent</b> \"quoted\"")
        .purchase(Purchase::new("GET", run.url("/report?q=\"><script>alert(1)</script>")));
    let asked = transact(offer(HOSTILE), pairing(), &signer(), &Terms(HOSTILE.to_vec()), &options).await;
    let Ok(TransactOutcome::PendingApproval(p)) = asked else { panic!("not queued: {asked:?}") };
    p.pending_approval.id.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_in_the_browser_and_the_payment_is_paid_once_and_a_denied_one_never_signed() {
    let Some(driver) = chromedriver() else { return };
    let run = run_above_threshold(CONFIG).await;
    let approve_id = queued(&run, "/report").await;
    let deny_id = queued(&run, "/report?for=the-denied-one").await;
    let hostile_id = hostile_approval(&run).await;
    let console = Console::start(&run).await;
    let browser = Browser::start(driver, 1280, 1100).await;
    let dir = shots();

    // The printed link: logged in, and the token gone from the address.
    browser.goto(&console.link).await;
    assert_eq!(browser.current().await, console.url("/"));
    let body = browser.script("return document.body.innerText").await;
    for id in [&approve_id, &deny_id, &hostile_id] {
        assert!(body.as_str().unwrap_or_default().contains(id.as_str()), "{id} not shown: {body}");
        browser.find(&format!("section[data-id='{id}']")).await;
    }
    // The hostile terms, the agent's name and the URL are text: no script ran, no element was made of them.
    let terms = browser.read(&format!("section[data-id='{hostile_id}'] pre.terms")).await.unwrap();
    assert!(terms.starts_with("<script>window.__pwned = 1</script><img src=x onerror="), "{terms}");
    let card = browser.read(&format!("section[data-id='{hostile_id}']")).await.unwrap();
    assert!(card.contains("<b>agent</b> \"quoted\"") && card.contains("alert(1)"), "{card}");
    let inert = browser
        .script("return [window.__pwned === undefined, document.scripts.length, document.images.length, document.querySelectorAll('b').length]")
        .await;
    assert_eq!(inert, serde_json::json!([true, 0, 0, 0]), "the seller's markup stayed text");
    browser.screenshot(&dir.join("approvals.png")).await;

    // Deny one, approve the other, in the page's own forms.
    browser.click_on(&format!("section[data-id='{deny_id}'] button.deny")).await;
    let said_text = browser.wait_text("#said", &deny_id).await;
    assert!(said_text.contains("denied: it is never paid"), "{said_text}");
    browser.click_on(&format!("section[data-id='{approve_id}'] button.approve")).await;
    let said_text = browser.wait_text("#said", &approve_id).await;
    assert!(said_text.contains("approved: the agent's next send of the same request pays it, once"), "{said_text}");
    assert!(browser.all(&format!("section[data-id='{approve_id}']")).await.is_empty());
    browser.screenshot(&dir.join("approved.png")).await;
    assert_eq!(run.seller.paid("/report"), 0, "deciding pays nothing");

    // The agent's same requests: the approved one pays, once; the denied one is declined, never signed.
    let denied = run.terms(&["pay", &run.url("/report?for=the-denied-one")]).await;
    assert_eq!(denied.status.code(), Some(3), "{}", said(&denied));
    assert!(said(&denied).contains("policy/approval-denied"), "{}", said(&denied));
    let paid = run.terms(&["pay", &run.url("/report")]).await;
    assert_eq!(paid.status.code(), Some(0), "{}", said(&paid));
    assert_eq!(run.seller.paid("/report"), 1, "one payment reached the seller");

    // The history: the payment settled, with its amount in USDC and its receipt; nothing signed for the denied one.
    browser.goto(&console.url("/history")).await;
    assert_eq!(browser.all("tr.payment[data-state='settled']").await.len(), 1);
    let row = browser.read("tr.payment[data-state='settled']").await.unwrap();
    assert!(row.contains("0.01 USDC (10000)") && row.contains("0x5e771e") && row.contains(&seller::h()), "{row}");
    // The journal signed one payment, the approved purchase's: the denied one has no signed attempt.
    let history = super::json(&run.terms(&["history", "--json"]).await);
    let signed: Vec<&serde_json::Value> =
        history.as_array().unwrap().iter().filter(|r| !r["payment"].is_null()).collect();
    assert_eq!(signed.len(), 1, "{history}");
    assert_eq!(signed[0]["purchase"]["url"], run.url("/report"));
    browser.screenshot(&dir.join("history.png")).await;
    browser.click_on("tr.payment[data-state='settled'] a").await;
    let attempt = browser.wait_text("section.attempt", "0x5e771e").await;
    assert!(browser.current().await.starts_with(&console.url("/purchase?key=")));
    assert!(attempt.contains("settled") && attempt.contains("0x5e771e"), "{attempt}");
    browser.screenshot(&dir.join("purchase.png")).await;

    // The budget: the payment spent from the day's window, drawn.
    browser.goto(&console.url("/budgets")).await;
    assert_eq!(browser.read("section.budget .spent").await.as_deref(), Some("0.01 USDC (10000)"));
    assert_eq!(browser.read("section.budget .remaining").await.as_deref(), Some("0.99 USDC (990000)"));
    browser.find("section.budget svg.chart path").await;
    browser.screenshot(&dir.join("budgets.png")).await;

    // The poll: a decision made elsewhere (`terms deny`) shows on the open approvals page without a reload by the
    // test.
    browser.goto(&console.url("/")).await;
    browser.find(&format!("section[data-id='{hostile_id}']")).await;
    let out = run.terms(&["deny", &hostile_id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let mut gone = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if browser.all(&format!("section[data-id='{hostile_id}']")).await.is_empty() {
            gone = true;
            break;
        }
    }
    assert!(gone, "the approvals page polled and no longer shows the denied approval");
    browser.wait("#none-pending").await;
    eprintln!("screenshots in {}", dir.display());
}
