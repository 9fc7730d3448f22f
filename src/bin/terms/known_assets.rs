//! The well-known assets the CLI shows in their own units where no policy names them: network (CAIP-2), asset as
//! the offer names it, symbol, decimals. Each row is checked against the upstream vectors (`tests/cli_units.rs`):
//! an offer in the vectors names the network and asset with the symbol as its EIP-712 name or its mint, and a
//! vector gives the symbol's decimals. A plain table with no dependency, so the test reads it as it is.

/// `(network, asset, symbol, decimals)`.
pub(crate) const KNOWN_ASSETS: &[(&str, &str, &str, u8)] = &[
    // USDC on Base Sepolia: buyer.json's EIP-3009 offers (`extra.name` "USDC"); ack-payment-request.json: 6 decimals.
    ("eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", 6),
    // USDC on Solana devnet: buyer.json's offer and x402-exact-solana.json's mint with 6 decimals.
    ("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "USDC", 6),
];
