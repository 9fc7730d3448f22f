//! What every backend of the journal decides the same way, whatever database holds the rows: which attempt of a
//! purchase answers a new one, whether claims fit their budgets (256-bit sums), how each write moves an attempt's
//! states and reservations, and how a stored row reads back as a [`Record`]. A backend reads the rows this needs
//! inside one transaction, asks these functions, and writes the [`Change`] they return in the same transaction.
//!
//! Every refusal is a sentence (`Err(String)`); the backend adds the database's name to it.

use ruint::aliases::U256;
use serde_json::Value;

use super::{BudgetUse, ExecutionState, PaymentState, ReservationState, ResponseState, RetryState, Stage};
use crate::gate::{Answered, Begun, Claim, Ended, Intent, Prepared, Purchase, Resumed};
use crate::hash::{AtrHash, atr_hash};
use crate::refusal::Reason;

pub(crate) use super::row::{Raw, RawReservation, record};

/// The columns of an attempt's row that both schemas write alike (as SQL, for `concat!`): all but the attempt's id
/// (the key), `moving` and the two times, which each database types its own way. A stored state is one of the
/// names its enum writes.
macro_rules! attempt_columns {
    () => {
        "
  key TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('payment', 'agreement', 'voucher')),
  pairing TEXT NOT NULL,
  account TEXT NOT NULL,
  h TEXT NOT NULL,
  payee TEXT NOT NULL,
  purchase TEXT,
  chosen TEXT NOT NULL,
  quote TEXT NOT NULL,
  stage TEXT NOT NULL CHECK (stage IN ('intent', 'signed', 'ended', 'answered', 'lapsed')),
  payment_state TEXT NOT NULL CHECK (payment_state IN ('not-paid', 'unknown', 'settled')),
  execution TEXT NOT NULL CHECK (execution IN ('not-started', 'queued', 'running', 'failed', 'completed')),
  response TEXT CHECK (response IN ('received', 'lost')),
  retry TEXT NOT NULL CHECK (retry IN ('safe', 'query-first', 'forbidden')),
  payment TEXT,
  answer TEXT,
  decline TEXT,
  cause TEXT,"
    };
}

/// The columns of a reservation's row that both schemas write alike: all but its attempt, window and time.
macro_rules! reservation_columns {
    () => {
        "
  budget TEXT NOT NULL,
  scope TEXT NOT NULL,
  asset TEXT NOT NULL,
  amount TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('reserved', 'committed', 'released')),"
    };
}

pub(crate) use {attempt_columns, reservation_columns};

/// Every column of an attempt's row, in the order [`Raw`] holds them.
pub(crate) const COLUMNS: &str = "attempt, key, role, pairing, account, h, payee, purchase, chosen, quote, stage, \
                                  payment_state, execution, response, retry, moving, payment, answer, decline, \
                                  cause, created_at, updated_at, prepared";

/// What `begin` reads of an earlier attempt of the purchase that is not closed: one in flight (`intent`) or one
/// whose payment is not `not-paid`, newest first.
#[derive(Debug)]
pub(crate) struct Prior {
    pub(crate) attempt: String,
    pub(crate) stage: String,
    pub(crate) payment_state: String,
    pub(crate) moving: bool,
    pub(crate) payment: Option<String>,
    pub(crate) created_at: i64,
    /// What its wallet was to be asked ([`Prepared`] as JSON), where `begin` recorded it.
    pub(crate) prepared: Option<String>,
    /// Whether it recorded a decline while in flight ([`Ended::Asked`]): no process is signing it any more.
    pub(crate) declined: bool,
    /// What a resumed attempt needs: its pairing, payer, H, choice and (where `prepared` is recorded) ATR bytes.
    pub(crate) resume: PriorPayment,
}

/// The columns of an earlier attempt that resuming it reads.
#[derive(Debug, Default)]
pub(crate) struct PriorPayment {
    pub(crate) purchase: Option<String>,
    pub(crate) pairing: String,
    pub(crate) account: String,
    pub(crate) h: String,
    pub(crate) chosen: String,
    pub(crate) bytes: Option<Vec<u8>>,
}

/// The columns [`Prior`] is read from, in its order (`bytes` from the ATR table, joined by H), the attempts' table
/// named `a`.
pub(crate) const PRIOR_COLUMNS: &str = "a.attempt, a.stage, a.payment_state, a.moving, a.payment, a.created_at, a.prepared, a.pairing, a.account, a.h, \
     a.chosen, CASE WHEN a.prepared IS NULL THEN NULL ELSE t.bytes END, a.purchase, a.decline IS NOT NULL";

/// What the open attempts of a purchase say before a new one may begin.
#[derive(Debug)]
pub(crate) enum Next {
    /// Answer with this; nothing is written.
    Answer(Begun),
    /// Go on: write these changes (attempts whose lease lapsed) first, then check the claims.
    Go(Vec<(String, Change)>),
}

/// The pairings whose signed authorization's nonce is H itself, or derived from H alone (an MPP challenge id is H
/// and the challenge's place): an EIP-3009 nonce settles once per payer, so two purchases under one H collide.
const NONCE_OF_H: [&str; 2] = ["x402/exact/eip155/eip3009", "mpp/charge/evm/authorization"];

/// Whether the intent's payment is one whose nonce is H ([`NONCE_OF_H`]): only then is another purchase asked after.
pub(crate) fn nonce_of_h(intent: &Intent<'_>) -> bool {
    NONCE_OF_H.contains(&intent.pairing) && intent.role == crate::gate::Role::Payment
}

/// Whether a payment of this intent would carry a nonce another purchase of the same payer already used: its
/// pairing's nonce is H ([`NONCE_OF_H`]), and `other` is a purchase key the journal holds for the same payer,
/// pairing and H whose payment may have settled (any state but `not-paid`).
pub(crate) fn nonce_used(intent: &Intent<'_>, other: Option<String>) -> Option<Begun> {
    let other = other.filter(|key| key != intent.key && nonce_of_h(intent))?;
    Some(Begun::Blocked(
        Reason::NonceUsed,
        format!(
            "purchase {other} of the same payer already paid under H {}, and this pairing's nonce is H: the seller \
             serves one static ATR, and a second authorization with that nonce could never settle (ask the seller \
             for terms per transaction)",
            intent.h.to_hex()
        ),
    ))
}

/// Decides from the purchase's open attempts (newest first) whether a new attempt at `at` may begin, for the
/// request `purchase` names.
pub(crate) fn before(open: &[Prior], at: i64, lease: u64, purchase: Option<&Purchase>) -> Result<Next, String> {
    // The key was given for another request: its earlier payment stands, and this request is not paid under it.
    for prior in open {
        let stored = prior.resume.purchase.as_deref().and_then(|p| serde_json::from_str::<Purchase>(p).ok());
        if let (Some(was), Some(now)) = (stored, purchase)
            && !same_request(&was, now)
        {
            return Ok(Next::Answer(Begun::Blocked(
                Reason::KeyReused,
                format!(
                    "the purchase key was used by attempt {} for {} {} with another body or request: its payment \
                     stands, and this request is not paid under the same key",
                    prior.attempt, was.method, was.url
                ),
            )));
        }
    }
    let mut read = Vec::with_capacity(open.len());
    for prior in open {
        let bad = || format!("the journal's record of attempt {} is unreadable", prior.attempt);
        read.push((
            prior,
            Stage::parse(&prior.stage).ok_or_else(bad)?,
            PaymentState::parse(&prior.payment_state).ok_or_else(bad)?,
        ));
    }
    // A signed payment that may have moved, or settled: only it may be sent again.
    let signed = read.iter().filter(|(_, _, state)| *state != PaymentState::NotPaid);
    if let Some((attempt, payment)) = signed.into_iter().find_map(|(p, _, _)| Some((&p.attempt, p.payment.as_deref()?)))
    {
        let payment: Value = serde_json::from_str(payment)
            .map_err(|_| format!("the signed payment of attempt {attempt} is unreadable"))?;
        return Ok(Next::Answer(Begun::Resend { attempt: attempt.clone(), payment: Box::new(payment) }));
    }
    // Money may have moved (or did), and nothing signed was recorded to re-send.
    for (prior, stage, state) in &read {
        let attempt = &prior.attempt;
        if *stage == Stage::Intent && prior.moving {
            return Ok(Next::Answer(Begun::Blocked(
                Reason::StateUnknown,
                format!(
                    "attempt {attempt} for this purchase was handing its payment to a signer that moves money itself \
                     and never came back: the money may have moved and nothing signed was recorded to re-send; a \
                     person must look"
                ),
            )));
        }
        if *state != PaymentState::NotPaid {
            return Ok(Next::Answer(Begun::Blocked(
                Reason::StateUnknown,
                format!(
                    "attempt {attempt} for this purchase is {state}: money moved or may have, and nothing signed was \
                     recorded to re-send: ask the seller first"
                ),
            )));
        }
    }
    // In flight: blocks until its lease lapses.
    let lease = i64::try_from(lease).unwrap_or(i64::MAX);
    let in_flight = || read.iter().filter(|(_, stage, _)| *stage == Stage::Intent).map(|(p, _, _)| p);
    for prior in in_flight() {
        let until = prior.created_at.saturating_add(lease);
        // One that declined after asking its wallet is signed by no process any more: it is resumed at once.
        if until > at && !(prior.declined && prior.prepared.is_some()) {
            let attempt = &prior.attempt;
            return Ok(Next::Answer(Begun::Blocked(
                Reason::InFlight,
                format!("attempt {attempt} for this purchase is being signed (its lease runs until {until})"),
            )));
        }
    }
    // Lapsed, with what its wallet was asked recorded: the wallet may have signed it, so only that request may be
    // asked again. An intent recorded before its payment was built (none recorded) lapses: nothing was asked.
    if let Some(prior) = in_flight().find(|p| p.prepared.is_some()) {
        return Ok(Next::Answer(resumed(prior)));
    }
    let lapse = |p: &Prior| {
        let until = p.created_at.saturating_add(lease);
        let cause = format!("its lease lapsed at {until} with nothing signed; a later attempt took the purchase");
        let change = Change {
            stage: Some(Stage::Lapsed),
            payment_state: Some(PaymentState::NotPaid),
            retry: Some(RetryState::Safe),
            cause: Some(cause),
            reservations: Some(RELEASE),
            ..Change::default()
        };
        (p.attempt.clone(), change)
    };
    Ok(Next::Go(in_flight().map(|p| lapse(p)).collect()))
}

/// Whether two purchases under one key are the same request: method (any case), URL and body.
fn same_request(a: &Purchase, b: &Purchase) -> bool {
    a.method.eq_ignore_ascii_case(&b.method) && a.url == b.url && a.body_sha256 == b.body_sha256
}

/// The attempt to resume, as the journal holds it; a record that cannot be read blocks (`journal/state-unknown`):
/// its wallet may have signed, so nothing new may be built either.
fn resumed(prior: &Prior) -> Begun {
    let attempt = &prior.attempt;
    let blocked = |what: &str| {
        Begun::Blocked(
            Reason::StateUnknown,
            format!(
                "attempt {attempt} for this purchase recorded the payment its wallet was asked to sign, and {what}: \
                 nothing can be asked again and nothing new may be signed; a person must look"
            ),
        )
    };
    let Some(prepared) = prior.prepared.as_deref().and_then(|p| serde_json::from_str::<Prepared>(p).ok()) else {
        return blocked("that record is unreadable");
    };
    let Some(bytes) = prior.resume.bytes.clone() else {
        return blocked("its ATR bytes are not in the journal");
    };
    let Some(h) = AtrHash::parse(&prior.resume.h) else { return blocked("its H is unreadable") };
    let Ok(chosen) = serde_json::from_str::<crate::pairing::Chosen>(&prior.resume.chosen) else {
        return blocked("its choice is unreadable");
    };
    let p = &prior.resume;
    Begun::Resume(Box::new(Resumed::new(attempt.clone(), &p.pairing, &p.account, h, chosen, bytes, prepared)))
}

/// The first claim that does not fit, given what each claim's window holds (`held`, one per claim, in order),
/// counting what the intent's earlier claims add to the same budget.
pub(crate) fn over_budget<'c>(claims: &'c [Claim], held: &[Held]) -> Option<&'c Claim> {
    for (i, (claim, held)) in claims.iter().zip(held).enumerate() {
        let earlier = claims.iter().take(i).filter(|c| same_budget(c, claim));
        let total = earlier.fold(held.total(), |sum, c| sum.and_then(|s| s.checked_add(c.amount)));
        if total.and_then(|t| t.checked_add(claim.amount)).is_none_or(|t| t > claim.limit) {
            return Some(claim);
        }
    }
    None
}

fn same_budget(a: &Claim, b: &Claim) -> bool {
    a.budget == b.budget && a.scope == b.scope && a.asset == b.asset
}

/// The intent's JSON columns: the purchase (where named), the choice, the quote and what the wallet will be asked
/// (where the intent carries its payment).
pub(crate) struct IntentJson {
    pub(crate) purchase: Option<String>,
    pub(crate) chosen: String,
    pub(crate) quote: String,
    pub(crate) prepared: Option<String>,
}

/// The intent's JSON columns; where it carries its payment, the bytes must hash to its H.
pub(crate) fn intent_json(intent: &Intent<'_>) -> Result<IntentJson, String> {
    let text = |value: Result<String, serde_json::Error>| value.map_err(|e| e.to_string());
    let purchase = intent.purchase.map(|p| text(serde_json::to_string(p))).transpose()?;
    let prepared = match &intent.to_sign {
        None => None,
        Some(to_sign) if atr_hash(to_sign.bytes) != *intent.h => {
            return Err(format!(
                "the ATR bytes given with attempt {} do not hash to its H {}: nothing is recorded",
                intent.attempt, intent.h
            ));
        }
        Some(to_sign) => Some(text(serde_json::to_string(&to_sign.prepared()))?),
    };
    Ok(IntentJson {
        purchase,
        chosen: text(serde_json::to_string(intent.chosen))?,
        quote: text(serde_json::to_string(intent.quote))?,
        prepared,
    })
}

/// What a budget window holds, each sum `None` where it would pass 2^256 - 1.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Held {
    /// Settled payments' reservations.
    pub(crate) committed: Option<U256>,
    /// Reservations of payments whose outcome is not known.
    pub(crate) reserved: Option<U256>,
}

impl Default for Held {
    fn default() -> Self {
        Self { committed: Some(U256::ZERO), reserved: Some(U256::ZERO) }
    }
}

impl Held {
    /// Both together, `None` past 2^256 - 1.
    pub(crate) fn total(self) -> Option<U256> {
        self.committed?.checked_add(self.reserved?)
    }

    /// What the window holds against `limit`; a sum past 2^256 - 1 reads as 2^256 - 1.
    pub(crate) fn usage(self, limit: U256) -> BudgetUse {
        let saturate = |sum: Option<U256>| sum.unwrap_or(U256::MAX);
        BudgetUse::new(saturate(self.committed), saturate(self.reserved), limit)
    }

    /// Adds what counts of `budget` in the reservation state `state`: one stored amount, or a sum the database
    /// made of several (decimal text, atomic units). Digits past 2^256 - 1 are a sum that passed it.
    #[cfg(feature = "postgres")]
    pub(crate) fn add(&mut self, budget: &str, amount: &str, state: &str) -> Result<(), String> {
        let amount = match crate::pairing::parse_atomic(amount) {
            Some(amount) => Some(amount),
            None if !amount.is_empty() && amount.bytes().all(|b| b.is_ascii_digit()) => None,
            None => return Err(format!("a reservation of budget {budget} holds an unreadable amount")),
        };
        let sum = match ReservationState::parse(state) {
            Some(ReservationState::Committed) => &mut self.committed,
            _ => &mut self.reserved,
        };
        *sum = sum.and_then(|s| s.checked_add(amount?));
        Ok(())
    }
}

/// The first time a window `(now - window, now]` counts a reservation from: those dated after it count.
pub(crate) fn window_start(window: u64, now: u64) -> i64 {
    i64::try_from(i128::from(now) - i128::from(window)).unwrap_or(i64::MIN)
}

/// Reservations moved by a change: those in any state of the list, to the state.
pub(crate) type Move = (ReservationState, &'static [ReservationState]);

const RELEASE: Move = (ReservationState::Released, &[ReservationState::Reserved]);

/// One write to an attempt's row: each `Some` column is set, each `None` kept; `moving` sets the flag; the
/// reservations move as `reservations` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) stage: Option<Stage>,
    pub(crate) payment_state: Option<PaymentState>,
    pub(crate) execution: Option<ExecutionState>,
    pub(crate) retry: Option<RetryState>,
    pub(crate) response: Option<ResponseState>,
    pub(crate) moving: bool,
    pub(crate) payment: Option<String>,
    pub(crate) answer: Option<String>,
    pub(crate) decline: Option<String>,
    pub(crate) cause: Option<String>,
    pub(crate) prepared: Option<String>,
    pub(crate) reservations: Option<Move>,
}

/// An attempt's stage and payment state as stored, read.
pub(crate) fn current(attempt: &str, row: Option<(String, String)>) -> Result<(Stage, PaymentState), String> {
    let Some((stage, state)) = row else {
        return Err(format!("attempt {attempt} is not in the journal"));
    };
    let bad = || format!("the journal's record of attempt {attempt} is unreadable");
    Ok((Stage::parse(&stage).ok_or_else(bad)?, PaymentState::parse(&state).ok_or_else(bad)?))
}

/// Refuses an attempt that is no longer in flight: a late process never records (or returns) a payment for it.
fn in_flight(attempt: &str, stage: Stage, what: &str) -> Result<(), String> {
    match stage {
        Stage::Intent => Ok(()),
        Stage::Lapsed => Err(format!(
            "attempt {attempt} cannot be {what}: its lease lapsed and another attempt may pay for the purchase; what \
             it signed must not be sent"
        )),
        other => Err(format!("attempt {attempt} cannot be {what}: it is {other}, no longer in flight")),
    }
}

/// Before a signer that moves money itself is called.
pub(crate) fn moving(attempt: &str, stage: Stage) -> Result<Change, String> {
    in_flight(attempt, stage, "marked as moving money")?;
    Ok(Change { moving: true, ..Change::default() })
}

/// Before the next step of a payment signed in steps is asked: the answers so far and that step.
pub(crate) fn stepped(attempt: &str, stage: Stage, prepared: &Prepared) -> Result<Change, String> {
    in_flight(attempt, stage, "given its next step")?;
    let prepared = serde_json::to_string(prepared).map_err(|e| e.to_string())?;
    Ok(Change { prepared: Some(prepared), ..Change::default() })
}

/// After signing: the hash of the ATR bytes to keep (it must be the attempt's H, stored as `h`) and the change.
pub(crate) fn signed(
    attempt: &str,
    stage: Stage,
    h: &str,
    bytes: &[u8],
    payment: &Value,
) -> Result<(AtrHash, Change), String> {
    in_flight(attempt, stage, "given a signed payment")?;
    let got = atr_hash(bytes);
    if AtrHash::parse(h) != Some(got) {
        return Err(format!(
            "the ATR bytes given for attempt {attempt} hash to {got}, not to its H {h}: the payment is not recorded"
        ));
    }
    let payment = serde_json::to_string(payment).map_err(|e| e.to_string())?;
    let change = Change {
        stage: Some(Stage::Signed),
        payment: Some(payment),
        payment_state: Some(PaymentState::Unknown),
        retry: Some(RetryState::Forbidden),
        ..Change::default()
    };
    Ok((got, change))
}

/// The attempt ended inside the gate.
pub(crate) fn ended(attempt: &str, stage: Stage, state: PaymentState, ended: Ended<'_>) -> Result<Change, String> {
    // Handed back for approval: nothing was signed, and there is no decline to keep.
    let (decline, moved) = match ended {
        Ended::NotPaid(d) => (Some(d), false),
        Ended::Moved(d) => (Some(d), true),
        Ended::HandedBack => (None, false),
        Ended::Asked(d) => {
            // The wallet was asked: the attempt stays in flight, with its request, to be asked again.
            in_flight(attempt, stage, "declined after its wallet was asked")?;
            let cause = "declined after its wallet was asked: the wallet may hold a signature of its request, so \
                         the purchase's next try asks the same request again";
            let decline = serde_json::to_string(d).map_err(|e| e.to_string())?;
            return Ok(Change { decline: Some(decline), cause: Some(cause.into()), ..Change::default() });
        }
    };
    let decline = decline.map(serde_json::to_string).transpose().map_err(|e| e.to_string())?;
    if state == PaymentState::Settled || stage == Stage::Answered {
        return Err(format!("attempt {attempt} was answered already: its end is not recorded"));
    }
    let ended = Change { stage: Some(Stage::Ended), decline, ..Change::default() };
    if moved {
        // Money may have moved: the payment is unknown, and its reservations count again if they were released.
        return Ok(Change {
            payment_state: Some(PaymentState::Unknown),
            retry: Some(RetryState::QueryFirst),
            reservations: Some((ReservationState::Reserved, &[ReservationState::Released])),
            ..ended
        });
    }
    if stage == Stage::Signed {
        // Its signed payment was recorded and may have been handed out again since (`Begun::Resend`): it stays
        // unknown; only an answer from the seller says it was not paid.
        let cause = "declined without moving money after its payment was recorded: the payment may have been re-sent \
                     since, so it stays unknown";
        return Ok(Change { cause: Some(cause.into()), ..ended });
    }
    if stage == Stage::Ended {
        return Err(format!("attempt {attempt} ended already"));
    }
    Ok(Change {
        payment_state: Some(PaymentState::NotPaid),
        retry: Some(RetryState::Safe),
        reservations: Some(RELEASE),
        ..ended
    })
}

/// What the seller answered to the attempt's payment.
pub(crate) fn answered(attempt: &str, state: PaymentState, answered: Answered<'_>) -> Result<Change, String> {
    if state == PaymentState::NotPaid {
        return Err(format!("attempt {attempt} sent no payment (it is not-paid): its answer is not recorded"));
    }
    let json = |v: &Value| serde_json::to_string(v).map_err(|e| e.to_string());
    let answered_ = |response| Change { stage: Some(Stage::Answered), response: Some(response), ..Change::default() };
    match answered {
        Answered::Settled(v) => settled(json(v)?, None, RetryState::Forbidden),
        // Settled and answered with what was bought: the execution is done.
        Answered::Completed(v) => settled(json(v)?, Some(ExecutionState::Completed), RetryState::Forbidden),
        // Accepted and queued (a 202 with a job id): settled, the execution queued, and the job asked after first.
        Answered::Queued(v) => settled(json(v)?, Some(ExecutionState::Queued), RetryState::QueryFirst),
        Answered::NotPaid(_) if state == PaymentState::Settled => {
            Err(format!("attempt {attempt} settled: a later answer of no charge is not taken; a person must look"))
        }
        Answered::NotPaid(v) => Ok(Change {
            payment_state: Some(PaymentState::NotPaid),
            retry: Some(RetryState::Safe),
            answer: Some(json(v)?),
            reservations: Some(RELEASE),
            ..answered_(ResponseState::Received)
        }),
        Answered::Pending(_) if state == PaymentState::Settled => {
            Err(format!("attempt {attempt} settled: a later pending answer is not taken; a person must look"))
        }
        // Broadcast, not final: money may have moved. The answer keeps the transaction hash, the reservations count
        // (again, where an end had released them), and the seller is asked (or the same payment re-sent) first.
        Answered::Pending(v) => Ok(Change {
            payment_state: Some(PaymentState::Unknown),
            retry: Some(RetryState::QueryFirst),
            answer: Some(json(v)?),
            reservations: Some((ReservationState::Reserved, &[ReservationState::Released])),
            ..answered_(ResponseState::Received)
        }),
        // A settled payment stays settled; an unknown one stays unknown, and may only be re-sent.
        Answered::Unknown(why) => Ok(Change {
            retry: Some(RetryState::Forbidden),
            cause: Some(why.to_owned()),
            ..answered_(ResponseState::Lost)
        }),
    }
}

/// A settled answer: the payment settled, its reservations committed, the answer recorded, with its execution
/// (where the answer says) and what a retry may do.
fn settled(answer: String, execution: Option<ExecutionState>, retry: RetryState) -> Result<Change, String> {
    Ok(Change {
        stage: Some(Stage::Answered),
        response: Some(ResponseState::Received),
        payment_state: Some(PaymentState::Settled),
        execution,
        retry: Some(retry),
        answer: Some(answer),
        reservations: Some((ReservationState::Committed, &[ReservationState::Reserved, ReservationState::Released])),
        ..Change::default()
    })
}

/// A time or duration as the databases store it (a signed 64-bit integer); past that, refused.
pub(crate) fn int(value: u64, what: &str) -> Result<i64, String> {
    i64::try_from(value).map_err(|_| format!("{what} ({value}) is past what the journal stores"))
}

/// Now by the system clock, Unix seconds (the time of writes after the intent, which carry none).
pub(crate) fn now() -> i64 {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    i64::try_from(secs).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_of_one_budget_are_the_same_budget_only_with_the_same_scope_and_asset() {
        let c =
            |budget: &str, scope: &str, asset: &str| Claim::new(budget, scope, asset, 60, U256::from(9), U256::from(1));
        assert!(same_budget(&c("day", "", "a"), &c("day", "", "a")));
        assert!(!same_budget(&c("day", "", "a"), &c("day", "", "b")));
        assert!(!same_budget(&c("day", "", "a"), &c("day", "p", "a")));
        assert!(!same_budget(&c("day", "", "a"), &c("hour", "", "a")));
    }

    #[test]
    fn a_window_sums_exactly_and_a_sum_past_two_to_the_256_leaves_nothing() {
        let mut held = Held::default();
        assert!(held.add("b", "5", "reserved").is_ok() && held.add("b", "7", "committed").is_ok());
        assert_eq!(held.total(), Some(U256::from(12)));
        assert_eq!(held.usage(U256::from(20)), BudgetUse::new(U256::from(7), U256::from(5), U256::from(20)));
        // A sum the database made past 2^256 - 1 (78 digits of 9): over, never wrapped, never an error.
        assert!(held.add("b", &"9".repeat(78), "committed").is_ok());
        assert_eq!((held.committed, held.total()), (None, None));
        assert_eq!(held.usage(U256::MAX).remaining, U256::ZERO);
        assert!(held.add("b", "12x", "reserved").is_err() && held.add("b", "", "reserved").is_err());
    }
}
