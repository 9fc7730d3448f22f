//! The XDR read: an envelope's base64 text to its `TransactionEnvelope` on `stellar-xdr`, read whole (no bytes after
//! it), and the caps of `decoder-caps.json` over everything it holds: ScVal vectors and maps nest at most 64 levels
//! within one value (the outermost container level 1), authorized invocations at most 64 levels within one entry
//! (the root level 1), and one envelope or value holds at most 1,536 vector elements and map entries. The walk keeps
//! its own stack, so no value read here is walked by recursion; the decoder's own depth limit bounds its recursion
//! before the walk runs.

use stellar_xdr::{
    HostFunction, LedgerKey, Limits, OperationBody, ReadXdr, ScVal, SorobanAuthorizationEntry,
    SorobanAuthorizedFunction, SorobanAuthorizedInvocation, SorobanCredentials, SorobanDelegateSignature,
    TransactionEnvelope, TransactionExt, WriteXdr,
};

use super::{MAX_XDR, Network, stellar};
use crate::json::js_length;
use crate::refusal::{Reason, Refusal};

/// The deepest ScVal vector and map nesting one value may hold.
pub const MAX_DEPTH: usize = 64;
/// The most vector elements and map entries one envelope (or one value read alone) may hold.
pub const MAX_ELEMENTS: usize = 1536;
/// The decoder's own depth limit, in the nested reads `stellar-xdr` counts (4 per ScVal container, 2 per authorized
/// invocation): 64 containers inside an envelope take 272 (`decoder-caps.json`'s SE1), 64 invocations 142 (SE3), and
/// both at once about 400; past it the decoder refuses before the caps' walk. Its recursion at this limit needs
/// under 512 KiB of stack in a debug build (tests/stellar_rail.rs), a quarter of a thread's default.
const DECODE_DEPTH: u32 = 400;

/// The bytes of an envelope's text: the network one the rail knows (`stellar/network-malformed`), a non-empty
/// string (`stellar/tx-malformed`) of at most 8,192 characters counted as JavaScript counts them
/// (`stellar/tx-too-large`), in canonical padded base64 (`stellar/tx-malformed`).
pub fn envelope_bytes(text: Option<&serde_json::Value>, network: Option<&str>) -> Result<Vec<u8>, Refusal> {
    if network.and_then(Network::parse).is_none() {
        return Err(stellar(Reason::NetworkMalformed));
    }
    let text = text.and_then(serde_json::Value::as_str).filter(|t| !t.is_empty());
    let text = text.ok_or(stellar(Reason::TxMalformed))?;
    if js_length(text) > MAX_XDR {
        return Err(stellar(Reason::TxTooLarge));
    }
    crate::codec::b64_decode(text).ok_or(stellar(Reason::TxMalformed))
}

/// The envelope the bytes are, read whole and held to the caps; `stellar/tx-malformed` for anything else.
pub fn decode_envelope(bytes: &[u8]) -> Result<TransactionEnvelope, Refusal> {
    let envelope = TransactionEnvelope::from_xdr(bytes, limits(bytes)).map_err(|_| stellar(Reason::TxMalformed))?;
    canonical(&envelope, bytes)?;
    let mut walk = Walk::default();
    walk.envelope(&envelope)?;
    Ok(envelope)
}

/// One ScVal the bytes are, read whole and held to the caps; `stellar/tx-malformed` for anything else.
pub fn decode_scval(bytes: &[u8]) -> Result<ScVal, Refusal> {
    let value = ScVal::from_xdr(bytes, limits(bytes)).map_err(|_| stellar(Reason::TxMalformed))?;
    canonical(&value, bytes)?;
    Walk::default().value(&value)?;
    Ok(value)
}

/// The value written back must be the bytes read: `stellar-xdr` reads a `bool` of any word (2 as false), which XDR
/// refuses, and this refuses every such leniency at once.
fn canonical(value: &impl WriteXdr, bytes: &[u8]) -> Result<(), Refusal> {
    let written = value.to_xdr(limits(bytes)).map_err(|_| stellar(Reason::TxMalformed))?;
    if written == bytes { Ok(()) } else { Err(stellar(Reason::TxMalformed)) }
}

fn limits(bytes: &[u8]) -> Limits {
    Limits { depth: DECODE_DEPTH, len: bytes.len() }
}

/// The caps' count over one envelope.
#[derive(Default)]
struct Walk {
    elements: usize,
}

impl Walk {
    fn add(&mut self, n: usize) -> Result<(), Refusal> {
        self.elements = self.elements.saturating_add(n);
        if self.elements > MAX_ELEMENTS { Err(stellar(Reason::TxMalformed)) } else { Ok(()) }
    }

    /// One value: its containers' nesting and its elements.
    fn value(&mut self, value: &ScVal) -> Result<(), Refusal> {
        let mut stack: Vec<(&ScVal, usize)> = vec![(value, 0)];
        while let Some((v, above)) = stack.pop() {
            let level = above + 1;
            match v {
                ScVal::Vec(Some(items)) => {
                    self.container(level, items.len())?;
                    stack.extend(items.iter().map(|i| (i, level)));
                }
                ScVal::Map(Some(map)) => {
                    self.container(level, map.len())?;
                    stack.extend(map.iter().flat_map(|e| [(&e.key, level), (&e.val, level)]));
                }
                ScVal::ContractInstance(instance) => {
                    if let Some(map) = &instance.storage {
                        self.container(level, map.len())?;
                        stack.extend(map.iter().flat_map(|e| [(&e.key, level), (&e.val, level)]));
                    }
                }
                ScVal::Vec(None) | ScVal::Map(None) => self.container(level, 0)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn container(&mut self, level: usize, len: usize) -> Result<(), Refusal> {
        if level > MAX_DEPTH {
            return Err(stellar(Reason::TxMalformed));
        }
        self.add(len)
    }

    fn values<'v>(&mut self, values: impl IntoIterator<Item = &'v ScVal>) -> Result<(), Refusal> {
        values.into_iter().try_for_each(|v| self.value(v))
    }

    fn envelope(&mut self, envelope: &TransactionEnvelope) -> Result<(), Refusal> {
        let tx = match envelope {
            TransactionEnvelope::Tx(e) => &e.tx,
            TransactionEnvelope::TxFeeBump(e) => {
                let stellar_xdr::FeeBumpTransactionInnerTx::Tx(inner) = &e.tx.inner_tx;
                &inner.tx
            }
            // A v0 transaction holds no Soroban operation the pairings read.
            TransactionEnvelope::TxV0(e) => {
                return e.tx.operations.iter().try_for_each(|op| self.operation(&op.body));
            }
        };
        tx.operations.iter().try_for_each(|op| self.operation(&op.body))?;
        if let TransactionExt::V1(data) = &tx.ext {
            let footprint = &data.resources.footprint;
            for key in footprint.read_only.iter().chain(footprint.read_write.iter()) {
                if let LedgerKey::ContractData(k) = key {
                    self.value(&k.key)?;
                }
            }
        }
        Ok(())
    }

    fn operation(&mut self, body: &OperationBody) -> Result<(), Refusal> {
        let OperationBody::InvokeHostFunction(op) = body else { return Ok(()) };
        match &op.host_function {
            HostFunction::InvokeContract(args) => self.values(args.args.iter())?,
            HostFunction::CreateContractV2(args) => self.values(args.constructor_args.iter())?,
            HostFunction::CreateContract(_) | HostFunction::UploadContractWasm(_) => {}
        }
        op.auth.iter().try_for_each(|entry| self.entry(entry))
    }

    fn entry(&mut self, entry: &SorobanAuthorizationEntry) -> Result<(), Refusal> {
        match &entry.credentials {
            SorobanCredentials::SourceAccount => {}
            SorobanCredentials::Address(c) | SorobanCredentials::AddressV2(c) => self.value(&c.signature)?,
            SorobanCredentials::AddressWithDelegates(c) => {
                self.value(&c.address_credentials.signature)?;
                let mut stack: Vec<&SorobanDelegateSignature> = c.delegates.iter().collect();
                while let Some(d) = stack.pop() {
                    self.value(&d.signature)?;
                    stack.extend(d.nested_delegates.iter());
                }
            }
        }
        self.invocation(&entry.root_invocation)
    }

    /// An authorized invocation and its sub-invocations: at most 64 levels, the root level 1.
    fn invocation(&mut self, root: &SorobanAuthorizedInvocation) -> Result<(), Refusal> {
        let mut stack = vec![(root, 1usize)];
        while let Some((inv, level)) = stack.pop() {
            if level > MAX_DEPTH {
                return Err(stellar(Reason::TxMalformed));
            }
            match &inv.function {
                SorobanAuthorizedFunction::ContractFn(args) => self.values(args.args.iter())?,
                SorobanAuthorizedFunction::CreateContractV2HostFn(args) => {
                    self.values(args.constructor_args.iter())?;
                }
                SorobanAuthorizedFunction::CreateContractHostFn(_) => {}
            }
            stack.extend(inv.sub_invocations.iter().map(|s| (s, level + 1)));
        }
        Ok(())
    }
}
