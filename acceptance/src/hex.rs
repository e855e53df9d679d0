//! Lowercase hex encoding (sha2 0.11 digests no longer format with `{:x}`).

/// `bytes` as lowercase hex, two digits per byte.
pub(crate) fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// `n` bytes from the OS random source, as lowercase hex.
///
/// # Panics
/// Only if the kernel's random source is unavailable, which no supported
/// platform allows once booted.
pub fn random(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
    encode(&bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_lowercase() {
        assert_eq!(super::encode(&[0x00, 0xab, 0x7f]), "00ab7f");
    }
}
