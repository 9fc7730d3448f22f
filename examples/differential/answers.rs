//! The signer's answers a case names, computed against the request they answer, as `scripts/differential/peer.py`
//! computes them on the reference's side: `{"$sign": {key, edit}}`, an EIP-712 signature (a batch's list) edited, or
//! for a `solana-message` request the key as an ed25519 seed's signature of the message (for `ed25519-raw`, in
//! base58; for `stellar-auth`, of SHA-256 of the preimage);
//! `{"$tx": {...}}`, an EIP-1559 transaction of an `evm-call` request's call; `{"$gateway": {answer, keepSalt}}`, a
//! Gateway client's answer with its burn intent's salt derived; `$tempo`, `$pushed` and `$digest`, the Tempo answers
//! (`tempo.rs`); anything else, the answer as given. And the case's wallet for `transact`.

use alloy_primitives::B256;
use serde_json::{Map, Value, json};
use terms::rail::evm::gateway::{SaltInput, account_of, gateway_salt};
use terms::rail::evm::request::Call;
use terms::rail::evm::transaction::{Fees, encode_signed, signing_hash, transaction};
use terms::{Answer, BoxFuture, LocalSigner, Signer, SignerError, SigningRequest, SolanaKey, StellarKey};

/// The keys a case signs with, each answering EIP-712 requests (and batches of them) as `LocalSigner` does.
pub(crate) fn local(key: &str) -> Option<LocalSigner> {
    LocalSigner::from_hex(key, 1).ok()
}

/// The answer a `$sign` spec gives for a request: the key's signature, then the edit.
fn signed_answer(spec: &Value, request: Option<&SigningRequest>) -> Option<Value> {
    let key = spec.get("key").and_then(Value::as_str)?;
    let edit = spec.get("edit").and_then(Value::as_str).unwrap_or("none");
    let answer = match request? {
        // The key as an ed25519 seed, for a Solana payer.
        SigningRequest::SolanaMessage(fields) => {
            let message = hex::decode(fields.get("message")?.as_str()?.strip_prefix("0x")?).ok()?;
            let signature = SolanaKey::from_seed_hex(key).ok()?.sign_bytes(&message);
            Value::String(format!("0x{}", hex::encode(signature)))
        }
        // A Soroban authorization entry: the key as an ed25519 seed signs SHA-256 of the preimage.
        SigningRequest::StellarAuth(fields) => {
            let preimage = hex::decode(fields.get("preimage")?.as_str()?.strip_prefix("0x")?).ok()?;
            let signature = StellarKey::from_seed_hex(key).ok()?.sign_preimage(&preimage);
            Value::String(format!("0x{}", hex::encode(signature)))
        }
        // The Solana session's proof: the key as an ed25519 seed, in base58.
        SigningRequest::Ed25519Raw(fields) => {
            let message = hex::decode(fields.get("message")?.as_str()?.strip_prefix("0x")?).ok()?;
            Value::String(bs58::encode(SolanaKey::from_seed_hex(key).ok()?.sign_bytes(&message)).into_string())
        }
        // A Solana batch-settlement opening: each request signed with the key as an ed25519 seed, in base58.
        SigningRequest::Batch { requests } if solana_batch(requests) => {
            let key = SolanaKey::from_seed_hex(key).ok()?;
            let sign = |r: &SigningRequest| {
                let message = hex::decode(r.fields()?.get("message")?.as_str()?.strip_prefix("0x")?).ok()?;
                Some(Value::String(bs58::encode(key.sign_bytes(&message)).into_string()))
            };
            Value::Array(requests.iter().map(sign).collect::<Option<Vec<_>>>()?)
        }
        request => sign_local(&local(key)?, request)?,
    };
    Some(edited(answer, edit))
}

/// Whether a batch's requests are all `solana-message` and `ed25519-raw` ones.
fn solana_batch(requests: &[SigningRequest]) -> bool {
    !requests.is_empty()
        && requests.iter().all(|r| matches!(r, SigningRequest::SolanaMessage(_) | SigningRequest::Ed25519Raw(_)))
}

fn sign_local(signer: &LocalSigner, request: &SigningRequest) -> Option<Value> {
    match request {
        SigningRequest::Eip712 { typed_data } => {
            let digest = typed_data.signing_hash()?;
            signer.sign_digest(&digest.0).ok().map(Value::String)
        }
        SigningRequest::Batch { requests } => {
            requests.iter().map(|r| sign_local(signer, r)).collect::<Option<Vec<_>>>().map(Value::Array)
        }
        _ => None,
    }
}

/// The edits `scripts/differential/peer.py` makes the same way: on a signature string, or on a batch's list.
fn edited(answer: Value, edit: &str) -> Value {
    match answer {
        Value::String(s) => edit_signature(&s, edit),
        Value::Array(list) => edit_list(list, edit),
        other => other,
    }
}

pub(crate) fn edit_signature(s: &str, edit: &str) -> Value {
    let hex = s.strip_prefix("0x").unwrap_or(s);
    let text = match edit {
        "upper" => format!("0x{}", hex.to_uppercase()),
        "prefix-0X" => format!("0X{hex}"),
        "no-prefix" => hex.to_owned(),
        "drop-byte" => format!("0x{}", hex.get(..hex.len().saturating_sub(2)).unwrap_or("")),
        "extra-byte" => format!("0x{hex}00"),
        "odd" => format!("0x{}", hex.get(..hex.len().saturating_sub(1)).unwrap_or("")),
        "v-low" => {
            let v = hex.get(hex.len().saturating_sub(2)..).and_then(|v| u8::from_str_radix(v, 16).ok()).unwrap_or(0);
            format!("0x{}{:02x}", hex.get(..hex.len().saturating_sub(2)).unwrap_or(""), v.wrapping_sub(27))
        }
        "flip-r" => {
            let first = hex.get(..2).and_then(|b| u8::from_str_radix(b, 16).ok()).unwrap_or(0);
            format!("0x{:02x}{}", first ^ 0xff, hex.get(2..).unwrap_or(""))
        }
        "pad-8192" => format!("0x{hex}{}", "00".repeat(8192usize.saturating_sub(hex.len() / 2))),
        "pad-8193" => format!("0x{hex}{}", "00".repeat(8193usize.saturating_sub(hex.len() / 2))),
        "space" => format!(" {s}"),
        "type-1" => format!("0x01{}", hex.get(2..).unwrap_or("")),
        "as-list" => return json!([s]),
        "as-object" => return json!({ "signature": s }),
        _ => s.to_owned(),
    };
    Value::String(text)
}

fn edit_list(mut list: Vec<Value>, edit: &str) -> Value {
    match edit {
        "swap" => list.reverse(),
        "drop-last" => {
            list.pop();
        }
        "extra" => {
            if let Some(first) = list.first().cloned() {
                list.push(first);
            }
        }
        "first-upper" => {
            if let Some(Value::String(first)) = list.first_mut() {
                *first = format!("0x{}", first.trim_start_matches("0x").to_uppercase());
            }
        }
        "first-drop-byte" => {
            if let Some(Value::String(first)) = list.first_mut() {
                first.truncate(first.len().saturating_sub(2));
            }
        }
        "nested" => {
            if let Some(first) = list.first_mut() {
                *first = json!([first.clone()]);
            }
        }
        "as-string" => return list.into_iter().next().unwrap_or(Value::Null),
        "second" => return list.into_iter().nth(1).unwrap_or(Value::Null),
        _ => {}
    }
    Value::Array(list)
}

/// A 32-byte ABI word of a number, 64 lower-case hex digits.
fn word(value: u128) -> String {
    format!("{value:064x}")
}

/// An EIP-1559 transaction of an `evm-call` request's call, signed with the spec's key: the request's chain id,
/// token and calldata unless the spec names another chain id, `to`, recipient or amount; then the spec's edit of its
/// hex. `None` for any other request.
fn signed_transaction(spec: &Value, request: Option<&SigningRequest>) -> Option<Value> {
    let Some(SigningRequest::EvmCall { chain_id, call, .. }) = request else { return None };
    let text = |k: &str| spec.get(k).and_then(Value::as_str);
    let number = |k: &str| text(k).and_then(|n| n.parse::<u128>().ok());
    let mut data = call.data.clone();
    if let Some(recipient) = text("recipient") {
        let padded = format!("{:0>64}", recipient.trim_start_matches("0x").to_lowercase());
        data = format!("{}{padded}{}", data.get(..10)?, data.get(74..)?);
    }
    if let Some(amount) = number("amount") {
        data = format!("{}{}", data.get(..74)?, word(amount));
    }
    let call = Call { to: text("to").unwrap_or(&call.to).to_owned(), data };
    let fees = Fees {
        nonce: spec.get("nonce")?.as_u64()?,
        gas_limit: spec.get("gas")?.as_u64()?,
        max_fee_per_gas: number("maxFeePerGas")?,
        max_priority_fee_per_gas: number("maxPriorityFeePerGas")?,
    };
    let chain = spec.get("chainId").and_then(Value::as_u64).unwrap_or(*chain_id);
    let tx = transaction(chain, &call, &fees)?;
    let signature = local(text("key")?)?.sign_digest(&signing_hash(&tx).0).ok()?;
    let raw = encode_signed(&tx, &hex::decode(signature.get(2..)?).ok()?)?;
    Some(edit_signature(&format!("0x{}", hex::encode(raw)), text("edit").unwrap_or("none")))
}

/// A Gateway amount as the salt takes it: a decimal string of 1 to 78 digits, without leading zeros.
fn gateway_decimal(value: &Value) -> Option<String> {
    let text = value.as_str().filter(|t| (1..=78).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit()))?;
    let trimmed = text.trim_start_matches('0');
    Some(if trimmed.is_empty() { "0".to_owned() } else { trimmed.to_owned() })
}

/// The Gateway client's answer: the spec's answer with its burn intent's salt set to the crate's `usdc` derivation
/// over the request's preimage and the answer's own values (unless `keepSalt`, or a value is missing).
fn gateway_answer(spec: &Value, request: Option<&SigningRequest>) -> Value {
    let mut answer = spec.get("answer").cloned().unwrap_or(Value::Null);
    let Some(SigningRequest::GatewayBurnIntent { preimage }) = request else { return answer };
    if spec.get("keepSalt") == Some(&Value::Bool(true)) {
        return answer;
    }
    let salt = (|| {
        let text = |k: &str| answer.get(k).and_then(Value::as_str);
        let (source_network, destination_network) = (text("sourceNetwork")?, text("destinationNetwork")?);
        let intent = answer.get("burnIntent")?.as_object()?;
        let transfer = intent.get("spec")?.as_object()?;
        let source_signer = account_of(source_network, transfer.get("sourceSigner")?.as_str()?)?;
        let destination_recipient = account_of(destination_network, transfer.get("destinationRecipient")?.as_str()?)?;
        let amount = gateway_decimal(transfer.get("value")?)?;
        let max_fee = gateway_decimal(intent.get("maxFee")?)?;
        let request_hash: B256 = preimage.request_hash.parse().ok()?;
        Some(gateway_salt(&SaltInput {
            id: &preimage.id,
            realm: &preimage.realm,
            request_hash: &request_hash,
            source_network,
            destination_network,
            source_depositor: text("source")?,
            source_signer: &source_signer,
            recipient: &preimage.recipient,
            destination_recipient: &destination_recipient,
            amount: &amount,
            max_fee: &max_fee,
        }))
    })();
    if let (Some(salt), Some(transfer)) = (salt, answer.pointer_mut("/burnIntent/spec").and_then(Value::as_object_mut))
    {
        transfer.insert("salt".into(), Value::String(salt.to_string()));
    }
    answer
}

/// An answer spec computed against the request it answers; any other value is the answer as given.
pub(crate) fn answer_of(spec: &Value, request: Option<&SigningRequest>) -> Value {
    let Some((name, inner)) = spec.as_object().filter(|o| o.len() == 1).and_then(|o| o.iter().next()) else {
        return spec.clone();
    };
    match name.as_str() {
        "$sign" => signed_answer(inner, request).unwrap_or(Value::Null),
        "$tx" => signed_transaction(inner, request).unwrap_or(Value::Null),
        "$gateway" => gateway_answer(inner, request),
        "$tempo" => crate::tempo::signed_tempo(inner, request).unwrap_or(Value::Null),
        "$pushed" => crate::tempo::pushed(inner, request).unwrap_or(Value::Null),
        "$digest" => crate::tempo::signed_digest(inner, request).unwrap_or(Value::Null),
        _ => spec.clone(),
    }
}

/// The case's wallet for `transact`: its account as given, EIP-712 (and batch) requests signed with its key and
/// then edited, ERC-7710 requests answered with the case's delegation, the request kinds the case names answered
/// with its answers, anything else refused.
pub(crate) struct Wallet {
    pub(crate) account: String,
    pub(crate) key: Option<LocalSigner>,
    pub(crate) edit: String,
    pub(crate) erc7710: Value,
    pub(crate) answers: Map<String, Value>,
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        let answer = match request {
            SigningRequest::Erc7710(_) if !self.erc7710.is_null() => Ok(self.erc7710.clone()),
            _ => match self.answers.get(request.kind()) {
                Some(spec) => Ok(answer_of(spec, Some(request))),
                None => self
                    .key
                    .as_ref()
                    .and_then(|k| sign_local(k, request))
                    .map(|a| edited(a, &self.edit))
                    .ok_or_else(|| SignerError::new("the wallet does not sign this request")),
            },
        };
        Box::pin(async move { answer.map(Answer::new) })
    }
}
