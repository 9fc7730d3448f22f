//! Lightning's facts the x402 and MPP pairings on Lightning share: the BOLT11 invoice, read with the reference's
//! relaxed limits ([`bolt11`]), and the BOLT11 currency of each `lnbtc` CAIP-2 network. A rail imports only the
//! rail-free core.

pub mod bolt11;

pub use bolt11::{Bolt11, Currency, Field, MAX_INVOICE, decode, invoice_h};

/// The BOLT11 currency of each `lnbtc` network, the CAIP-2 reference being the first 32 hex digits of the network's
/// genesis block hash: `bc` mainnet; `tb` testnet3 and testnet4; `tbs` signet; `bcrt` regtest.
pub const NETWORKS: [(&str, Currency); 5] = [
    ("lnbtc:000000000019d6689c085ae165831e93", Currency::Bc),
    ("lnbtc:000000000933ea01ad0ee984209779ba", Currency::Tb),
    ("lnbtc:00000000da84f2bafbbc53dee25a72ae", Currency::Tb),
    ("lnbtc:00000008819873e925422c1ff0f99f7c", Currency::Tbs),
    ("lnbtc:0f9188f13cb7b2c71f2a335e3a4fc328", Currency::Bcrt),
];

/// Whether the text is 64 lower-case hex digits: a preimage, a payment hash or a request hash as Lightning's
/// protocols write them.
pub fn is_hex32(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The BOLT11 currency of an `lnbtc` network, or `None` for any other network.
pub fn currency_of(network: &str) -> Option<Currency> {
    NETWORKS.iter().find(|(n, _)| *n == network).map(|(_, c)| *c)
}

/// The first `lnbtc` network, in [`NETWORKS`]' order, whose invoices are in this currency: the network a quote of an
/// MPP Lightning challenge (which names a currency, not a CAIP-2 network) is on.
pub fn network_of(currency: Currency) -> &'static str {
    // Every currency has a network in the table; mainnet's stands in for the impossible miss.
    NETWORKS.iter().find(|(_, c)| *c == currency).map_or("lnbtc:000000000019d6689c085ae165831e93", |(n, _)| n)
}
