//! CAIP-10 accounts: `namespace:reference:address`.

/// A signer's CAIP-10 account, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Account {
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
    pub(crate) fn parse(account: &str) -> Option<Self> {
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

/// CAIP-10's escape, decoded: every `%` must begin an escape of two hex digits (`%4`, `%zz` and a trailing `%` are
/// broken, never kept as text), and the bytes decoded must be UTF-8. An escape is decoded once (`%2541` is `%41`).
fn percent_decode(text: &str) -> Option<String> {
    let escapes_whole = text
        .split('%')
        .skip(1)
        .all(|after| after.as_bytes().get(..2).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)));
    if !escapes_whole {
        return None;
    }
    percent_encoding::percent_decode_str(text).decode_utf8().ok().map(std::borrow::Cow::into_owned)
}

/// The EVM account form `eip155:<digits>:0x<40 hex>`: the network and the address as written.
pub(crate) fn evm_account(account: &str) -> Option<(String, String)> {
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

    fn address(account: &str) -> Option<String> {
        Account::parse(account).map(|a| a.address)
    }

    #[test]
    fn a_broken_escape_is_refused_not_kept() {
        for broken in
            ["xrpl:1:a%", "xrpl:1:a%4", "xrpl:1:a%zz", "xrpl:1:a%4g", "xrpl:1:a%g4", "xrpl:1:%%41", "xrpl:1:%41%"]
        {
            assert_eq!(address(broken), None, "{broken}");
        }
        // An escape is decoded once, and either case of hex digit is one.
        assert_eq!(address("xrpl:1:%2541").as_deref(), Some("%41"));
        assert_eq!(address("xrpl:1:%2d%2D%2e").as_deref(), Some("--."));
        // The EVM address is taken as written: its escapes are not read at all.
        assert_eq!(address("eip155:1:a%zz").as_deref(), Some("a%zz"));
    }

    #[test]
    fn a_multi_byte_escape_decodes_to_its_utf8_character_and_broken_utf8_is_refused() {
        assert_eq!(address("xrpl:1:caf%C3%A9").as_deref(), Some("caf\u{e9}"));
        assert_eq!(address("xrpl:1:%e2%82%ac").as_deref(), Some("\u{20ac}"));
        assert_eq!(address("xrpl:1:%F0%9F%98%80x").as_deref(), Some("\u{1f600}x"));
        // A lead byte alone, a lead byte without its continuation, a lone continuation, an overlong form, a
        // surrogate: none is UTF-8.
        for broken in ["xrpl:1:%C3", "xrpl:1:%C3%28", "xrpl:1:%A9", "xrpl:1:%C0%AF", "xrpl:1:%ED%A0%80"] {
            assert_eq!(address(broken), None, "{broken}");
        }
    }
}
