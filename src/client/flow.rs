//! One call: the request, the offer, `transact`, the paid re-send with its bounded re-sends of the same bytes, the
//! settlement and the journal's answer.

use std::time::Duration;

use serde_json::{Value, json};

use super::offer::{self, Offer, PAYMENT_REQUIRED, Wire};
use super::retry::retry_after;
use super::settle::{self, Word};
use super::transport::Transport;
use super::types::{ClientError, Incoming, Lost, Outcome, Outgoing, Refused, Reply, Sent, Settlement, States};
use super::{Client, Config};
use crate::decline::{DeclineCode, Declined};
use crate::env::Clock;
use crate::gate::{Answered, Options, Purchase};
use crate::refusal::{Reason, Refusal};
use crate::safety::journal::{ExecutionState, PaymentState, ResponseState, RetryState};
use crate::safety::recovery::{Action, Charge, Quota, Recovery};
use crate::transact::{TransactOutcome, Transacted, transact};

/// The header of the purchase's idempotency key.
const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

pub(super) async fn send(client: &Client, request: Outgoing, options: &Options) -> Result<Outcome, ClientError> {
    if request.body.len() > client.config.max_body {
        return Err(ClientError::BodyTooLarge { size: request.body.len(), limit: client.config.max_body });
    }
    let first = once(client, client.transport.as_ref(), &request).await.map_err(ClientError::Transport)?;
    if first.status != 402 {
        return Ok(Outcome::Answered(unpaid(first)));
    }
    pay(client, client.transport.as_ref(), request, first, options).await
}

/// The answer to a request that carried no payment and was not a 402.
fn unpaid(answer: Incoming) -> Reply {
    let recovery = Recovery::of_http(answer.status, &answer.headers, false);
    let quota = Quota::from_headers(&answer.headers);
    Reply {
        status: answer.status,
        headers: answer.headers,
        body: answer.body,
        paid: None,
        recovery,
        states: States::NOT_PAID,
        quota,
    }
}

fn refused(declined: Declined, status: u16, pairing: Option<&str>) -> Outcome {
    let recovery = Recovery::of_decline(&declined);
    Outcome::Refused(Refused { declined, recovery, status, pairing: pairing.map(str::to_owned) })
}

/// Pays the 402 `answer`; the paid request (and its re-sends) go out on `via`.
pub(super) async fn pay(
    client: &Client,
    via: &dyn Transport,
    request: Outgoing,
    answer: Incoming,
    options: &Options,
) -> Result<Outcome, ClientError> {
    if request.body.len() > client.config.max_body {
        return Err(ClientError::BodyTooLarge { size: request.body.len(), limit: client.config.max_body });
    }
    let mut offer = match offer::read(&answer) {
        Ok(o) => o,
        Err(d) => return Ok(refused(d, answer.status, None)),
    };
    let (pairing, signer, network) = match offer::choose(&mut offer, client.wallet.as_ref()) {
        Ok(c) => c,
        Err(d) => return Ok(refused(d, answer.status, None)),
    };
    let mut purchase = Purchase::new(request.method.clone(), request.url.clone());
    if !request.body.is_empty() {
        purchase = purchase.with_body(&request.body);
    }
    if let Some(key) = request.get(IDEMPOTENCY_KEY) {
        purchase = purchase.with_key(key);
    }
    let key = purchase.key(signer.account());
    let options = options.clone().purchase(purchase);
    let Offer { wire, doc } = offer;
    let (done, resent) = match transact(doc, pairing, signer.as_ref(), client.fetch.as_ref(), &options).await {
        Err(d) => return Ok(refused(d, answer.status, Some(pairing.id()))),
        Ok(TransactOutcome::Signed(t)) => (t, false),
        Ok(TransactOutcome::Resend(r)) => (r.resend, true),
        Ok(TransactOutcome::ToApprove(t)) => return Ok(Outcome::ToApprove(t)),
        Ok(TransactOutcome::ApproveSpend(a)) => return Ok(Outcome::ApproveSpend(a)),
        Ok(TransactOutcome::PendingApproval(p)) => return Ok(Outcome::PendingApproval(p)),
    };
    let header = done.signed.as_ref().and_then(|p| match wire {
        Wire::X402 => p.header(),
        #[cfg(feature = "mpp")]
        Wire::Mpp => p.authorization(),
        #[cfg(not(feature = "mpp"))]
        Wire::Mpp => None,
    });
    let Some(value) = header else {
        let declined = Declined::new(DeclineCode::SignedNotBound, Refusal::new("client", Reason::NothingToSign).code())
            .with_cause("the pairing built no payment the client can put in a header");
        return Ok(refused(declined, answer.status, Some(pairing.id())));
    };
    let name = wire.payment_header();
    let paid = request.with_set(name, &value).with_set(IDEMPOTENCY_KEY, &key);
    let (got, sends, waited) = deliver(client, via, &paid, options.clock.as_ref()).await;
    let sent = Sent {
        pairing: pairing.id().to_owned(),
        key,
        attempt: done.attempt.clone(),
        h: done.h,
        account: signer.account().to_owned(),
        header: (name.to_owned(), value),
        sends,
        resent,
        waited,
        settlement: None,
        job: None,
        journal_error: None,
    };
    let ended = match got {
        Err(cause) => Ended::Lost(cause),
        Ok(answer) => Ended::Answer(answer),
    };
    Ok(answered(&options, &done, wire, network.as_deref(), sent, ended).await)
}

/// How the sends ended.
enum Ended {
    Answer(Incoming),
    Lost(String),
}

/// The answer (or its absence) read, told to the journal, and returned.
async fn answered(
    options: &Options,
    done: &Transacted,
    wire: Wire,
    network: Option<&str>,
    mut sent: Sent,
    ended: Ended,
) -> Outcome {
    let answer = match ended {
        Ended::Lost(cause) => {
            let why = format!("no answer after {} sends: {cause}", sent.sends);
            sent.journal_error = tell(options, done, Answered::Unknown(&why)).await;
            return Outcome::Lost(Lost {
                paid: sent,
                cause,
                recovery: Recovery::of_transport(true),
                states: states(
                    PaymentState::Unknown,
                    ExecutionState::NotStarted,
                    ResponseState::Lost,
                    Action::ResendSamePayment,
                ),
            });
        }
        Ended::Answer(a) => a,
    };
    let status = answer.status;
    let word = settle::read(&answer, wire, network, &sent.account);
    let settlement = match &word {
        Word::Read(s) => Some(s.as_ref().clone()),
        // x402 v2 puts a refused payment's reason in the 402's own PAYMENT-REQUIRED `error`.
        Word::Silent if status == 402 && wire == Wire::X402 => refusal_reason(&answer),
        _ => None,
    };
    let recovery = match (&word, status) {
        (Word::Unreadable(_), _) => Some(settle::UNREADABLE),
        (_, 402) => match &settlement {
            Some(Settlement::X402(r)) if r.success => Some(settle::UNREADABLE),
            Some(s) => settle::recovery(s).or(Recovery::of_http(402, &answer.headers, true)),
            None => Recovery::of_http(402, &answer.headers, true),
        },
        (_, 200..=299) => {
            let by_http = Recovery::of_http(status, &answer.headers, true);
            settlement.as_ref().and_then(settle::recovery).or(by_http)
        }
        _ => Recovery::of_http(status, &answer.headers, true),
    };
    // Broadcast and not final (read only with its transaction hash): paid, the outcome unknown.
    let pending = matches!(&word, Word::Read(s) if matches!(s.as_ref(), Settlement::X402(r) if r.is_pending()));
    let queued = !pending && status == 202 && recovery.is_none_or(|r| r.charge() == Charge::Yes);
    if queued {
        sent.job = settle::job_id(&answer);
    }
    // What the journal records of the answer, written only where there is a journal to tell.
    let record = if options.journal.is_some() && done.attempt.is_some() {
        json!({
            "status": status,
            "settlement": settlement.as_ref().map(|s| serde_json::to_value(s).unwrap_or(Value::Null)),
            "job": sent.job,
        })
    } else {
        Value::Null
    };
    let unknown = match &word {
        Word::Unreadable(why) => why.clone(),
        _ => format!("HTTP {status} after the payment was sent"),
    };
    let (told, state) = match (&word, recovery) {
        (Word::Unreadable(_), _) => (Answered::Unknown(&unknown), PaymentState::Unknown),
        _ if pending => (Answered::Pending(&record), PaymentState::Unknown),
        _ if queued => (Answered::Queued(&record), PaymentState::Settled),
        (_, None) if (200..=299).contains(&status) => (Answered::Completed(&record), PaymentState::Settled),
        (_, None) => (Answered::Settled(&record), PaymentState::Settled),
        (_, Some(r)) if r.charge() == Charge::No => (Answered::NotPaid(&record), PaymentState::NotPaid),
        (_, Some(r)) if r.charge() == Charge::Yes => (Answered::Settled(&record), PaymentState::Settled),
        (_, Some(_)) => (Answered::Unknown(&unknown), PaymentState::Unknown),
    };
    sent.journal_error = tell(options, done, told).await;
    let execution = match (status, state) {
        (202, PaymentState::Settled) => ExecutionState::Queued,
        (200..=299, PaymentState::Settled) => ExecutionState::Completed,
        // The seller answered with the work while its settlement is pending.
        (200..=299, PaymentState::Unknown) if pending && status != 202 => ExecutionState::Completed,
        _ => ExecutionState::NotStarted,
    };
    let action = recovery.map(|r| r.action());
    let retry = match (state, action) {
        (PaymentState::NotPaid, _) => RetryState::Safe,
        (_, Some(Action::QueryFirst)) => RetryState::QueryFirst,
        _ => RetryState::Forbidden,
    };
    sent.settlement = settlement;
    let quota = Quota::from_headers(&answer.headers);
    Outcome::Answered(Reply {
        status,
        headers: answer.headers,
        body: answer.body,
        paid: Some(sent),
        recovery,
        states: States { payment: state, execution, response: Some(ResponseState::Received), retry },
        quota,
    })
}

fn states(payment: PaymentState, execution: ExecutionState, response: ResponseState, action: Action) -> States {
    let retry = if action == Action::QueryFirst { RetryState::QueryFirst } else { RetryState::Forbidden };
    States { payment, execution, response: Some(response), retry }
}

/// The refusal reason of a 402 answering a payment, from its `PAYMENT-REQUIRED` `error` (x402 v2), as a settlement
/// response of `success: false`.
fn refusal_reason(answer: &Incoming) -> Option<Settlement> {
    #[cfg(feature = "x402")]
    {
        let doc = crate::x402::decode_payment_required(answer.header(PAYMENT_REQUIRED)?.trim()).ok()?;
        let reason = doc.get("error").and_then(Value::as_str)?.to_owned();
        let raw = json!({"success": false, "errorReason": reason});
        Some(Settlement::X402(super::types::SettlementResponse {
            success: false,
            error_reason: Some(reason),
            payer: None,
            transaction: None,
            network: None,
            amount: None,
            extensions: None,
            raw,
        }))
    }
    #[cfg(not(feature = "x402"))]
    {
        let _ = (answer, PAYMENT_REQUIRED);
        None
    }
}

/// Tells the journal the answer, where the call has one and the payment was recorded; the failure's text if it
/// fails.
async fn tell(options: &Options, done: &Transacted, answered: Answered<'_>) -> Option<String> {
    let (Some(journal), Some(attempt)) = (&options.journal, &done.attempt) else { return None };
    journal.answered(attempt, answered).await.err().map(|e| e.to_string())
}

/// One send on `via`, under the client's deadline.
pub(super) async fn once(client: &Client, via: &dyn Transport, request: &Outgoing) -> Result<Incoming, String> {
    let sending = via.send(request);
    match client.config.timeout {
        None => sending.await.map_err(|e| e.0),
        Some(limit) => match tokio::time::timeout(limit, sending).await {
            Ok(result) => result.map_err(|e| e.0),
            Err(_) => Err(format!("no answer within {} ms", limit.as_millis())),
        },
    }
}

/// Sends the paid request; re-sends exactly it after a timeout, a reset or a 5xx, at most `max_resends` times,
/// waiting the seller's `Retry-After` (an HTTP-date against `clock`) or the backoff. The last answer (or failure),
/// the sends, and the time waited.
async fn deliver(
    client: &Client,
    via: &dyn Transport,
    paid: &Outgoing,
    clock: &dyn Clock,
) -> (Result<Incoming, String>, u32, Duration) {
    let Config { max_resends, backoff, max_wait, .. } = client.config;
    let (mut sends, mut waited) = (0u32, Duration::ZERO);
    loop {
        sends = sends.saturating_add(1);
        let got = once(client, via, paid).await;
        let again = match &got {
            Err(_) => true,
            Ok(answer) => (500..=599).contains(&answer.status),
        };
        if !again || sends > max_resends {
            return (got, sends, waited);
        }
        let doubled = backoff.saturating_mul(1u32 << sends.saturating_sub(1).min(16));
        let wait = got.as_ref().ok().and_then(|a| retry_after(a, clock.now())).unwrap_or(doubled);
        if wait > max_wait {
            return (got, sends, waited);
        }
        tokio::time::sleep(wait).await;
        waited = waited.saturating_add(wait);
    }
}
