//! Tempo's facts the MPP pairings on Tempo share: the TIP-20 `transfer` and `transferWithMemo` calldata and its memo
//! word, split payments as several calls of one transaction ([`tip20`]); the signed 0x76 transaction, written and
//! read through alloy-rlp ([`transaction`]), and its sender ([`sender`]); the account keychain's key authorization,
//! whose witness MPP's Tempo subscription makes H ([`key_authorization`]); the session escrows' v2 open call and
//! channel id ([`channel`]). A rail imports only the rail-free core.

pub mod channel;
pub mod key_authorization;
pub mod sender;
pub mod tip20;
pub mod transaction;
