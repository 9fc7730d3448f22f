//! A BOLT11 writer for the tests' own invoices: a vector file's invoice taken apart into its prefix, timestamp,
//! tagged fields and signature words, changed, and written back with a fresh Bech32 checksum (BIP 173's polymod,
//! written here apart from the crate's reader). The signature is kept as it was: the reader does not check it.
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

const CHARSET: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const GENERATOR: [u32; 5] = [0x3B6A_57B2, 0x2650_8E6D, 0x1EA1_19FA, 0x3D42_33DD, 0x2A14_62B3];

/// An invoice taken apart.
#[derive(Clone, Debug)]
pub(crate) struct Parts {
    pub(crate) hrp: String,
    pub(crate) timestamp: Vec<u8>,
    pub(crate) fields: Vec<(u8, Vec<u8>)>,
    pub(crate) signature: Vec<u8>,
}

fn polymod(values: &[u8]) -> u32 {
    let mut chk = 1u32;
    for v in values {
        let top = chk >> 25;
        chk = ((chk & 0x1FF_FFFF) << 5) ^ u32::from(*v);
        for (i, g) in GENERATOR.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk
}

fn expand(hrp: &str) -> Vec<u8> {
    let mut out: Vec<u8> = hrp.bytes().map(|c| c >> 5).collect();
    out.push(0);
    out.extend(hrp.bytes().map(|c| c & 31));
    out
}

/// The words of a lower-case invoice, and its prefix.
pub(crate) fn parts(invoice: &str) -> Parts {
    let sep = invoice.rfind('1').unwrap();
    let words: Vec<u8> =
        invoice[sep + 1..].bytes().map(|c| CHARSET.iter().position(|x| *x == c).unwrap() as u8).collect();
    let data = &words[..words.len() - 6];
    let (body, signature) = data.split_at(data.len() - 104);
    let mut fields = Vec::new();
    let mut i = 7;
    while i < body.len() {
        let len = usize::from(body[i + 1]) * 32 + usize::from(body[i + 2]);
        fields.push((body[i], body[i + 3..i + 3 + len].to_vec()));
        i += 3 + len;
    }
    Parts { hrp: invoice[..sep].to_owned(), timestamp: body[..7].to_vec(), fields, signature: signature.to_vec() }
}

/// The invoice written back, with its checksum.
pub(crate) fn write(p: &Parts) -> String {
    let mut data = p.timestamp.clone();
    for (t, v) in &p.fields {
        data.extend([*t, (v.len() / 32) as u8, (v.len() % 32) as u8]);
        data.extend(v);
    }
    data.extend(&p.signature);
    let mut values = expand(&p.hrp);
    values.extend(&data);
    values.extend([0; 6]);
    let pm = polymod(&values) ^ 1;
    data.extend((0..6).map(|i| ((pm >> (5 * (5 - i))) & 31) as u8));
    format!("{}1{}", p.hrp, data.iter().map(|w| CHARSET[usize::from(*w)] as char).collect::<String>())
}

/// Bytes as 5-bit words, the last padded with zero bits.
pub(crate) fn words(bytes: &[u8]) -> Vec<u8> {
    let (mut acc, mut bits, mut out) = (0u32, 0u32, Vec::new());
    for b in bytes {
        acc = (acc << 8) | u32::from(*b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(((acc >> bits) & 31) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (5 - bits)) & 31) as u8);
    }
    out
}

/// The field types.
pub(crate) const H: u8 = 23;
pub(crate) const M: u8 = 27;

/// The invoice with every field of type `t` given these bytes.
pub(crate) fn with_field(invoice: &str, t: u8, bytes: &[u8]) -> String {
    let mut p = parts(invoice);
    for (ft, v) in &mut p.fields {
        if *ft == t {
            *v = words(bytes);
        }
    }
    write(&p)
}

/// The invoice with a second copy of its first field of type `t`.
pub(crate) fn with_repeated(invoice: &str, t: u8) -> String {
    let mut p = parts(invoice);
    let first = p.fields.iter().find(|(ft, _)| *ft == t).unwrap().clone();
    p.fields.push(first);
    write(&p)
}
