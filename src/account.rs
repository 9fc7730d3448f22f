//! CAIP-10 accounts: `namespace:reference:address`.

/// A signer's CAIP-10 account, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// The CAIP-2 namespace, e.g. `eip155`.
    pub namespace: String,
    /// The CAIP-2 network, `namespace:reference`, e.g. `eip155:84532`.
    pub network: String,
    /// The address: taken as written for `eip155`, percent-decoded (CAIP-10's escape) for the other namespaces.
    pub address: String,
}

fn all(text: &str, len: std::ops::RangeInclusive<usize>, ok: impl Fn(u8) -> bool) -> bool {
    len.contains(&text.len()) && text.bytes().all(ok)
}

impl Account {
    /// Reads `^([-a-z0-9]{3,8}):([-_a-zA-Z0-9]{1,32}):([-.%a-zA-Z0-9]{1,128})$`; `None` for anything else, and for a
    /// non-EVM address whose percent escapes are broken or decode to invalid UTF-8.
    pub fn parse(account: &str) -> Option<Self> {
        let mut parts = account.splitn(3, ':');
        let (ns, reference, address) = (parts.next()?, parts.next()?, parts.next()?);
        let ok = all(ns, 3..=8, |b| b == b'-' || b.is_ascii_lowercase() || b.is_ascii_digit())
            && all(reference, 1..=32, |b| b == b'-' || b == b'_' || b.is_ascii_alphanumeric())
            && all(address, 1..=128, |b| b == b'-' || b == b'.' || b == b'%' || b.is_ascii_alphanumeric());
        if !ok {
            return None;
        }
        let network = format!("{ns}:{reference}");
        let address = if ns == "eip155" { address.to_owned() } else { percent_decode(address)? };
        Some(Self { namespace: ns.to_owned(), network, address })
    }
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hi = bytes.get(i + 1).and_then(|c| (*c as char).to_digit(16))?;
            let lo = bytes.get(i + 2).and_then(|c| (*c as char).to_digit(16))?;
            out.push(u8::try_from(hi * 16 + lo).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The EVM account form `eip155:<digits>:0x<40 hex>`: the network and the address as written.
pub fn evm_account(account: &str) -> Option<(String, String)> {
    let rest = account.strip_prefix("eip155:")?;
    let (chain, address) = rest.split_once(':')?;
    let hex = address.strip_prefix("0x")?;
    if chain.is_empty()
        || !chain.bytes().all(|b| b.is_ascii_digit())
        || hex.len() != 40
        || !hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    Some((format!("eip155:{chain}"), address.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_caip10() {
        let a = Account::parse("eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266").unwrap();
        assert_eq!(a.network, "eip155:84532");
        assert_eq!(Account::parse("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:x").unwrap().address, "x");
        assert_eq!(Account::parse("xrpl:1:a%41").unwrap().address, "aA");
        assert!(Account::parse("xrpl:1:a%4").is_none());
        assert!(Account::parse("xrpl:1:%ff").is_none());
        assert!(Account::parse("EIP155:1:0x").is_none());
        assert!(Account::parse("eip155:1").is_none());
        assert!(evm_account("eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266").is_some());
        assert!(evm_account("eip155:1:0xf39F").is_none());
    }
}
